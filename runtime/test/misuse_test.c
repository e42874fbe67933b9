/* misuse_test.c - regression tests of misuse: a hostile but careful caller of hpvm_rt.h gets a
 * status, never a crash or a hang.  Device copies are bounds-checked (overflow-safe), buffer
 * handles are checked against a registry of live buffers, and cyclic pipelines are refused. */
#include <pthread.h>

#include "runtime.h"
#include "test_device.h"
#include "test_util.h"

/* Checks the code and that the message contains `needle` (what was expected / found). */
static void check_status(hpvm_status_t status, hpvm_status_code_t code, const char *needle,
                         int line) {
  if (hpvm_status_code(status) != code || !strstr(hpvm_status_message(status), needle)) {
    fprintf(stderr, "misuse_test.c:%d: got %s (%s), expected %s containing '%s'\n", line,
            hpvm_status_code_name(hpvm_status_code(status)), hpvm_status_message(status),
            hpvm_status_code_name(code), needle);
    exit(1);
  }
  hpvm_status_free(status);
}
#define CHECK_STATUS(expr, code, needle) check_status((expr), HPVM_STATUS_##code, needle, __LINE__)

/* Defect 1: copies on every device kind are checked against the allocation. */
static void check_copy_bounds(hpvm_rt_device_t *device) {
  uint64_t buffer;
  CHECK_OK(hpvm_rt_device_alloc(device, 16, &buffer));
  char source[64], target[64];
  memset(source, 7, sizeof(source));
  /* 64 bytes at offset 8 into 16 (was a heap-buffer-overflow). */
  CHECK_STATUS(hpvm_rt_device_copy_to_device(device, buffer, 8, source, 64), OUT_OF_RANGE,
               "expected offset + size <= 16");
  /* offset + size wraps around (was a read before the buffer). */
  CHECK_STATUS(hpvm_rt_device_copy_to_host(device, target, buffer, SIZE_MAX - 4, 8), OUT_OF_RANGE,
               "leave buffer");
  CHECK_STATUS(hpvm_rt_device_copy_to_device(device, buffer, 8, source, SIZE_MAX - 4),
               OUT_OF_RANGE, "leave buffer");
  CHECK_STATUS(hpvm_rt_device_copy_to_host(device, target, buffer, 17, 0), OUT_OF_RANGE,
               "at offset 17");
  CHECK_STATUS(hpvm_rt_device_copy_to_host(device, target, buffer, 0, 17), OUT_OF_RANGE,
               "17 bytes");
  /* The edges that are inside: a whole-buffer copy, the last byte, an empty copy at the end. */
  CHECK_OK(hpvm_rt_device_copy_to_device(device, buffer, 0, source, 16));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, buffer, 15, "x", 1));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, buffer, 16, source, 0));
  memset(target, 0, sizeof(target));
  CHECK_OK(hpvm_rt_device_copy_to_host(device, target, buffer, 0, 16));
  CHECK(target[0] == 7 && target[14] == 7 && target[15] == 'x');
  /* Defect 2: a freed handle is not live any more. */
  CHECK_OK(hpvm_rt_device_free(device, buffer));
  CHECK_STATUS(hpvm_rt_device_copy_to_host(device, target, buffer, 0, 1), NOT_FOUND,
               "not a live buffer");
  CHECK_STATUS(hpvm_rt_device_free(device, buffer), NOT_FOUND, "already freed");
}

static void test_cpu_device(void) {
  hpvm_rt_device_t *cpu;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &cpu));
  check_copy_bounds(cpu);
  /* Defect 2: handles that were never allocated (a SIGSEGV before the fix), and a double free
   * (glibc's abort before the fix). */
  static char not_a_buffer[32];
  CHECK_STATUS(hpvm_rt_device_free(cpu, (uint64_t)(uintptr_t)not_a_buffer), NOT_FOUND,
               "never allocated");
  CHECK_STATUS(hpvm_rt_device_free(cpu, 0xdeadbeef), NOT_FOUND, "0xdeadbeef");
  CHECK_STATUS(hpvm_rt_device_copy_to_device(cpu, 0xdeadbeef, 0, not_a_buffer, 1), NOT_FOUND,
               "copy_to_device");
  uint64_t buffer;
  CHECK_OK(hpvm_rt_device_alloc(cpu, 100, &buffer));
  CHECK_OK(hpvm_rt_device_free(cpu, buffer));
  CHECK_STATUS(hpvm_rt_device_free(cpu, buffer), NOT_FOUND, "not a live buffer");
  /* An interior pointer is not a handle. */
  CHECK_OK(hpvm_rt_device_alloc(cpu, 100, &buffer));
  CHECK_STATUS(hpvm_rt_device_free(cpu, buffer + 8), NOT_FOUND, "not a live buffer");
  CHECK_OK(hpvm_rt_device_free(cpu, buffer));
  CHECK_STATUS(hpvm_rt_device_alloc(cpu, 0, &buffer), INVALID_ARGUMENT, "expected a size > 0");
  CHECK_OK(hpvm_rt_device_free(cpu, 0)); /* like free(NULL) */
  /* Buffers a program forgets are freed with the runtime (LSan checks it in the ASan build). */
  CHECK_OK(hpvm_rt_device_alloc(cpu, 40, &buffer));
  hpvm_rt_shutdown();
}

/* Many buffers (the registry grows, rehashes and keeps tombstones), from several threads at
 * once (TSan checks the registry's locking). */
enum { THREADS = 4 };
static void *churn(void *arg) {
  hpvm_rt_device_t *device = arg;
  uint64_t seed = (uint64_t)(uintptr_t)&device ^ 0x9e3779b97f4a7c15ull;
  enum { LIVE = 64 };
  uint64_t handles[LIVE] = {0};
  size_t sizes[LIVE] = {0};
  uint64_t rounds = test_scaled(4000);
  for (uint64_t round = 0; round < rounds; ++round) {
    unsigned slot = (unsigned)(test_random(&seed) % LIVE);
    if (handles[slot]) {
      char byte = 0;
      CHECK_OK(hpvm_rt_device_copy_to_host(device, &byte, handles[slot], sizes[slot] - 1, 1));
      CHECK(byte == (char)slot);
      CHECK_STATUS(hpvm_rt_device_copy_to_host(device, &byte, handles[slot], sizes[slot], 1),
                   OUT_OF_RANGE, "leave buffer");
      CHECK_OK(hpvm_rt_device_free(device, handles[slot]));
      handles[slot] = 0;
    } else {
      sizes[slot] = 1 + test_random(&seed) % 256;
      CHECK_OK(hpvm_rt_device_alloc(device, sizes[slot], &handles[slot]));
      char byte = (char)slot;
      CHECK_OK(hpvm_rt_device_copy_to_device(device, handles[slot], sizes[slot] - 1, &byte, 1));
    }
  }
  for (unsigned slot = 0; slot < LIVE; ++slot)
    if (handles[slot])
      CHECK_OK(hpvm_rt_device_free(device, handles[slot]));
  return NULL;
}

static void test_registry_many_threads(void) {
  hpvm_rt_device_t *cpu;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &cpu));
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; ++t)
    CHECK(pthread_create(&threads[t], NULL, churn, cpu) == 0);
  for (int t = 0; t < THREADS; ++t)
    CHECK(pthread_join(threads[t], NULL) == 0);
  CHECK_EQ_INT(hpvm_buffer_registry_count(&cpu->buffers), 0);
  hpvm_rt_shutdown();
}

/* A GPU-like device in a private runtime: the same checks, plus buffers of the memory tracker
 * (device copies of tracked objects) that the program must not free itself. */
static void test_gpu_like_device(void) {
  test_allocator_t counts = {0};
  hpvm_allocator_t allocator = test_allocator_make(&counts);
  test_device_t *gpu = test_device_create(allocator, HPVM_RT_DEVICE_CUDA);
  hpvm_runtime_options_t options;
  memset(&options, 0, sizeof(options));
  options.allocator = allocator;
  options.thread_count = 2;
  options.devices[HPVM_RT_DEVICE_CUDA] = &gpu->base;
  options.only_given_devices = true;
  hpvm_runtime_t *runtime;
  CHECK_OK(hpvm_runtime_create(&options, &runtime));
  check_copy_bounds(&gpu->base);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);

  hpvm_mem_tracker_t *tracker = hpvm_runtime_tracker(runtime);
  float data[32] = {0};
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  uint64_t handle;
  size_t offset;
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle,
                                    &offset));
  CHECK_STATUS(hpvm_rt_device_free(&gpu->base, handle), FAILED_PRECONDITION,
               "untrack the object");
  /* Reading and writing the tracker's copy inside its bounds is fine, past them is not. */
  float value = 3.0f;
  CHECK_OK(hpvm_rt_device_copy_to_device(&gpu->base, handle, sizeof(data) - sizeof(float), &value,
                                         sizeof(value)));
  CHECK_STATUS(hpvm_rt_device_copy_to_device(&gpu->base, handle, sizeof(data), &value,
                                             sizeof(value)),
               OUT_OF_RANGE, "expected offset + size <= 128");
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, data));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  /* Once untracked, the copy's handle is stale. */
  CHECK_STATUS(hpvm_rt_device_free(&gpu->base, handle), NOT_FOUND, "not a live buffer");
  /* A buffer the program never freed goes with the device; nothing leaks. */
  uint64_t forgotten;
  CHECK_OK(hpvm_rt_device_alloc(&gpu->base, 24, &forgotten));
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&counts.live), 0);
}

/*===--- Defect 3: cyclic pipelines ----------------------------------------===*/

static hpvm_status_t pass_through(void *context, hpvm_rt_device_t *device, int64_t item,
                                  const void *const *in, void *const *out) {
  (void)context;
  (void)device;
  (void)item;
  memcpy(out[0], in[0], sizeof(int));
  return NULL;
}

static uint32_t add_stage(hpvm_rt_pipeline_t *pipeline, const char *name, uint32_t inputs) {
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, pass_through};
  size_t sizes[2] = {sizeof(int), sizeof(int)};
  uint32_t stage;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, name, &version, 1, NULL, inputs, sizes, 1, sizes,
                                      &stage));
  return stage;
}

static void test_pipeline_cycles(void) {
  /* A cycle: host -> a -> b -> a.  The edge b -> a is refused, naming the stages;
   * the pipeline then has an unfed input and cannot launch, so nothing can block. */
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_rt_pipeline_create(sizeof(int), sizeof(int), 0, &pipeline));
  uint32_t a = add_stage(pipeline, "a", 2), b = add_stage(pipeline, "b", 1);
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, a, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, a, 0, b, 0));
  CHECK_STATUS(hpvm_rt_pipeline_connect(pipeline, b, 0, a, 1), INVALID_ARGUMENT,
               "closes a cycle of stages: 'b' -> 'a' -> 'b'");
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, b, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream = NULL;
  CHECK_STATUS(hpvm_rt_stream_launch(pipeline, &stream), INVALID_ARGUMENT,
               "input 1 of stage 'a' is not connected");
  CHECK(stream == NULL);
  hpvm_rt_pipeline_destroy(pipeline);

  /* A self-loop and a longer cycle: x -> y -> z -> x. */
  CHECK_OK(hpvm_rt_pipeline_create(sizeof(int), sizeof(int), 0, &pipeline));
  uint32_t x = add_stage(pipeline, "x", 2), y = add_stage(pipeline, "y", 1),
           z = add_stage(pipeline, "z", 2);
  CHECK_STATUS(hpvm_rt_pipeline_connect(pipeline, z, 0, z, 1), INVALID_ARGUMENT,
               "'z' -> 'z';");
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, x, 0, y, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, y, 0, z, 0));
  CHECK_STATUS(hpvm_rt_pipeline_connect(pipeline, z, 0, x, 1), INVALID_ARGUMENT,
               "'z' -> 'x' -> 'y' -> 'z'");
  /* Joins that are not cycles stay legal: host -> x, host -> z:1 (a diamond of sorts). */
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, x, 1));
  CHECK_STATUS(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, x, 1),
               INVALID_ARGUMENT, "already fed");
  hpvm_rt_pipeline_destroy(pipeline);

  /* An acyclic diamond still runs: host -> p -> {q, r} -> s -> host. */
  CHECK_OK(hpvm_rt_pipeline_create(sizeof(int), sizeof(int), 0, &pipeline));
  uint32_t p = add_stage(pipeline, "p", 1), q = add_stage(pipeline, "q", 1),
           r = add_stage(pipeline, "r", 1), s = add_stage(pipeline, "s", 2);
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, p, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, p, 0, q, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, p, 0, r, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, q, 0, s, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, r, 0, s, 1));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, s, 0, HPVM_RT_PIPELINE_HOST, 0));
  CHECK_OK(hpvm_rt_stream_launch(pipeline, &stream));
  for (int i = 0; i < 10; ++i)
    CHECK_OK(hpvm_rt_stream_push(stream, &i));
  for (int i = 0; i < 10; ++i) {
    int item = -1;
    CHECK_OK(hpvm_rt_stream_pop(stream, &item));
    CHECK_EQ_INT(item, i);
  }
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  hpvm_rt_shutdown();
}

int main(void) {
  test_cpu_device();
  test_registry_many_threads();
  test_gpu_like_device();
  test_pipeline_cycles();
  printf("misuse_test: OK\n");
  return 0;
}
