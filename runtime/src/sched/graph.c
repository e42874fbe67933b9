/* graph.c - runs a DAG of nodes on the pool: ready nodes concurrently, edges respected. */
#include "sched/graph.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/status.h"

typedef struct graph_node_t {
  hpvm_sched_task_t task; /* first: the pool hands us back this pointer */
  struct hpvm_rt_graph_t *graph;
  char *name;
  hpvm_rt_node_version_t *versions;
  hpvm_rt_device_kind_t *version_devices;
  uint32_t version_count;
  void *context;
  void *owned; /* freed with the node: a grid node's copy of its arguments */
  uint32_t *successors;
  uint32_t successor_count;
  uint32_t successor_capacity;
  uint32_t predecessor_count;
  _Atomic uint32_t pending; /* predecessors not finished in the current run */
} graph_node_t;

struct hpvm_rt_graph_t {
  hpvm_allocator_t allocator;
  hpvm_sched_pool_t *pool;
  hpvm_sched_runner_t runner;
  graph_node_t *nodes; /* never reallocated while running */
  uint32_t count;
  uint32_t capacity;

  _Atomic uint32_t nodes_left;
  _Atomic bool failed;
  hpvm_status_t first_error; /* guarded by mutex */
  pthread_mutex_t mutex;
  bool done; /* guarded by mutex; the pool's epoch moves after it is set */
};

hpvm_status_t hpvm_sched_graph_create(hpvm_allocator_t allocator, hpvm_sched_pool_t *pool,
                                      hpvm_sched_runner_t runner, uint32_t node_hint,
                                      hpvm_rt_graph_t **out_graph) {
  *out_graph = NULL;
  hpvm_rt_graph_t *graph;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*graph), (void **)&graph));
  graph->allocator = allocator;
  graph->pool = pool;
  graph->runner = runner;
  if (node_hint) {
    hpvm_status_t status = hpvm_allocator_calloc_array(allocator, node_hint, sizeof(graph_node_t),
                                                       (void **)&graph->nodes);
    if (status) {
      hpvm_allocator_free(allocator, graph);
      return status;
    }
    graph->capacity = node_hint;
  }
  pthread_mutex_init(&graph->mutex, NULL);
  *out_graph = graph;
  return NULL;
}

static void node_release(hpvm_allocator_t allocator, graph_node_t *node) {
  hpvm_allocator_free(allocator, node->name);
  hpvm_allocator_free(allocator, node->versions);
  hpvm_allocator_free(allocator, node->version_devices);
  hpvm_allocator_free(allocator, node->successors);
  hpvm_allocator_free(allocator, node->owned);
}

void hpvm_rt_graph_destroy(hpvm_rt_graph_t *graph) {
  if (!graph)
    return;
  for (uint32_t i = 0; i < graph->count; ++i)
    node_release(graph->allocator, &graph->nodes[i]);
  hpvm_allocator_free(graph->allocator, graph->nodes);
  pthread_mutex_destroy(&graph->mutex);
  hpvm_allocator_free(graph->allocator, graph);
}

hpvm_status_t hpvm_rt_graph_add_node(hpvm_rt_graph_t *graph, const char *name,
                                     const hpvm_rt_node_version_t *versions,
                                     uint32_t version_count, void *context, uint32_t *out_node) {
  if (!graph || !versions || version_count == 0 || !out_node)
    return HPVM_STATUS(INVALID_ARGUMENT, "graph node needs a graph, >= 1 version and out_node");
  for (uint32_t i = 0; i < version_count; ++i)
    if (!versions[i].fn || (unsigned)versions[i].device >= HPVM_RT_DEVICE_KIND_COUNT)
      return HPVM_STATUS(INVALID_ARGUMENT, "node '%s' version %u has no function or a bad device",
                         name ? name : "", i);
  if (graph->count == UINT32_MAX - 1)
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "too many graph nodes");
  if (graph->count == graph->capacity) {
    uint32_t grown = graph->capacity ? graph->capacity * 2 : 8;
    HPVM_RETURN_IF_ERROR(hpvm_allocator_grow_array(graph->allocator, (void **)&graph->nodes,
                                                   graph->capacity, grown, sizeof(graph_node_t)));
    graph->capacity = grown;
  }
  graph_node_t node;
  memset(&node, 0, sizeof(node));
  hpvm_status_t status = hpvm_allocator_strdup(graph->allocator, name, &node.name);
  if (!status)
    status = hpvm_allocator_calloc_array(graph->allocator, version_count, sizeof(*versions),
                                         (void **)&node.versions);
  if (!status)
    status = hpvm_allocator_calloc_array(graph->allocator, version_count,
                                         sizeof(hpvm_rt_device_kind_t),
                                         (void **)&node.version_devices);
  if (status) {
    node_release(graph->allocator, &node);
    return status;
  }
  memcpy(node.versions, versions, version_count * sizeof(*versions));
  for (uint32_t i = 0; i < version_count; ++i)
    node.version_devices[i] = versions[i].device;
  node.version_count = version_count;
  node.context = context;
  node.graph = graph;
  graph->nodes[graph->count] = node;
  *out_node = graph->count++;
  return NULL;
}

hpvm_status_t hpvm_sched_graph_add_owned_node(hpvm_rt_graph_t *graph, const char *name,
                                              hpvm_rt_node_fn_t fn, size_t context_size,
                                              void **out_context, const char **out_name,
                                              uint32_t *out_node) {
  if (!graph || !fn || !out_context || !out_node)
    return HPVM_STATUS(INVALID_ARGUMENT, "owned graph node needs a graph, a function, "
                                         "out_context and out_node");
  void *context;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(graph->allocator, context_size ? context_size : 1,
                                             &context));
  hpvm_rt_node_version_t version = {HPVM_RT_DEVICE_CPU, fn};
  hpvm_status_t status = hpvm_rt_graph_add_node(graph, name, &version, 1, context, out_node);
  if (status) {
    hpvm_allocator_free(graph->allocator, context);
    return status;
  }
  graph_node_t *node = &graph->nodes[*out_node];
  node->owned = context;
  *out_context = context;
  if (out_name)
    *out_name = node->name;
  return NULL;
}

hpvm_status_t hpvm_rt_graph_add_edge(hpvm_rt_graph_t *graph, uint32_t src, uint32_t dst) {
  if (!graph || src >= graph->count || dst >= graph->count)
    return HPVM_STATUS(INVALID_ARGUMENT, "edge %u -> %u: graph has %u nodes", src, dst,
                       graph ? graph->count : 0);
  if (src == dst)
    return HPVM_STATUS(INVALID_ARGUMENT, "edge %u -> %u is a self-loop", src, dst);
  graph_node_t *source = &graph->nodes[src];
  if (source->successor_count == source->successor_capacity) {
    uint32_t grown = source->successor_capacity ? source->successor_capacity * 2 : 4;
    HPVM_RETURN_IF_ERROR(hpvm_allocator_grow_array(graph->allocator, (void **)&source->successors,
                                                   source->successor_capacity, grown,
                                                   sizeof(uint32_t)));
    source->successor_capacity = grown;
  }
  source->successors[source->successor_count++] = dst;
  graph->nodes[dst].predecessor_count++;
  return NULL;
}

/* Kahn's algorithm on a scratch copy of the in-degrees: all nodes reachable = acyclic. */
static hpvm_status_t check_acyclic(hpvm_rt_graph_t *graph) {
  uint32_t *in_degree, *ready;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(graph->allocator, graph->count,
                                                   sizeof(uint32_t), (void **)&in_degree));
  hpvm_status_t status = hpvm_allocator_calloc_array(graph->allocator, graph->count,
                                                     sizeof(uint32_t), (void **)&ready);
  if (status) {
    hpvm_allocator_free(graph->allocator, in_degree);
    return status;
  }
  uint32_t ready_count = 0, visited = 0;
  for (uint32_t i = 0; i < graph->count; ++i) {
    in_degree[i] = graph->nodes[i].predecessor_count;
    if (!in_degree[i])
      ready[ready_count++] = i;
  }
  while (ready_count) {
    graph_node_t *node = &graph->nodes[ready[--ready_count]];
    ++visited;
    for (uint32_t s = 0; s < node->successor_count; ++s)
      if (--in_degree[node->successors[s]] == 0)
        ready[ready_count++] = node->successors[s];
  }
  hpvm_allocator_free(graph->allocator, in_degree);
  hpvm_allocator_free(graph->allocator, ready);
  if (visited != graph->count)
    return HPVM_STATUS(INVALID_ARGUMENT, "graph has a cycle (%u of %u nodes are on or behind it)",
                       graph->count - visited, graph->count);
  return NULL;
}

static hpvm_status_t node_invoke(void *self, uint32_t version, hpvm_rt_device_t *device) {
  graph_node_t *node = self;
  return node->versions[version].fn(node->context, device, -1);
}

typedef struct node_call_t {
  graph_node_t *node;
  hpvm_status_t result;
} node_call_t;

static void call_node(void **args) {
  node_call_t *call = args[0];
  hpvm_rt_graph_t *graph = call->node->graph;
  call->result = graph->runner.run(graph->runner.self, call->node->name,
                                   call->node->version_devices, call->node->version_count, -1,
                                   node_invoke, call->node);
}

static void node_task_run(hpvm_sched_task_t *task) {
  graph_node_t *node = (graph_node_t *)task;
  hpvm_rt_graph_t *graph = node->graph;
  if (!atomic_load(&graph->failed)) {
    /* The node's errors, returned or raised by its compiled code (hpvm_rt_check_at, which
     * would end the process on a worker thread), become the graph's. */
    node_call_t call = {node, NULL};
    void *args[1] = {&call};
    hpvm_status_t raised = hpvm_status_guarded_call(call_node, args);
    hpvm_status_t status = raised ? raised : call.result;
    if (status) {
      status = hpvm_status_annotate(status, "node '%s'", node->name ? node->name : "?");
      pthread_mutex_lock(&graph->mutex);
      if (!graph->first_error)
        graph->first_error = status;
      else
        hpvm_status_free(status);
      pthread_mutex_unlock(&graph->mutex);
      atomic_store(&graph->failed, true);
    }
  }
  /* Skipped nodes still release their successors so that the run always terminates (each
   * submit moves the pool's epoch: the waiter wakes to run it or help). */
  for (uint32_t s = 0; s < node->successor_count; ++s) {
    graph_node_t *successor = &graph->nodes[node->successors[s]];
    if (atomic_fetch_sub(&successor->pending, 1) == 1)
      hpvm_sched_pool_submit(graph->pool, &successor->task);
  }
  if (atomic_fetch_sub(&graph->nodes_left, 1) == 1) {
    /* Last node: after this unlock the waiter may free the graph; touch nothing afterwards
     * but the pool, which outlives it (the waiter idles on its epoch). */
    hpvm_sched_pool_t *pool = graph->pool;
    pthread_mutex_lock(&graph->mutex);
    graph->done = true;
    pthread_mutex_unlock(&graph->mutex);
    hpvm_sched_pool_notify(pool);
  }
}

hpvm_status_t hpvm_rt_graph_run(hpvm_rt_graph_t *graph) {
  if (!graph)
    return HPVM_STATUS(INVALID_ARGUMENT, "graph is NULL");
  if (graph->count == 0)
    return NULL;
  HPVM_RETURN_IF_ERROR(check_acyclic(graph));
  graph->done = false;
  graph->first_error = NULL;
  atomic_store(&graph->failed, false);
  atomic_store(&graph->nodes_left, graph->count);
  for (uint32_t i = 0; i < graph->count; ++i) {
    graph->nodes[i].task.run = node_task_run;
    atomic_store(&graph->nodes[i].pending, graph->nodes[i].predecessor_count);
  }
  for (uint32_t i = 0; i < graph->count; ++i)
    if (graph->nodes[i].predecessor_count == 0)
      hpvm_sched_pool_submit(graph->pool, &graph->nodes[i].task);

  /* Help while waiting: the waiter runs queued nodes itself, and, outside the pool (the host
   * thread running a root's concurrent children), the host's share of the grids its siblings
   * run on workers (else it slept while a sibling's grid ran on the workers alone: with
   * HPVM_NUM_THREADS=2, one thread). It idles on the pool's epoch, which each queued node, each
   * new grid and the graph's end move. */
  for (;;) {
    uint32_t seen = hpvm_sched_pool_epoch(graph->pool);
    pthread_mutex_lock(&graph->mutex);
    bool done = graph->done;
    pthread_mutex_unlock(&graph->mutex);
    if (done)
      break;
    if (!hpvm_sched_pool_help(graph->pool))
      hpvm_sched_pool_idle(graph->pool, seen);
  }
  hpvm_status_t status = graph->first_error;
  graph->first_error = NULL;
  return status;
}
