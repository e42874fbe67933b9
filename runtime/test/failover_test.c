/* failover_test.c - a device that fails while a node's kernel runs, against the fake libcuda
 * (path in argv[1]; its FAKE_CUDA_FAIL_LAUNCH=N makes launch N fault after it ran): the call
 * reports that the CPU version must run, the data the kernel started from is what the CPU
 * version finds (nothing the failed kernel wrote survives, nothing is lost), one warning names
 * the device and the error, and the device is not used again until the runtime restarts. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "kernel_run_test.h"
#include "runtime.h"

static long (*fake_launches)(void);

static const char cubin[] = "FAKE-CUBIN failover_test";
static const hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
static hpvm_rt_kernel_site_t scale_site = {"scale", "scale_even", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t fault_site = {"faulty", "fault", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t vadd_site = {"vadd", "vector_add", &image, NULL, NULL, NULL};

enum { N = 64 };

static hpvm_device_t *cuda_device_for_test(void) {
  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device));
  return device;
}

/* Makes the next launch of the process fault. */
static void fail_next_launch(void) {
  char text[32];
  snprintf(text, sizeof(text), "%ld", fake_launches() + 1);
  setenv("FAKE_CUDA_FAIL_LAUNCH", text, 1);
}

/* scale_even on a tracked buffer, or what its CPU version does when the call says so. */
static int32_t scale(float *data) {
  long n = N;
  hpvm_rt_kernel_param_t params[2] = {OUT(data, 0), VALUE(n)};
  int32_t ran = run_site(&scale_site, N, 1, 1, params, 2);
  if (!ran) {
    CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_INOUT));
    for (int i = 0; i < N; i += 2)
      data[i] *= 2.0f;
  }
  return ran;
}

/* An object that is both input and output and lives on the device (the first launch left
 * the newest copy there): the failed launch starts from it and doubles it on the device, yet
 * the CPU version must double the data from before that launch. */
static void test_tracked(void) {
  static float data[N];
  for (int i = 0; i < N; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  char text[8192];
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(scale(data), 1);
  fail_next_launch();
  CHECK_EQ_INT(scale(data), 0);
  unsetenv("FAKE_CUDA_FAIL_LAUNCH");
  long launches = fake_launches();
  CHECK_EQ_INT(scale(data), 0); /* the device failed: not used again */
  CHECK_EQ_INT(fake_launches(), launches);
  capture_end(&capture, text, sizeof(text));
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  for (int i = 0; i < N; ++i)
    CHECK(data[i] == (i % 2 == 0 ? 8.0f : 1.0f) * (float)i);
  CHECK_EQ_INT(count_occurrences(text, "hpvm: warning:"), 1);
  CHECK_CONTAINS(text, "hpvm: warning: node 'scale': kernel 'scale_even' failed on cuda:Fake GPU "
                       "(UNKNOWN: cuStreamSynchronize failed: ");
  CHECK_CONTAINS(text, "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK_CONTAINS(text, "the node runs again on the CPU from its inputs, and cuda:Fake GPU "
                       "is not used again in this run");
  CHECK_CONTAINS(text, "hpvm-trace: scale on cuda:0\n");
  CHECK_CONTAINS(text, "hpvm-trace: scale falls back to cpu: cuda:Fake GPU failed: ");
  CHECK_CONTAINS(text, "hpvm-trace: scale falls back to cpu: cuda:Fake GPU failed earlier");
  CHECK(atomic_load(&cuda_device_for_test()->failed));
  CHECK_OK(hpvm_rt_untrack(data));
}

/* Untracked memory: what the failed kernel wrote never reaches the host. */
static void test_untracked(void) {
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 1.0f;
    c[i] = -1.0f;
  }
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  char text[8192];
  capture_t capture;
  capture_begin(&capture, false);
  fail_next_launch();
  CHECK_EQ_INT(run_site(&vadd_site, N, 1, 1, params, 4), 0);
  unsetenv("FAKE_CUDA_FAIL_LAUNCH");
  capture_end(&capture, text, sizeof(text));
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == -1.0f);
  CHECK_EQ_INT(count_occurrences(text, "hpvm: warning:"), 1);
  CHECK_CONTAINS(text, "kernel 'vector_add' failed on cuda:Fake GPU");
}

/* With HPVM_FAILOVER=0 a kernel that fails after starting is the node's error, and the
 * device stays in use. */
static void test_failover_off(void) {
  hpvm_rt_shutdown();
  setenv("HPVM_FAILOVER", "0", 1);
  static float data[N];
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t params[1] = {INOUT(data, 0)};
  const int64_t grid[3] = {N, 1, 1};
  int32_t ran = -1;
  hpvm_status_t status = hpvm_rt_kernel_run(&fault_site, grid, NULL, params, 1, &ran);
  CHECK_EQ_INT(ran, 0);
  CHECK(status != NULL);
  CHECK(strstr(hpvm_status_message(status), "CUDA_ERROR_LAUNCH_FAILED") != NULL);
  CHECK(strstr(hpvm_status_message(status), "node 'faulty'") != NULL);
  hpvm_status_free(status);
  CHECK(!atomic_load(&cuda_device_for_test()->failed));
  CHECK_OK(hpvm_rt_untrack(data));
  setenv("HPVM_FAILOVER", "2", 1);
  hpvm_rt_shutdown();
  status = hpvm_rt_init();
  CHECK(status && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "HPVM_FAILOVER='2': expected a decimal integer from "
                                             "0 to 1") != NULL);
  hpvm_status_free(status);
  unsetenv("HPVM_FAILOVER");
}

/* A restarted runtime opens the device afresh. */
static void test_restart(void) {
  static float a[N], b[N], c[N];
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  hpvm_rt_shutdown();
  CHECK_EQ_INT(run_site(&vadd_site, N, 1, 1, params, 4), 1);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: failover_test path/to/libfake_cuda.so\n");
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  CHECK(fake_launches != NULL);
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_FAILOVER");
  setenv("HPVM_CUDA_LIBRARY", argv[1], 1);
  test_tracked();
  hpvm_rt_shutdown();
  test_untracked();
  test_failover_off();
  test_restart();
  hpvm_rt_shutdown();
  dlclose(library);
  printf("failover_test: OK\n");
  return 0;
}
