/* graph_test.c - task graphs: edges respected, independent nodes concurrent, errors, policies. */
#include <pthread.h>

#include "runtime.h"
#include "test_device.h"
#include "test_util.h"

/*===--- ordering -----------------------------------------------------------===*/

typedef struct order_t {
  _Atomic int clock;
  int finished_at[64];
} order_t;

typedef struct order_node_t {
  order_t *order;
  int index;
} order_node_t;

static hpvm_status_t record_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  order_node_t *node = context;
  CHECK(device != NULL && device->kind == HPVM_RT_DEVICE_CPU);
  CHECK_EQ_INT(item, -1);
  node->order->finished_at[node->index] = atomic_fetch_add(&node->order->clock, 1) + 1;
  return NULL;
}

/* A layered DAG: 5 layers of 6 nodes, each node depends on 2 nodes of the previous layer. */
static void test_ordering(hpvm_runtime_t *runtime) {
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_runtime_graph_create(runtime, 0, &graph));
  order_t order;
  memset(&order, 0, sizeof(order));
  order_node_t nodes[30];
  hpvm_rt_node_version_t version = {HPVM_RT_DEVICE_CPU, record_node};
  for (int i = 0; i < 30; ++i) {
    nodes[i].order = &order;
    nodes[i].index = i;
    uint32_t id;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "n", &version, 1, &nodes[i], &id));
    CHECK_EQ_INT(id, i);
  }
  for (int layer = 1; layer < 5; ++layer)
    for (int k = 0; k < 6; ++k) {
      CHECK_OK(hpvm_rt_graph_add_edge(graph, (uint32_t)((layer - 1) * 6 + k), (uint32_t)(layer * 6 + k)));
      CHECK_OK(hpvm_rt_graph_add_edge(graph, (uint32_t)((layer - 1) * 6 + (k + 1) % 6),
                                      (uint32_t)(layer * 6 + k)));
    }
  for (int run = 0; run < 50; ++run) { /* graphs are re-runnable */
    atomic_store(&order.clock, 0);
    memset(order.finished_at, 0, sizeof(order.finished_at));
    CHECK_OK(hpvm_rt_graph_run(graph));
    CHECK_EQ_INT(atomic_load(&order.clock), 30);
    for (int layer = 1; layer < 5; ++layer)
      for (int k = 0; k < 6; ++k) {
        int self = order.finished_at[layer * 6 + k];
        CHECK(self > order.finished_at[(layer - 1) * 6 + k]);
        CHECK(self > order.finished_at[(layer - 1) * 6 + (k + 1) % 6]);
      }
  }
  hpvm_rt_graph_destroy(graph);
}

/*===--- concurrency: two independent nodes must meet -----------------------===*/

typedef struct rendezvous_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int arrived;
} rendezvous_t;

/* Each node waits until the other has started: only a scheduler that runs independent nodes
 * at the same time finishes this graph (a sequential one would hang and hit the timeout). */
static hpvm_status_t meet(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  rendezvous_t *rendezvous = context;
  pthread_mutex_lock(&rendezvous->mutex);
  rendezvous->arrived++;
  pthread_cond_broadcast(&rendezvous->cond);
  while (rendezvous->arrived < 2)
    pthread_cond_wait(&rendezvous->cond, &rendezvous->mutex);
  pthread_mutex_unlock(&rendezvous->mutex);
  return NULL;
}

static void test_concurrency(hpvm_runtime_t *runtime) {
  rendezvous_t rendezvous = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_runtime_graph_create(runtime, 2, &graph));
  hpvm_rt_node_version_t version = {HPVM_RT_DEVICE_CPU, meet};
  uint32_t a, b;
  CHECK_OK(hpvm_rt_graph_add_node(graph, "a", &version, 1, &rendezvous, &a));
  CHECK_OK(hpvm_rt_graph_add_node(graph, "b", &version, 1, &rendezvous, &b));
  CHECK_OK(hpvm_rt_graph_run(graph));
  CHECK_EQ_INT(rendezvous.arrived, 2);
  hpvm_rt_graph_destroy(graph);
}

/*===--- errors -------------------------------------------------------------===*/

static _Atomic int ran_after_failure;

static hpvm_status_t failing_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)context;
  (void)device;
  (void)item;
  return hpvm_status_create(HPVM_STATUS_DATA_LOSS, "node broke");
}

static hpvm_status_t after_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)context;
  (void)device;
  (void)item;
  atomic_fetch_add(&ran_after_failure, 1);
  return NULL;
}

/* A node whose compiled code raises (hpvm_rt_check_at) instead of returning a status. */
static hpvm_status_t raising_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)context;
  (void)device;
  (void)item;
  hpvm_rt_check_at(hpvm_status_create(HPVM_STATUS_OUT_OF_RANGE, "grid too large"), "leaf");
  return NULL; /* not reached */
}

static void test_errors(hpvm_runtime_t *runtime) {
  hpvm_rt_graph_t *graph;
  /* A raised error becomes the graph's, whichever thread ran the node: it neither ends the
   * process nor skips the graph's bookkeeping. */
  for (int round = 0; round < 50; ++round) {
    CHECK_OK(hpvm_runtime_graph_create(runtime, 0, &graph));
    hpvm_rt_node_version_t raise = {HPVM_RT_DEVICE_CPU, raising_node};
    hpvm_rt_node_version_t after = {HPVM_RT_DEVICE_CPU, after_node};
    uint32_t r, a, b;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "raises", &raise, 1, NULL, &r));
    CHECK_OK(hpvm_rt_graph_add_node(graph, "other", &after, 1, NULL, &a));
    CHECK_OK(hpvm_rt_graph_add_node(graph, "later", &after, 1, NULL, &b));
    CHECK_OK(hpvm_rt_graph_add_edge(graph, r, b));
    hpvm_status_t raised = hpvm_rt_graph_run(graph);
    CHECK_EQ_INT(hpvm_status_code(raised), HPVM_STATUS_OUT_OF_RANGE);
    CHECK(strstr(hpvm_status_message(raised), "grid too large") != NULL);
    CHECK(strstr(hpvm_status_message(raised), "node 'raises'") != NULL);
    hpvm_status_free(raised);
    hpvm_rt_graph_destroy(graph);
  }
  atomic_store(&ran_after_failure, 0);
  CHECK_OK(hpvm_runtime_graph_create(runtime, 0, &graph));
  hpvm_rt_node_version_t fail = {HPVM_RT_DEVICE_CPU, failing_node};
  hpvm_rt_node_version_t after = {HPVM_RT_DEVICE_CPU, after_node};
  uint32_t f, s1, s2;
  CHECK_OK(hpvm_rt_graph_add_node(graph, "breaks", &fail, 1, NULL, &f));
  CHECK_OK(hpvm_rt_graph_add_node(graph, "s1", &after, 1, NULL, &s1));
  CHECK_OK(hpvm_rt_graph_add_node(graph, "s2", &after, 1, NULL, &s2));
  CHECK_OK(hpvm_rt_graph_add_edge(graph, f, s1));
  CHECK_OK(hpvm_rt_graph_add_edge(graph, s1, s2));
  hpvm_status_t status = hpvm_rt_graph_run(graph);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_DATA_LOSS);
  CHECK(strstr(hpvm_status_message(status), "node 'breaks'") != NULL);
  hpvm_status_free(status);
  CHECK_EQ_INT(atomic_load(&ran_after_failure), 0); /* successors are skipped */

  CHECK_CODE(hpvm_rt_graph_add_edge(graph, s2, s2), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_edge(graph, s2, 99), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_rt_graph_add_edge(graph, s2, f)); /* makes a cycle */
  CHECK_CODE(hpvm_rt_graph_run(graph), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_node(graph, "x", &after, 0, NULL, &s1), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_node_version_t no_fn = {HPVM_RT_DEVICE_CPU, NULL};
  CHECK_CODE(hpvm_rt_graph_add_node(graph, "x", &no_fn, 1, NULL, &s1), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_graph_destroy(graph);

  CHECK_OK(hpvm_runtime_graph_create(runtime, 0, &graph));
  CHECK_OK(hpvm_rt_graph_run(graph)); /* empty graph */
  hpvm_rt_graph_destroy(graph);
}

/*===--- policies with a (test) GPU device ---------------------------------===*/

typedef struct where_t {
  _Atomic int on_cpu;
  _Atomic int on_gpu;
} where_t;

static hpvm_status_t where_cpu(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)item;
  CHECK(device->kind == HPVM_RT_DEVICE_CPU);
  atomic_fetch_add(&((where_t *)context)->on_cpu, 1);
  return NULL;
}

static hpvm_status_t where_gpu(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)item;
  CHECK(device->kind == HPVM_RT_DEVICE_CUDA);
  /* A GPU version uses the device: the test device may be told to fail here. */
  uint64_t handle;
  HPVM_RETURN_IF_ERROR(device->vtable->buffer_alloc(device, 16, &handle));
  HPVM_RETURN_IF_ERROR(device->vtable->buffer_free(device, handle));
  atomic_fetch_add(&((where_t *)context)->on_gpu, 1);
  return NULL;
}

static void run_two_version_node(hpvm_runtime_t *runtime, where_t *where, const char *name) {
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_runtime_graph_create(runtime, 1, &graph));
  hpvm_rt_node_version_t versions[2] = {{HPVM_RT_DEVICE_CUDA, where_gpu},
                                        {HPVM_RT_DEVICE_CPU, where_cpu}};
  uint32_t node;
  CHECK_OK(hpvm_rt_graph_add_node(graph, name, versions, 2, where, &node));
  hpvm_status_t status = hpvm_rt_graph_run(graph);
  hpvm_rt_graph_destroy(graph);
  CHECK_OK(status);
}

static void test_policies(void) {
  /* Dynamic: the GPU when present and healthy, else the CPU. */
  {
    hpvm_runtime_options_t options = {0};
    options.thread_count = 2;
    options.only_given_devices = true; /* no CUDA device at all */
    hpvm_runtime_t *runtime;
    CHECK_OK(hpvm_runtime_create(&options, &runtime));
    where_t where = {0, 0};
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 1);
    CHECK_EQ_INT(atomic_load(&where.on_gpu), 0);
    CHECK_OK(hpvm_runtime_destroy(runtime));
  }
  {
    hpvm_runtime_options_t options = {0};
    options.thread_count = 2;
    options.only_given_devices = true;
    test_device_t *gpu = test_device_create(hpvm_allocator_system(), HPVM_RT_DEVICE_CUDA);
    options.devices[HPVM_RT_DEVICE_CUDA] = &gpu->base;
    hpvm_runtime_t *runtime;
    CHECK_OK(hpvm_runtime_create(&options, &runtime));
    where_t where = {0, 0};
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_gpu), 1);
    /* The GPU fails: the node still completes on the CPU and the GPU is not used again. */
    atomic_store(&gpu->fail_at, atomic_load(&gpu->calls) + 1);
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 1);
    CHECK(atomic_load(&gpu->base.failed));
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 2);
    CHECK_EQ_INT(atomic_load(&where.on_gpu), 1);
    /* Busy: a device at its in-flight limit sends work to the CPU. */
    atomic_store(&gpu->base.failed, false);
    atomic_store(&gpu->base.inflight, gpu->base.max_inflight);
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 3);
    atomic_store(&gpu->base.inflight, 0);
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_gpu), 2);

    /* Static per node: the assignment decides, and a failure is reported, not hidden. */
    CHECK_OK(hpvm_runtime_policy_set(runtime, HPVM_RT_POLICY_STATIC_NODE));
    run_two_version_node(runtime, &where, "node"); /* unassigned: first version (GPU) */
    CHECK_EQ_INT(atomic_load(&where.on_gpu), 3);
    CHECK_OK(hpvm_runtime_policy_assign(runtime, "node", HPVM_RT_DEVICE_CPU));
    run_two_version_node(runtime, &where, "node");
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 4);
    CHECK_OK(hpvm_runtime_policy_assign(runtime, "node", HPVM_RT_DEVICE_CUDA));
    atomic_store(&gpu->fail_at, atomic_load(&gpu->calls) + 1);
    hpvm_rt_graph_t *graph;
    CHECK_OK(hpvm_runtime_graph_create(runtime, 1, &graph));
    hpvm_rt_node_version_t versions[2] = {{HPVM_RT_DEVICE_CUDA, where_gpu},
                                          {HPVM_RT_DEVICE_CPU, where_cpu}};
    uint32_t node;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "node", versions, 2, &where, &node));
    CHECK_CODE(hpvm_rt_graph_run(graph), HPVM_STATUS_UNAVAILABLE);
    hpvm_rt_graph_destroy(graph);
    CHECK_EQ_INT(atomic_load(&where.on_cpu), 4);

    /* Policies without assignments say so. */
    CHECK_OK(hpvm_runtime_policy_set(runtime, HPVM_RT_POLICY_STATIC_ITEM));
    CHECK_CODE(hpvm_runtime_policy_assign(runtime, "node", HPVM_RT_DEVICE_CPU),
               HPVM_STATUS_UNIMPLEMENTED);
    CHECK_CODE(hpvm_runtime_policy_set(runtime, (hpvm_rt_policy_kind_t)17),
               HPVM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(hpvm_runtime_destroy(runtime));
  }
  /* A static policy on a missing device reports UNAVAILABLE instead of crashing. */
  {
    hpvm_runtime_options_t options = {0};
    options.thread_count = 1;
    options.has_policy = true;
    options.policy = HPVM_RT_POLICY_STATIC_NODE;
    options.only_given_devices = true;
    hpvm_runtime_t *runtime;
    CHECK_OK(hpvm_runtime_create(&options, &runtime));
    hpvm_rt_graph_t *graph;
    CHECK_OK(hpvm_runtime_graph_create(runtime, 1, &graph));
    where_t where = {0, 0};
    hpvm_rt_node_version_t gpu_only = {HPVM_RT_DEVICE_CUDA, where_gpu};
    uint32_t node;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "gpu-only", &gpu_only, 1, &where, &node));
    CHECK_CODE(hpvm_rt_graph_run(graph), HPVM_STATUS_UNAVAILABLE);
    hpvm_rt_graph_destroy(graph);
    CHECK_OK(hpvm_runtime_destroy(runtime));
  }
}

/*===--- nodes that use parallel-for and nested graphs ----------------------===*/

typedef struct nested_graph_t {
  hpvm_runtime_t *runtime;
  _Atomic int64_t instances;
} nested_graph_t;

static void add_instances(void *context, const hpvm_rt_instance_range_t *range) {
  atomic_fetch_add(&((nested_graph_t *)context)->instances, range->end[0] - range->begin[0]);
}

static hpvm_status_t leaf_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  nested_graph_t *nested = context;
  int64_t extent = 1000;
  return hpvm_runtime_parallel_for(nested->runtime, 1, &extent, add_instances, nested);
}

static hpvm_status_t internal_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  nested_graph_t *nested = context;
  hpvm_rt_graph_t *graph;
  HPVM_RETURN_IF_ERROR(hpvm_runtime_graph_create(nested->runtime, 4, &graph));
  hpvm_rt_node_version_t leaf = {HPVM_RT_DEVICE_CPU, leaf_node};
  uint32_t ids[4];
  for (int i = 0; i < 4; ++i)
    CHECK_OK(hpvm_rt_graph_add_node(graph, "leaf", &leaf, 1, nested, &ids[i]));
  CHECK_OK(hpvm_rt_graph_add_edge(graph, ids[0], ids[3]));
  hpvm_status_t status = hpvm_rt_graph_run(graph);
  hpvm_rt_graph_destroy(graph);
  return status;
}

static void test_hierarchy(hpvm_runtime_t *runtime) {
  nested_graph_t nested = {runtime, 0};
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_runtime_graph_create(runtime, 8, &graph));
  hpvm_rt_node_version_t internal = {HPVM_RT_DEVICE_CPU, internal_node};
  for (int i = 0; i < 8; ++i) {
    uint32_t id;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "internal", &internal, 1, &nested, &id));
  }
  CHECK_OK(hpvm_rt_graph_run(graph));
  CHECK_EQ_INT(atomic_load(&nested.instances), 8 * 4 * 1000);
  hpvm_rt_graph_destroy(graph);
}

/*===--- the caller helps its nodes' grids -----------------------------------===*/

/* hpvm_rt_graph_run's caller, a thread outside the pool, runs chunks of the grids that its
 * graph's nodes start on workers: each instance of the grid node waits (10 s at most) until the
 * caller and a worker have both run one, so a worker alone times out (the caller, done with the
 * other node, slept before). Rounds where the caller took the grid node itself prove nothing
 * and repeat until a worker has taken it (a spinning worker soon does). */
enum { SIBLING_INSTANCES = 20000 };
typedef struct sibling_t {
  hpvm_runtime_t *runtime;
  pthread_t caller;
  _Atomic int by_caller, by_worker, timed_out, grid_on_worker;
} sibling_t;

static void sibling_body(void *context, const hpvm_rt_instance_range_t *range) {
  (void)range;
  sibling_t *s = context;
  atomic_fetch_add(pthread_equal(pthread_self(), s->caller) ? &s->by_caller : &s->by_worker, 1);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (!atomic_load(&s->timed_out) &&
         (atomic_load(&s->by_caller) == 0 || atomic_load(&s->by_worker) == 0)) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      atomic_store(&s->timed_out, 1);
      break;
    }
    sched_yield();
  }
}

static hpvm_status_t grid_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  sibling_t *s = context;
  if (!pthread_equal(pthread_self(), s->caller))
    atomic_store(&s->grid_on_worker, 1);
  int64_t extent = SIBLING_INSTANCES;
  return hpvm_runtime_parallel_for(s->runtime, 1, &extent, sibling_body, s);
}

static hpvm_status_t quick_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)context;
  (void)device;
  (void)item;
  return NULL;
}

static void test_caller_helps_grids(hpvm_runtime_t *runtime) {
  for (int round = 0; round < 200; ++round) {
    sibling_t s = {runtime, pthread_self(), 0, 0, 0, 0};
    hpvm_rt_graph_t *graph;
    CHECK_OK(hpvm_runtime_graph_create(runtime, 2, &graph));
    hpvm_rt_node_version_t grid = {HPVM_RT_DEVICE_CPU, grid_node};
    hpvm_rt_node_version_t quick = {HPVM_RT_DEVICE_CPU, quick_node};
    uint32_t a, b;
    CHECK_OK(hpvm_rt_graph_add_node(graph, "grid", &grid, 1, &s, &a));
    CHECK_OK(hpvm_rt_graph_add_node(graph, "quick", &quick, 1, &s, &b));
    CHECK_OK(hpvm_rt_graph_run(graph));
    hpvm_rt_graph_destroy(graph);
    CHECK(!atomic_load(&s.timed_out));
    if (atomic_load(&s.grid_on_worker))
      return;
  }
  CHECK(!"a worker never took the grid node in 200 rounds");
}

int main(void) {
  uint32_t thread_counts[] = {1, 2, 4};
  for (int t = 0; t < 3; ++t) {
    test_allocator_t state = {0};
    hpvm_runtime_options_t options = {0};
    options.allocator = test_allocator_make(&state);
    options.thread_count = thread_counts[t];
    options.only_given_devices = true;
    hpvm_runtime_t *runtime;
    CHECK_OK(hpvm_runtime_create(&options, &runtime));
    test_ordering(runtime);
    if (thread_counts[t] >= 2)
      test_concurrency(runtime);
    if (thread_counts[t] == 2)
      test_caller_helps_grids(runtime);
    test_errors(runtime);
    test_hierarchy(runtime);
    CHECK_OK(hpvm_runtime_destroy(runtime));
    CHECK_EQ_INT(atomic_load(&state.live), 0);
  }
  test_policies();
  printf("graph_test: OK\n");
  return 0;
}
