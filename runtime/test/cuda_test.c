/* cuda_test.c - the CUDA backend and mgpu* wrappers: UNAVAILABLE without a driver, and a full
 * run against a fake libcuda (path in argv[1]) checking results, error mapping and leaks. */
#include <dlfcn.h>
#include <pthread.h>

#include "runtime.h"
#include "test_util.h"

static long (*fake_live_objects)(void);
static long (*fake_launches)(void);
static int (*fake_context_depth)(void);
static uintptr_t (*fake_last_stream)(void);
static void (*fake_rendezvous_reset)(void);

/* CU_STREAM_PER_THREAD: the calling thread's default stream. */
enum { PER_THREAD_STREAM = 2 };

static hpvm_runtime_t *runtime_with_cuda_library(const char *path) {
  setenv("HPVM_CUDA_LIBRARY", path, 1);
  hpvm_runtime_options_t options = {0};
  options.thread_count = 2;
  hpvm_runtime_t *runtime;
  CHECK_OK(hpvm_runtime_create(&options, &runtime));
  return runtime;
}

static void test_missing_driver(const char *fake) {
  hpvm_runtime_t *runtime = runtime_with_cuda_library("/nonexistent/libcuda.so.1");
  hpvm_device_t *device;
  hpvm_status_t status = hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_UNAVAILABLE);
  CHECK(strstr(hpvm_status_message(status), "/nonexistent/libcuda.so.1") != NULL);
  hpvm_status_free(status);
  /* Cached: the second ask gives the same answer without probing again. */
  CHECK_CODE(hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device), HPVM_STATUS_UNAVAILABLE);
  CHECK_OK(hpvm_runtime_destroy(runtime));

  /* A driver with no devices. */
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  runtime = runtime_with_cuda_library(fake);
  CHECK_CODE(hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device), HPVM_STATUS_UNAVAILABLE);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  unsetenv("FAKE_CUDA_DEVICES");

  /* A library that is not a CUDA driver at all. */
  runtime = runtime_with_cuda_library("libc.so.6");
  status = hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_UNAVAILABLE);
  CHECK(strstr(hpvm_status_message(status), "lacks cuInit") != NULL);
  hpvm_status_free(status);
  CHECK_OK(hpvm_runtime_destroy(runtime));
}

static const char cubin[] = "FAKE-CUBIN v1";

static void test_backend(const char *fake) {
  hpvm_runtime_t *runtime = runtime_with_cuda_library(fake);
  hpvm_device_t *device;
  CHECK_OK(hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device));
  CHECK(strcmp(hpvm_rt_device_name(device), "cuda:Fake GPU") == 0);
  enum { N = 300 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
    c[i] = 0;
  }
  hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
  hpvm_rt_module_t *module;
  CHECK_OK(hpvm_rt_module_load(device, &image, &module));
  hpvm_rt_kernel_t *kernel;
  CHECK_OK(hpvm_rt_kernel_get(module, "vector_add", &kernel));
  CHECK_CODE(hpvm_rt_kernel_get(module, "missing", &kernel), HPVM_STATUS_NOT_FOUND);
  CHECK_OK(hpvm_rt_kernel_get(module, "vector_add", &kernel));
  /* Buffers through the tracker, as compiled code gets them. */
  hpvm_mem_tracker_t *tracker = hpvm_runtime_tracker(runtime);
  CHECK_OK(hpvm_mem_tracker_track(tracker, a, sizeof(a)));
  CHECK_OK(hpvm_mem_tracker_track(tracker, b, sizeof(b)));
  CHECK_OK(hpvm_mem_tracker_track(tracker, c, sizeof(c)));
  uint64_t da, db, dc;
  CHECK_OK(hpvm_mem_tracker_request(tracker, a, 0, device, HPVM_RT_ACCESS_IN, &da, NULL));
  CHECK_OK(hpvm_mem_tracker_request(tracker, b, 0, device, HPVM_RT_ACCESS_IN, &db, NULL));
  CHECK_OK(hpvm_mem_tracker_request(tracker, c, 0, device, HPVM_RT_ACCESS_OUT, &dc, NULL));
  int n = N;
  hpvm_rt_kernel_arg_t args[4] = {{8, &da}, {8, &db}, {8, &dc}, {4, &n}};
  hpvm_rt_launch_dims_t dims = {{(N + 127) / 128, 1, 1}, {128, 1, 1}, 0};
  /* A NULL value is __local memory, which only OpenCL kernels take; 0 bytes is no argument. */
  hpvm_rt_kernel_arg_t no_value[4] = {{8, &da}, {8, &db}, {8, NULL}, {4, &n}};
  CHECK_CODE(hpvm_rt_kernel_launch(kernel, &dims, no_value, 4), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_kernel_arg_t no_bytes[4] = {{8, &da}, {8, &db}, {0, &dc}, {4, &n}};
  CHECK_CODE(hpvm_rt_kernel_launch(kernel, &dims, no_bytes, 4), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 4));
  CHECK_EQ_INT(fake_last_stream(), PER_THREAD_STREAM);
  CHECK_OK(hpvm_mem_tracker_request(tracker, c, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL));
  CHECK_EQ_INT(fake_last_stream(), PER_THREAD_STREAM); /* the copy back */
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == a[i] + b[i]);
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, a));
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, b));
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, c));
  hpvm_rt_module_unload(module);

  /* Driver errors become statuses with the driver's name for them. */
  static const char not_cubin[] = "ELF?";
  hpvm_rt_module_image_t bad = {HPVM_RT_IMAGE_CUBIN, not_cubin, sizeof(not_cubin), NULL, 0};
  hpvm_status_t status = hpvm_rt_module_load(device, &bad, &module);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "CUDA_ERROR_INVALID_IMAGE") != NULL);
  hpvm_status_free(status);
  /* PTX: sized and not NUL-terminated, as gpu-module-to-binary embeds it. */
  char ptx[16];
  memcpy(ptx, "// FAKE-PTX xyzw", 16);
  hpvm_rt_module_image_t text = {HPVM_RT_IMAGE_PTX, ptx, sizeof(ptx), NULL, 0};
  CHECK_OK(hpvm_rt_module_load(device, &text, &module));
  hpvm_rt_module_unload(module);
  hpvm_rt_module_image_t bad_ptx = {HPVM_RT_IMAGE_PTX, "garbage", 7, NULL, 0};
  status = hpvm_rt_module_load(device, &bad_ptx, &module);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "fake ptxas: syntax error") != NULL);
  hpvm_status_free(status);
  hpvm_rt_module_image_t spirv = {HPVM_RT_IMAGE_SPIRV, cubin, sizeof(cubin), NULL, 0};
  CHECK_CODE(hpvm_rt_module_load(device, &spirv, &module), HPVM_STATUS_INVALID_ARGUMENT);
  uint64_t buffer;
  CHECK_OK(hpvm_rt_device_alloc(device, 64, &buffer));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, buffer, 8, a, 16));
  CHECK_EQ_INT(fake_last_stream(), PER_THREAD_STREAM);
  float back[4];
  CHECK_OK(hpvm_rt_device_copy_to_host(device, back, buffer, 8, 16));
  CHECK(back[3] == a[3]);
  /* Out-of-range and wrapping copies, stale and forged handles never reach the
   * driver (the fake would copy past its allocation). */
  CHECK_CODE(hpvm_rt_device_copy_to_device(device, buffer, 56, a, 16), HPVM_STATUS_OUT_OF_RANGE);
  CHECK_CODE(hpvm_rt_device_copy_to_host(device, back, buffer, SIZE_MAX - 4, 8),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_OK(hpvm_rt_device_free(device, buffer));
  CHECK_CODE(hpvm_rt_device_free(device, buffer), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_device_copy_to_host(device, back, buffer, 0, 4), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_device_free(device, 0x1234), HPVM_STATUS_NOT_FOUND);
  CHECK_OK(hpvm_rt_device_synchronize(device));
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(fake_live_objects(), 0);
  CHECK_EQ_INT(fake_context_depth(), 0);
}

/* Sibling nodes that two workers run at the same time: their kernels run at the same time on
 * the device (each thread's own stream; the fake runs legacy-stream work one item at a time),
 * and nothing in the runtime serializes them. Each kernel waits until the other has started. */
typedef struct sibling_t {
  hpvm_rt_kernel_t *kernel;
  hpvm_status_t status;
  uintptr_t stream;
} sibling_t;

static void *run_sibling(void *arg) {
  sibling_t *sibling = arg;
  int unused = 0;
  hpvm_rt_kernel_arg_t args[1] = {{4, &unused}};
  hpvm_rt_launch_dims_t dims = {{1, 1, 1}, {1, 1, 1}, 0};
  sibling->status = hpvm_rt_kernel_launch(sibling->kernel, &dims, args, 1);
  sibling->stream = fake_last_stream();
  return NULL;
}

static void test_siblings_overlap(const char *fake) {
  hpvm_runtime_t *runtime = runtime_with_cuda_library(fake);
  hpvm_device_t *device;
  CHECK_OK(hpvm_runtime_device_get(runtime, HPVM_RT_DEVICE_CUDA, &device));
  hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
  hpvm_rt_module_t *module;
  CHECK_OK(hpvm_rt_module_load(device, &image, &module));
  sibling_t siblings[2] = {{0}};
  CHECK_OK(hpvm_rt_kernel_get(module, "rendezvous", &siblings[0].kernel));
  siblings[1].kernel = siblings[0].kernel;
  fake_rendezvous_reset();
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    CHECK(pthread_create(&threads[i], NULL, run_sibling, &siblings[i]) == 0);
  for (int i = 0; i < 2; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK_OK(siblings[i].status);
    CHECK_EQ_INT(siblings[i].stream, PER_THREAD_STREAM);
  }
  hpvm_rt_module_unload(module);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(fake_live_objects(), 0);
}

/* What gpu-to-llvm generated host code does, through the global runtime. */
static void test_mgpu(void) {
  mgpuSetDefaultDevice(0);
  void *module = mgpuModuleLoad((void *)(uintptr_t)cubin, sizeof(cubin));
  void *function = mgpuModuleGetFunction(module, "vector_add");
  void *stream = mgpuStreamCreate();
  enum { N = 1000 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)(3 * i);
    b[i] = (float)(N - i);
  }
  void *da = mgpuMemAlloc(sizeof(a), stream, false);
  void *db = mgpuMemAlloc(sizeof(b), stream, false);
  void *dc = mgpuMemAlloc(sizeof(c), stream, true);
  mgpuMemcpy(da, a, sizeof(a), stream);
  mgpuMemcpy(db, b, sizeof(b), stream);
  mgpuMemset32(dc, 0x7f7f7f7f, N, stream);
  int n = N;
  void *params[4] = {&da, &db, &dc, &n};
  long before = fake_launches();
  mgpuLaunchKernel(function, (N + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, NULL, 4);
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  mgpuStreamSynchronize(stream);
  mgpuMemcpy(c, dc, sizeof(c), stream);
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == a[i] + b[i]);
  mgpuLaunchClusterKernel(function, 1, 1, 1, (N + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params,
                          NULL, 4);
  CHECK_EQ_INT(fake_launches(), before + 2);
  uint16_t halves[8];
  void *dh = mgpuMemAlloc(sizeof(halves), stream, false);
  mgpuMemset16(dh, 0xABCD, 8, stream);
  mgpuMemcpy(halves, dh, sizeof(halves), stream);
  CHECK_EQ_INT(halves[7], 0xABCD);
  mgpuMemFree(dh, stream);
  mgpuMemFree(da, stream);
  mgpuMemFree(db, stream);
  mgpuMemFree(dc, stream);
  mgpuMemFree(NULL, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  char ptx[16];
  memcpy(ptx, "// FAKE-PTX abcd", 16);
  module = mgpuModuleLoadJIT(ptx, 2, sizeof(ptx));
  mgpuModuleUnload(module);
  CHECK_EQ_INT(fake_live_objects(), 0);
  CHECK_EQ_INT(fake_context_depth(), 0);
}

/* An mgpu call that fails prints the error and exits 1 (generated code cannot handle it). */
static void get_missing_kernel(void *unused) {
  (void)unused;
  void *module = mgpuModuleLoad((void *)(uintptr_t)cubin, sizeof(cubin));
  mgpuModuleGetFunction(module, "no_such_kernel");
}

static void test_mgpu_error_exits(void) {
  char text[512];
  CHECK_EQ_INT(test_run_child(get_missing_kernel, NULL, text, sizeof(text)), 1);
  CHECK(strstr(text, "hpvm: error: mgpuModuleGetFunction: NOT_FOUND") != NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cuda_test path/to/libfake_cuda.so\n");
    return 2;
  }
  const char *fake = argv[1];
  void *library = dlopen(fake, RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_live_objects = dlsym(library, "fake_cuda_live_objects");
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  *(void **)&fake_context_depth = dlsym(library, "fake_cuda_context_depth");
  *(void **)&fake_last_stream = dlsym(library, "fake_cuda_last_stream");
  *(void **)&fake_rendezvous_reset = dlsym(library, "fake_cuda_rendezvous_reset");
  CHECK(fake_live_objects && fake_launches && fake_context_depth && fake_last_stream &&
        fake_rendezvous_reset);
  test_missing_driver(fake);
  test_backend(fake);
  test_siblings_overlap(fake);
  setenv("HPVM_CUDA_LIBRARY", fake, 1);
  test_mgpu();
  test_mgpu_error_exits();
  hpvm_rt_shutdown();
  CHECK_EQ_INT(fake_live_objects(), 0);
  dlclose(library);
  printf("cuda_test: OK\n");
  return 0;
}
