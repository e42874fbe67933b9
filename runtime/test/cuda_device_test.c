/* cuda_device_test.c - the CUDA backend against the real driver: PTX (JIT-compiled by the
 * driver) and cubin images of data/kernels_nvptx.c, explicit and tracked buffers, dynamic
 * shared memory, hpvm_rt_kernel_run with picked work-groups, launches from several threads,
 * and the errors a real driver gives (bad images, a huge allocation, a kernel that faults).
 * SKIPPED (exit 77) where no CUDA device is present: cuda_test covers the backend against a
 * fake driver there.  Usage: cuda_device_test kernels.ptx [kernels.cubin] */
#include <pthread.h>

#include "test_util.h"

static void check_floats(const char *what, const float *got, const float *expected, int n) {
  for (int i = 0; i < n; ++i)
    if (got[i] != expected[i]) {
      fprintf(stderr, "%s[%d] = %.9g, expected %.9g\n", what, i, got[i], expected[i]);
      exit(1);
    }
}

/* saxpy through explicit device buffers: y = a*x + y, n not a multiple of the block. */
static void run_saxpy(hpvm_rt_device_t *device, hpvm_rt_module_t *module, int n) {
  enum { BLOCK = 128 };
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  float *result = malloc(sizeof(float) * n), *expected = malloc(sizeof(float) * n);
  CHECK(x && y && result && expected);
  for (int i = 0; i < n; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = (float)(n - i);
    expected[i] = 3.0f * x[i] + y[i];
  }
  hpvm_rt_kernel_t *kernel, *same;
  CHECK_OK(hpvm_rt_kernel_get(module, "saxpy", &kernel));
  CHECK_OK(hpvm_rt_kernel_get(module, "saxpy", &same));
  CHECK(kernel == same);
  size_t bytes = sizeof(float) * (size_t)n;
  uint64_t x_buffer, y_buffer;
  CHECK_OK(hpvm_rt_device_alloc(device, bytes, &x_buffer));
  CHECK_OK(hpvm_rt_device_alloc(device, bytes, &y_buffer));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, x_buffer, 0, x, bytes));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, y_buffer, 0, y, bytes));
  float a = 3.0f;
  uint32_t count = (uint32_t)n;
  hpvm_rt_kernel_arg_t args[4] = {{8, &x_buffer}, {8, &y_buffer}, {4, &a}, {4, &count}};
  hpvm_rt_launch_dims_t dims = {{(uint32_t)(n + BLOCK - 1) / BLOCK, 1, 1}, {BLOCK, 1, 1}, 0};
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 4));
  CHECK_OK(hpvm_rt_device_copy_to_host(device, result, y_buffer, 0, bytes));
  check_floats("saxpy", result, expected, n);
  /* A partial copy at an offset. */
  float middle[10];
  CHECK_OK(hpvm_rt_device_copy_to_host(device, middle, y_buffer, (size_t)(n / 2) * sizeof(float),
                                       sizeof(middle)));
  check_floats("saxpy (partial copy)", middle, expected + n / 2, 10);
  /* Copies leaving the buffer and stale handles are refused before the driver sees them. */
  CHECK_CODE(hpvm_rt_device_copy_to_device(device, x_buffer, 8, x, bytes),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_CODE(hpvm_rt_device_copy_to_host(device, result, y_buffer, SIZE_MAX - 4, 8),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_OK(hpvm_rt_device_free(device, x_buffer));
  CHECK_OK(hpvm_rt_device_free(device, y_buffer));
  CHECK_CODE(hpvm_rt_device_free(device, y_buffer), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_device_copy_to_device(device, x_buffer, 0, x, 4), HPVM_STATUS_NOT_FOUND);
  free(x);
  free(y);
  free(result);
  free(expected);
}

/* A 2-D kernel fed through the memory tracker, as compiled code does it. */
static void run_matrix_add(hpvm_rt_device_t *device, hpvm_rt_module_t *module) {
  enum { W = 37, H = 23 };
  static float a[W * H], b[W * H], c[W * H], expected[W * H];
  for (int i = 0; i < W * H; ++i) {
    a[i] = (float)i;
    b[i] = (float)(i % 7) * 0.25f;
    c[i] = -1.0f;
    expected[i] = a[i] + b[i];
  }
  CHECK_OK(hpvm_rt_track(a, sizeof(a)));
  CHECK_OK(hpvm_rt_track(b, sizeof(b)));
  CHECK_OK(hpvm_rt_track(c, sizeof(c)));
  uint64_t ha, hb, hc;
  size_t offset;
  CHECK_OK(hpvm_rt_request_device(a, 0, device, HPVM_RT_ACCESS_IN, &ha, &offset));
  CHECK_EQ_INT(offset, 0);
  CHECK_OK(hpvm_rt_request_device(b, 0, device, HPVM_RT_ACCESS_IN, &hb, &offset));
  CHECK_OK(hpvm_rt_request_device(c, 0, device, HPVM_RT_ACCESS_OUT, &hc, &offset));
  hpvm_rt_kernel_t *kernel;
  CHECK_OK(hpvm_rt_kernel_get(module, "matrix_add", &kernel));
  uint32_t width = W, height = H;
  hpvm_rt_kernel_arg_t args[5] = {{8, &hc}, {8, &ha}, {8, &hb}, {4, &width}, {4, &height}};
  hpvm_rt_launch_dims_t dims = {{(W + 7) / 8, (H + 3) / 4, 1}, {8, 4, 1}, 0};
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 5));
  CHECK(c[0] == -1.0f); /* the host copy is stale until requested */
  CHECK_OK(hpvm_rt_request_host(c, 0, HPVM_RT_ACCESS_IN));
  check_floats("matrix_add", c, expected, W * H);
  CHECK_OK(hpvm_rt_untrack(a));
  CHECK_OK(hpvm_rt_untrack(b));
  CHECK_OK(hpvm_rt_untrack(c));
}

/* Dynamic shared memory and barriers: per-block sums of 1..n (exact in float for n < 2^12). */
static void run_block_sum(hpvm_rt_device_t *device, hpvm_rt_module_t *module) {
  enum { N = 3000, BLOCK = 256, BLOCKS = (N + BLOCK - 1) / BLOCK };
  static float x[N], sums[BLOCKS], expected[BLOCKS];
  memset(expected, 0, sizeof(expected)); /* run once per image */
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 100);
    expected[i / BLOCK] += x[i];
  }
  uint64_t xb, sb;
  CHECK_OK(hpvm_rt_device_alloc(device, sizeof(x), &xb));
  CHECK_OK(hpvm_rt_device_alloc(device, sizeof(sums), &sb));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, xb, 0, x, sizeof(x)));
  hpvm_rt_kernel_t *kernel;
  CHECK_OK(hpvm_rt_kernel_get(module, "block_sum", &kernel));
  uint32_t n = N;
  hpvm_rt_kernel_arg_t args[3] = {{8, &xb}, {8, &sb}, {4, &n}};
  hpvm_rt_launch_dims_t dims = {{BLOCKS, 1, 1}, {BLOCK, 1, 1}, BLOCK * sizeof(float)};
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 3));
  CHECK_OK(hpvm_rt_device_copy_to_host(device, sums, sb, 0, sizeof(sums)));
  check_floats("block_sum", sums, expected, BLOCKS);
  CHECK_OK(hpvm_rt_device_free(device, xb));
  CHECK_OK(hpvm_rt_device_free(device, sb));
}

/* What compiled code calls: hpvm_rt_kernel_run with tracked host buffers and picked blocks. */
static void run_kernel_site(const hpvm_rt_module_image_t *image) {
  enum { N = 100003 };
  static float x[N], y[N], expected[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 1000) * 0.25f;
    y[i] = 1.0f;
    expected[i] = 2.0f * x[i] + 1.0f;
  }
  CHECK_OK(hpvm_rt_track(x, sizeof(x)));
  CHECK_OK(hpvm_rt_track(y, sizeof(y)));
  hpvm_rt_kernel_site_t site = {"saxpy_node", "saxpy", image, NULL, NULL, NULL};
  float a = 2.0f;
  uint32_t n = N;
  hpvm_rt_kernel_param_t params[4] = {
      {HPVM_RT_PARAM_BUFFER, HPVM_RT_ACCESS_IN, 0, NULL, x},
      {HPVM_RT_PARAM_BUFFER, HPVM_RT_ACCESS_INOUT, 0, NULL, y},
      {HPVM_RT_PARAM_VALUE, 0, 4, &a, NULL},
      {HPVM_RT_PARAM_VALUE, 0, 4, &n, NULL}};
  int64_t grid[3] = {N, 1, 1};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(&site, grid, NULL, params, 4, &ran));
  CHECK_EQ_INT(ran, 1);
  CHECK_OK(hpvm_rt_request_host(y, 0, HPVM_RT_ACCESS_IN));
  check_floats("kernel_run saxpy", y, expected, N);
  CHECK_OK(hpvm_rt_untrack(x));
  CHECK_OK(hpvm_rt_untrack(y));
}

/* Several host threads launching at once (each on its own per-thread stream). */
typedef struct {
  hpvm_rt_device_t *device;
  hpvm_rt_module_t *module;
  int n;
} saxpy_job_t;

static void *saxpy_thread(void *arg) {
  saxpy_job_t *job = arg;
  for (int round = 0; round < 20; ++round)
    run_saxpy(job->device, job->module, job->n + round);
  return NULL;
}

static void run_threads(hpvm_rt_device_t *device, hpvm_rt_module_t *module) {
  enum { THREADS = 4 };
  pthread_t threads[THREADS];
  saxpy_job_t jobs[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    jobs[t] = (saxpy_job_t){device, module, 50000 + 977 * t};
    CHECK(pthread_create(&threads[t], NULL, saxpy_thread, &jobs[t]) == 0);
  }
  for (int t = 0; t < THREADS; ++t)
    CHECK(pthread_join(threads[t], NULL) == 0);
}

static void run_image(hpvm_rt_device_t *device, const hpvm_rt_module_image_t *image,
                      const char *what) {
  hpvm_rt_module_t *module;
  CHECK_OK(hpvm_rt_module_load(device, image, &module));
  run_saxpy(device, module, 1000);
  run_saxpy(device, module, 1 << 22);
  run_matrix_add(device, module);
  run_block_sum(device, module);
  run_threads(device, module);
  hpvm_rt_kernel_t *kernel;
  CHECK_CODE(hpvm_rt_kernel_get(module, "no_such_kernel", &kernel), HPVM_STATUS_NOT_FOUND);
  hpvm_rt_module_unload(module);
  run_kernel_site(image);
  printf("%s: ok\n", what);
}

/* Errors the real driver gives are statuses with its words, never a crash. */
static void run_errors(hpvm_rt_device_t *device) {
  hpvm_rt_module_t *module;
  hpvm_rt_module_image_t spirv = {HPVM_RT_IMAGE_SPIRV, "\x03\x02\x23\x07", 4, NULL, 0};
  CHECK_CODE(hpvm_rt_module_load(device, &spirv, &module), HPVM_STATUS_INVALID_ARGUMENT);
  static const char bad_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\nthis is not ptx\n";
  hpvm_rt_module_image_t ptx = {HPVM_RT_IMAGE_PTX, bad_ptx, sizeof(bad_ptx), NULL, 0};
  hpvm_status_t status = hpvm_rt_module_load(device, &ptx, &module);
  CHECK(status != NULL);
  printf("bad PTX: %s\n", hpvm_status_message(status));
  hpvm_status_free(status);
  static const char garbage[] = "not a cubin at all";
  hpvm_rt_module_image_t cubin = {HPVM_RT_IMAGE_CUBIN, garbage, sizeof(garbage), NULL, 0};
  status = hpvm_rt_module_load(device, &cubin, &module);
  CHECK(status != NULL);
  printf("bad cubin: %s\n", hpvm_status_message(status));
  hpvm_status_free(status);
  uint64_t huge;
  status = hpvm_rt_device_alloc(device, (size_t)1 << 50, &huge);
  CHECK(status != NULL);
  printf("1 PiB allocation: %s\n", hpvm_status_message(status));
  hpvm_status_free(status);
}

/* A kernel that faults: an error status naming the failure (the context is lost afterwards,
 * so this runs in a child process of its own). */
static const hpvm_rt_module_image_t *fault_image;

static void fault_body(void *unused) {
  (void)unused;
  alarm(60); /* a hang is a failure too */
  hpvm_rt_device_t *device;
  hpvm_status_t status = hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device);
  if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE)
    _exit(TEST_SKIP_CODE);
  CHECK_OK(status);
  hpvm_rt_module_t *module;
  CHECK_OK(hpvm_rt_module_load(device, fault_image, &module));
  hpvm_rt_kernel_t *kernel;
  CHECK_OK(hpvm_rt_kernel_get(module, "store_through", &kernel));
  uint64_t null_pointer = 0;
  hpvm_rt_kernel_arg_t args[1] = {{8, &null_pointer}};
  hpvm_rt_launch_dims_t dims = {{4, 1, 1}, {64, 1, 1}, 0};
  status = hpvm_rt_kernel_launch(kernel, &dims, args, 1);
  if (!status) {
    fprintf(stderr, "a kernel storing through a null pointer returned OK\n");
    _exit(1);
  }
  fprintf(stderr, "fault: %s\n", hpvm_status_message(status));
  hpvm_status_free(status);
  hpvm_rt_shutdown(); /* must not hang or crash with the context lost */
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: cuda_device_test kernels.ptx [kernels.cubin]\n");
    return 2;
  }
  size_t ptx_size, cubin_size = 0;
  char *ptx = test_read_file(argv[1], &ptx_size);
  void *cubin = argc == 3 ? test_read_file(argv[2], &cubin_size) : NULL;
  hpvm_rt_module_image_t ptx_image = {HPVM_RT_IMAGE_PTX, ptx, ptx_size, NULL, 0};
  hpvm_rt_module_image_t cubin_image = {HPVM_RT_IMAGE_CUBIN, cubin, cubin_size, NULL, 0};

  /* The fault first, in a child, before this process opens the driver (a child of a process
   * that initialized CUDA cannot use it). */
  fault_image = &ptx_image;
  char text[4096];
  int code = test_run_child(fault_body, NULL, text, sizeof(text));
  if (code == TEST_SKIP_CODE) {
    printf("SKIPPED: no CUDA device\n");
    free(ptx);
    free(cubin);
    return TEST_SKIP_CODE;
  }
  fputs(text, stdout);
  CHECK_EQ_INT(code, 0);
  CHECK(strstr(text, "fault: ") != NULL);

  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device));
  printf("device: %s\n", hpvm_rt_device_name(device));
  run_image(device, &ptx_image, "PTX image");
  if (cubin)
    run_image(device, &cubin_image, "cubin image");
  run_errors(device);
  hpvm_rt_shutdown();
  free(ptx);
  free(cubin);
  printf("cuda_device_test: OK\n");
  return 0;
}
