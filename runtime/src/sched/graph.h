/* graph.h - the task-graph executor behind hpvm_rt_graph_* (nodes + dependency edges). */
#ifndef HPVM_SCHED_GRAPH_H
#define HPVM_SCHED_GRAPH_H

#include "base/allocator.h"
#include "sched/pool.h"
#include "sched/runner.h"

/* Creates an empty graph whose nodes run on `pool` through `runner`.  The pool and runner
 * must outlive the graph. */
hpvm_status_t hpvm_sched_graph_create(hpvm_allocator_t allocator, hpvm_sched_pool_t *pool,
                                      hpvm_sched_runner_t runner, uint32_t node_hint,
                                      hpvm_rt_graph_t **out_graph);

/* Adds a node with one CPU version `fn` whose context is `context_size` zeroed bytes owned by
 * the node (freed with the graph), returned in out_context for the caller to fill before the
 * graph runs; out_name (optional) receives the node's copy of `name` (NULL when none), valid
 * as long as the graph. */
hpvm_status_t hpvm_sched_graph_add_owned_node(hpvm_rt_graph_t *graph, const char *name,
                                              hpvm_rt_node_fn_t fn, size_t context_size,
                                              void **out_context, const char **out_name,
                                              uint32_t *out_node);

#endif /* HPVM_SCHED_GRAPH_H */
