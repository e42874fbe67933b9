/* fault_test.c - fault injection: a device failing on its N-th call and an allocator failing on
 * its N-th allocation, N swept over a whole workload.  Every failure must come back as a status,
 * nothing may leak (live allocations, device buffers and modules return to zero), nothing hangs. */
#include "runtime.h"
#include "test_device.h"
#include "test_util.h"

#define ELEMENTS 256

typedef struct work_t {
  hpvm_runtime_t *runtime;
  float data[ELEMENTS];
} work_t;

static hpvm_status_t scale_on_device(work_t *work, hpvm_rt_device_t *device) {
  uint64_t handle;
  size_t offset;
  HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(hpvm_runtime_tracker(work->runtime), work->data, 0,
                                                device, HPVM_RT_ACCESS_INOUT, &handle, &offset));
  static const char image_bytes[] = "test-image";
  hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_SPIRV, image_bytes, sizeof(image_bytes), NULL, 0};
  hpvm_rt_module_t *module;
  HPVM_RETURN_IF_ERROR(hpvm_rt_module_load(device, &image, &module));
  hpvm_rt_kernel_t *kernel;
  hpvm_status_t status = hpvm_rt_kernel_get(module, "scale", &kernel);
  if (!status) {
    float factor = 2.0f;
    uint64_t count = ELEMENTS;
    hpvm_rt_kernel_arg_t args[3] = {{8, &handle}, {4, &factor}, {8, &count}};
    hpvm_rt_launch_dims_t dims = {{ELEMENTS / 64, 1, 1}, {64, 1, 1}, 0};
    status = hpvm_rt_kernel_launch(kernel, &dims, args, 3);
  }
  hpvm_rt_module_unload(module);
  if (!status)
    status = hpvm_rt_device_synchronize(device);
  return status;
}

static hpvm_status_t gpu_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)item;
  return scale_on_device(context, device);
}

static void add_one(void *context, const hpvm_rt_instance_range_t *range) {
  float *data = context;
  for (int64_t i = range->begin[0]; i < range->end[0]; ++i)
    data[i] += 1.0f;
}

static hpvm_status_t cpu_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  work_t *work = context;
  HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(hpvm_runtime_tracker(work->runtime), work->data, 0,
                                                NULL, HPVM_RT_ACCESS_INOUT, NULL, NULL));
  int64_t extent = ELEMENTS;
  return hpvm_runtime_parallel_for(work->runtime, 1, &extent, add_one, work->data);
}

static hpvm_status_t gpu_stage(void *context, hpvm_rt_device_t *device, int64_t item,
                               const void *const *in, void *const *out) {
  (void)item;
  HPVM_RETURN_IF_ERROR(scale_on_device(context, device));
  *(int64_t *)out[0] = *(const int64_t *)in[0] + 1;
  return NULL;
}

static hpvm_status_t run_graph(work_t *work) {
  hpvm_rt_graph_t *graph;
  HPVM_RETURN_IF_ERROR(hpvm_runtime_graph_create(work->runtime, 0, &graph));
  hpvm_rt_node_version_t gpu = {HPVM_RT_DEVICE_CUDA, gpu_node};
  hpvm_rt_node_version_t cpu = {HPVM_RT_DEVICE_CPU, cpu_node};
  uint32_t a, b;
  hpvm_status_t status = hpvm_rt_graph_add_node(graph, "gpu", &gpu, 1, work, &a);
  if (!status)
    status = hpvm_rt_graph_add_node(graph, "cpu", &cpu, 1, work, &b);
  if (!status)
    status = hpvm_rt_graph_add_edge(graph, a, b);
  if (!status)
    status = hpvm_rt_graph_run(graph);
  hpvm_rt_graph_destroy(graph);
  return status;
}

static hpvm_status_t run_stream(work_t *work) {
  hpvm_rt_pipeline_t *pipeline;
  HPVM_RETURN_IF_ERROR(hpvm_runtime_pipeline_create(work->runtime, 8, 8, 16, &pipeline));
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CUDA, gpu_stage};
  size_t word = 8;
  uint32_t stage;
  hpvm_status_t status =
      hpvm_rt_pipeline_add_stage(pipeline, "gpu", &version, 1, work, 1, &word, 1, &word, &stage);
  if (!status)
    status = hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, stage, 0);
  if (!status)
    status = hpvm_rt_pipeline_connect(pipeline, stage, 0, HPVM_RT_PIPELINE_HOST, 0);
  hpvm_rt_stream_t *stream = NULL;
  if (!status)
    status = hpvm_runtime_stream_launch(work->runtime, pipeline, &stream);
  hpvm_rt_pipeline_destroy(pipeline);
  if (status)
    return status;
  for (int64_t i = 0; i < 3 && !status; ++i) {
    status = hpvm_rt_stream_push(stream, &i);
    int64_t out = 0;
    if (!status)
      status = hpvm_rt_stream_pop(stream, &out);
    if (!status && out != i + 1)
      status = hpvm_status_create(HPVM_STATUS_INTERNAL, "stream returned %lld for %lld",
                                  (long long)out, (long long)i);
  }
  hpvm_status_t wait_status = hpvm_rt_stream_wait(stream);
  if (!status)
    return wait_status;
  hpvm_status_free(wait_status);
  return status;
}

/* Everything a compiled program does, stopping at the first error like compiled code. */
static hpvm_status_t workload(hpvm_runtime_t *runtime, work_t *work) {
  work->runtime = runtime;
  for (int i = 0; i < ELEMENTS; ++i)
    work->data[i] = (float)i;
  HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_track(hpvm_runtime_tracker(runtime), work->data,
                                              sizeof(work->data)));
  hpvm_status_t status = run_graph(work);
  if (!status)
    status = run_stream(work);
  if (!status)
    status = hpvm_mem_tracker_request(hpvm_runtime_tracker(runtime), work->data, 0, NULL,
                                      HPVM_RT_ACCESS_IN, NULL, NULL);
  hpvm_status_t untrack = hpvm_mem_tracker_untrack(hpvm_runtime_tracker(runtime), work->data);
  if (!status)
    return untrack;
  hpvm_status_free(untrack);
  return status;
}

typedef struct outcome_t {
  hpvm_status_code_t code;
  int64_t device_calls;
  int64_t allocations;
} outcome_t;

static outcome_t run_once(int64_t device_fail_at, int64_t allocation_fail_at) {
  test_allocator_t state = {0};
  atomic_store(&state.fail_at, allocation_fail_at);
  hpvm_allocator_t allocator = test_allocator_make(&state);
  /* The device uses its own counted allocator so allocation failures hit the runtime only. */
  test_allocator_t device_state = {0};
  test_device_t *gpu = test_device_create(test_allocator_make(&device_state), HPVM_RT_DEVICE_CUDA);
  atomic_store(&gpu->fail_at, device_fail_at);
  hpvm_runtime_options_t options = {0};
  options.allocator = allocator;
  options.thread_count = 2;
  options.has_policy = true;
  options.policy = HPVM_RT_POLICY_STATIC_NODE; /* failures must surface, not fall back */
  options.only_given_devices = true;
  options.devices[HPVM_RT_DEVICE_CUDA] = &gpu->base;
  hpvm_runtime_t *runtime = NULL;
  work_t *work = calloc(1, sizeof(work_t));
  hpvm_status_t status = hpvm_runtime_create(&options, &runtime);
  int64_t live_buffers = 0, live_modules = 0, device_calls = 0;
  if (!status) {
    status = workload(runtime, work);
    if (!status) {
      /* Correct results when nothing failed: (2x on the device + 1) then 2x, +1 per item. */
      for (int i = 0; i < ELEMENTS; ++i)
        CHECK(work->data[i] == (2.0f * (float)i + 1.0f) * 8.0f);
    }
    live_buffers = atomic_load(&gpu->live_buffers);
    live_modules = atomic_load(&gpu->live_modules);
    device_calls = atomic_load(&gpu->calls);
    hpvm_status_t destroy = hpvm_runtime_destroy(runtime);
    if (!status)
      status = destroy;
    else
      hpvm_status_free(destroy);
  }
  outcome_t outcome = {hpvm_status_code(status), device_calls, atomic_load(&state.calls)};
  hpvm_status_free(status);
  free(work);
  /* Nothing leaked: the runtime's allocations, device buffers, modules, the device itself. */
  CHECK_EQ_INT(live_buffers, 0);
  CHECK_EQ_INT(live_modules, 0);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  CHECK_EQ_INT(atomic_load(&device_state.live), 0);
  return outcome;
}

int main(void) {
  outcome_t clean = run_once(0, 0);
  CHECK_EQ_INT(clean.code, HPVM_STATUS_OK);
  CHECK(clean.device_calls > 10);
  CHECK(clean.allocations > 10);
  for (int64_t n = 1; n <= clean.device_calls; ++n) {
    outcome_t outcome = run_once(n, 0);
    if (outcome.code != HPVM_STATUS_UNAVAILABLE) {
      fprintf(stderr, "device failure at call %lld gave %s\n", (long long)n,
              hpvm_status_code_name(outcome.code));
      return 1;
    }
  }
  for (int64_t n = 1; n <= clean.allocations; ++n) {
    outcome_t outcome = run_once(0, n);
    if (outcome.code != HPVM_STATUS_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "allocation failure at call %lld gave %s\n", (long long)n,
              hpvm_status_code_name(outcome.code));
      return 1;
    }
  }
  printf("fault_test: OK (%lld device calls and %lld allocations swept)\n",
         (long long)clean.device_calls, (long long)clean.allocations);
  return 0;
}
