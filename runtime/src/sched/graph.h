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

#endif /* HPVM_SCHED_GRAPH_H */
