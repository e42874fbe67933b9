/* rt_abi_test.c - the hpvm_rt_* ABI as compiled programs use it: lazy init, environment,
 * launch/wait of roots with task graphs and parallel-for, streaming, tracking, shutdown. */
#include "test_util.h"

enum { N = 10007 };

typedef struct root_args_t {
  float *a, *b, *c;
  int64_t n;
  int64_t checksum; /* the root's output, as HPVM-C packs it into the argument struct */
  bool fail;
} root_args_t;

static void vector_add_leaf(void *context, const hpvm_rt_instance_range_t *range) {
  root_args_t *args = context;
  for (int64_t i = range->begin[0]; i < range->end[0]; ++i)
    args->c[i] = args->a[i] + args->b[i];
}

static hpvm_status_t add_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  root_args_t *args = context;
  return hpvm_rt_parallel_for(1, &args->n, vector_add_leaf, args);
}

static hpvm_status_t sum_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  root_args_t *args = context;
  if (args->fail)
    return hpvm_status_create(HPVM_STATUS_ABORTED, "asked to fail");
  int64_t sum = 0;
  for (int64_t i = 0; i < args->n; ++i)
    sum += (int64_t)args->c[i];
  args->checksum = sum;
  return NULL;
}

/* The root: an internal node with two children and an edge, like convert-hpvm-to-cpu emits. */
static hpvm_status_t root(void *opaque) {
  root_args_t *args = opaque;
  hpvm_rt_graph_t *graph;
  HPVM_RETURN_IF_ERROR(hpvm_rt_graph_create(2, &graph));
  hpvm_rt_node_version_t add = {HPVM_RT_DEVICE_CPU, add_node};
  hpvm_rt_node_version_t sum = {HPVM_RT_DEVICE_CPU, sum_node};
  uint32_t first, second;
  hpvm_status_t status = hpvm_rt_graph_add_node(graph, "add", &add, 1, args, &first);
  if (!status)
    status = hpvm_rt_graph_add_node(graph, "sum", &sum, 1, args, &second);
  if (!status)
    status = hpvm_rt_graph_add_edge(graph, first, second);
  if (!status)
    status = hpvm_rt_graph_run(graph);
  hpvm_rt_graph_destroy(graph);
  return status;
}

/* A root whose compiled code raises its error (hpvm_rt_check_at) where the launch runs it,
 * often a worker: the wait returns the error, the process goes on. */
static hpvm_status_t raising_root(void *args) {
  (void)args;
  hpvm_rt_check_at(hpvm_status_create(HPVM_STATUS_OUT_OF_RANGE, "root refused"), "root");
  return NULL; /* not reached */
}

static void run_raising_launches(void) {
  for (int round = 0; round < 100; ++round) {
    hpvm_rt_launch_t *launch;
    CHECK_OK(hpvm_rt_launch(raising_root, NULL, &launch));
    hpvm_status_t status = hpvm_rt_wait(launch);
    CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_OUT_OF_RANGE);
    CHECK(strstr(hpvm_status_message(status), "root refused") != NULL);
    hpvm_status_free(status);
  }
}

static void run_launches(int count) {
  root_args_t args[8];
  hpvm_rt_launch_t *launches[8];
  for (int l = 0; l < count; ++l) {
    args[l].a = malloc(N * sizeof(float));
    args[l].b = malloc(N * sizeof(float));
    args[l].c = calloc(N, sizeof(float));
    args[l].n = N;
    args[l].checksum = -1;
    args[l].fail = l == 3;
    for (int i = 0; i < N; ++i) {
      args[l].a[i] = (float)i;
      args[l].b[i] = (float)(l + 1);
    }
    CHECK_OK(hpvm_rt_track(args[l].a, N * sizeof(float)));
    CHECK_OK(hpvm_rt_launch(root, &args[l], &launches[l]));
  }
  for (int l = 0; l < count; ++l) {
    hpvm_status_t status = hpvm_rt_wait(launches[l]);
    if (args[l].fail) {
      CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_ABORTED);
      CHECK(strstr(hpvm_status_message(status), "node 'sum'") != NULL);
      hpvm_status_free(status);
      continue;
    }
    CHECK_OK(status);
    for (int i = 0; i < N; ++i)
      CHECK(args[l].c[i] == (float)(i + l + 1));
    CHECK_EQ_INT(args[l].checksum, (int64_t)N * (N - 1) / 2 + (int64_t)N * (l + 1));
  }
  for (int l = 0; l < count; ++l) {
    CHECK_OK(hpvm_rt_request_host(args[l].a, 0, HPVM_RT_ACCESS_INOUT));
    CHECK_OK(hpvm_rt_untrack(args[l].a));
    free(args[l].a);
    free(args[l].b);
    free(args[l].c);
  }
}

static hpvm_status_t negate(void *context, hpvm_rt_device_t *device, int64_t item,
                            const void *const *in, void *const *out) {
  (void)context;
  (void)device;
  (void)item;
  *(double *)out[0] = -*(const double *)in[0];
  return NULL;
}

static void run_stream(void) {
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_rt_pipeline_create(sizeof(double), sizeof(double), 0, &pipeline));
  size_t size = sizeof(double);
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, negate};
  uint32_t stage;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "negate", &version, 1, NULL, 1, &size, 1, &size, &stage));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, stage, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, stage, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_rt_stream_launch(pipeline, &stream));
  hpvm_rt_pipeline_destroy(pipeline);
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 16; ++i) { /* 16 pushes before popping must not block */
      double value = round * 16 + i;
      CHECK_OK(hpvm_rt_stream_push(stream, &value));
    }
    for (int i = 0; i < 16; ++i) {
      double value;
      CHECK_OK(hpvm_rt_stream_pop(stream, &value));
      CHECK(value == -(double)(round * 16 + i));
    }
  }
  CHECK_OK(hpvm_rt_stream_wait(stream));
}

static void count_leaf(void *context, const hpvm_rt_instance_range_t *range) {
  _Atomic int64_t *total = context;
  atomic_fetch_add(total, (range->end[0] - range->begin[0]) * (range->end[1] - range->begin[1]) *
                              (range->end[2] - range->begin[2]));
}

/* Replicated leaves as siblings without a task function each (hpvm_rt_graph_add_grid): every
 * grid runs exactly once per graph run, an edge still orders them, the extents are copied. */
static void run_grid_nodes(void) {
  _Atomic int64_t cells = 0, empty = 0;
  root_args_t args = {0};
  args.n = N;
  args.a = malloc(sizeof(float) * N);
  args.b = malloc(sizeof(float) * N);
  args.c = calloc(N, sizeof(float));
  for (int i = 0; i < N; ++i) {
    args.a[i] = (float)i;
    args.b[i] = 0.5f;
  }
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_rt_graph_create(0, &graph));
  int64_t extents[3] = {31, 17, 5}, nothing[1] = {0};
  uint32_t cube, add, zero, sum;
  CHECK_OK(hpvm_rt_graph_add_grid(graph, count_leaf, "cube", "counting a cube", 3, extents,
                                  &cells, &cube));
  CHECK_OK(hpvm_rt_graph_add_grid(graph, vector_add_leaf, "add", "adding", 1, &args.n, &args,
                                  &add));
  CHECK_OK(hpvm_rt_graph_add_grid(graph, count_leaf, NULL, NULL, 1, nothing, &empty, &zero));
  extents[0] = -1; /* copied: the graph still counts 31 x 17 x 5 */
  hpvm_rt_node_version_t sum_version = {HPVM_RT_DEVICE_CPU, sum_node};
  CHECK_OK(hpvm_rt_graph_add_node(graph, "sum", &sum_version, 1, &args, &sum));
  CHECK_OK(hpvm_rt_graph_add_edge(graph, add, sum));
  for (int run = 0; run < 3; ++run) {
    args.checksum = 0;
    CHECK_OK(hpvm_rt_graph_run(graph));
    CHECK_EQ_INT(atomic_load(&cells), (run + 1) * 31 * 17 * 5);
    CHECK_EQ_INT(args.checksum, (int64_t)N * (N - 1) / 2); /* (int64_t)(i + 0.5) = i */
  }
  CHECK_EQ_INT(atomic_load(&empty), 0);
  /* Bad grids are refused before anything runs, naming the node. */
  int64_t two[2] = {4, -3};
  CHECK_CODE(hpvm_rt_graph_add_grid(graph, count_leaf, "flat", NULL, 0, two, &cells, &sum),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_grid(graph, count_leaf, "deep", NULL, 4, extents, &cells, &sum),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_grid(graph, count_leaf, "negative", NULL, 2, two, &cells, &sum),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_grid(graph, NULL, "bodiless", NULL, 1, two, &cells, &sum),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_graph_add_grid(NULL, count_leaf, "orphan", NULL, 1, two, &cells, &sum),
             HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_graph_destroy(graph);
  free(args.a);
  free(args.b);
  free(args.c);
}

int main(void) {
  /* No hpvm_rt_init: the first call starts the runtime. */
  _Atomic int64_t total = 0;
  int64_t extents[3] = {31, 17, 5};
  CHECK_OK(hpvm_rt_parallel_for(3, extents, count_leaf, &total));
  CHECK_EQ_INT(atomic_load(&total), 31 * 17 * 5);
  CHECK_OK(hpvm_rt_init()); /* idempotent */
  hpvm_rt_device_t *cpu;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &cpu));
  CHECK(strcmp(hpvm_rt_device_name(cpu), "cpu") == 0);
  run_launches(8);
  run_raising_launches();
  run_stream();
  run_grid_nodes();
  CHECK_CODE(hpvm_rt_untrack(&total), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_request_host(&total, 0, HPVM_RT_ACCESS_IN), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_request_device(&total, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_device_get((hpvm_rt_device_kind_t)9, &cpu), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_launch(NULL, NULL, NULL), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_kernel_launch(NULL, NULL, NULL, 0), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_shutdown();
  hpvm_rt_shutdown(); /* safe when not running */

  /* The environment configures the next runtime; typos are errors, not silent defaults. */
  setenv("HPVM_NUM_THREADS", "three", 1);
  CHECK_CODE(hpvm_rt_init(), HPVM_STATUS_INVALID_ARGUMENT);
  setenv("HPVM_NUM_THREADS", "3", 1);
  setenv("HPVM_POLICY", "fastest", 1);
  CHECK_CODE(hpvm_rt_init(), HPVM_STATUS_INVALID_ARGUMENT);
  setenv("HPVM_POLICY", "static-node", 1);
  CHECK_OK(hpvm_rt_init());
  CHECK_EQ_INT(hpvm_rt_thread_count(), 3);
  CHECK_OK(hpvm_rt_policy_assign("add", HPVM_RT_DEVICE_CPU));
  run_launches(4);
  hpvm_rt_shutdown();

  /* One thread: launch runs the root when waited for; everything still completes. */
  setenv("HPVM_NUM_THREADS", "1", 1);
  setenv("HPVM_POLICY", "dynamic", 1);
  CHECK_EQ_INT(hpvm_rt_thread_count(), 1);
  run_launches(5);
  run_stream();
  run_grid_nodes();
  CHECK_OK(hpvm_rt_policy_set(HPVM_RT_POLICY_STATIC_ITEM));
  CHECK_CODE(hpvm_rt_policy_assign("add", HPVM_RT_DEVICE_CPU), HPVM_STATUS_UNIMPLEMENTED);
  hpvm_rt_shutdown();
  printf("rt_abi_test: OK\n");
  return 0;
}
