/* kernel_run_opencl_test.c - hpvm_rt_kernel_run on the real OpenCL device (PoCL here) with
 * kernel_run.cl as SPIR-V (argv[1]), and the choice between it and the fake libcuda (argv[2]).
 * SKIPPED (exit 77) only when no OpenCL device exists. */
#include <dlfcn.h>

#include "device/opencl/opencl_device.h"
#include "kernel_run_test.h"

static long (*fake_launches)(void);
static hpvm_rt_module_image_t spirv; /* SPIR-V only: the runtime translates it for PoCL */
static const char cubin[] = "FAKE-CUBIN kernel_run_opencl_test";
static const hpvm_rt_module_image_t fake_cubin = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL,
                                                  0};

static hpvm_rt_kernel_site_t saxpy_site = {"saxpy", "saxpy", NULL, &spirv, NULL, NULL};
static hpvm_rt_kernel_site_t fill_site = {"fill", "fill3d", NULL, &spirv, NULL, NULL};
static hpvm_rt_kernel_site_t scale_site = {"scale", "scale_even", NULL, &spirv, NULL, NULL};
static hpvm_rt_kernel_site_t tile_site = {"tile", "tile_sums", NULL, &spirv, NULL, NULL};
/* Both images: CUDA first when it has the kernel. */
static hpvm_rt_kernel_site_t vadd_site = {"vadd", "vector_add", &fake_cubin, &spirv, NULL, NULL};
/* The fake CUDA module has no saxpy: OpenCL runs it. */
static hpvm_rt_kernel_site_t both_saxpy_site = {"both_saxpy", "saxpy", &fake_cubin, &spirv, NULL, NULL};

static hpvm_device_t *opencl_device(void) {
  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_OPENCL, &device));
  return device;
}

static size_t live_buffers(void) { return hpvm_buffer_registry_count(&opencl_device()->buffers); }

static void test_saxpy(void) {
  enum { N = 1000 }; /* not a multiple of the work-group size */
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = 0.5f * (float)i;
    y[i] = (float)(N - i);
  }
  float a = 3.0f;
  long n = N;
  hpvm_rt_kernel_param_t params[4] = {INOUT(y, sizeof(y)), IN(x, sizeof(x)), VALUE(a), VALUE(n)};
  CHECK_EQ_INT(run_site(&saxpy_site, N, 1, 1, params, 4), 1);
  for (int i = 0; i < N; ++i)
    if (y[i] != 3.0f * x[i] + (float)(N - i)) {
      fprintf(stderr, "saxpy[%d] = %f, expected %f\n", i, y[i], 3.0f * x[i] + (float)(N - i));
      exit(1);
    }
  CHECK_EQ_INT(live_buffers(), 0);
}

static void test_fill3d(void) {
  static int out[37 * 23 * 5];
  const long shapes[3][3] = {{37, 5, 3}, {37, 23, 1}, {1000 / 37, 1, 1}};
  for (int s = 0; s < 3; ++s) {
    long nx = shapes[s][0], ny = shapes[s][1], nz = shapes[s][2];
    memset(out, 0xff, sizeof(out));
    hpvm_rt_kernel_param_t params[4] = {OUT(out, sizeof(out)), VALUE(nx), VALUE(ny), VALUE(nz)};
    CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
    for (long z = 0; z < nz; ++z)
      for (long yy = 0; yy < ny; ++yy)
        for (long xx = 0; xx < nx; ++xx)
          CHECK_EQ_INT(out[(z * ny + yy) * nx + xx], xx + 100 * yy + 10000 * z);
    CHECK_EQ_INT(out[nx * ny * nz], -1); /* the partial work-groups wrote nothing past it */
  }
  /* Given work-groups. */
  long nx = 32, ny = 4, nz = 2;
  hpvm_rt_kernel_param_t params[4] = {OUT(out, sizeof(out)), VALUE(nx), VALUE(ny), VALUE(nz)};
  const int64_t grid[3] = {32, 4, 2}, block[3] = {16, 2, 2};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(&fill_site, grid, block, params, 4, &ran));
  CHECK_EQ_INT(ran, 1);
  CHECK_EQ_INT(out[(1 * ny + 3) * nx + 31], 31 + 300 + 10000);
}

/* WORKGROUP parameters are __local arguments of the sizes given. */
static void test_workgroup(void) {
  enum { N = 1000, TILE = 64, TILES = (N + TILE - 1) / TILE };
  static float x[N], sums[TILES];
  for (int i = 0; i < N; ++i)
    x[i] = (float)(i % 7);
  long n = N;
  hpvm_rt_kernel_param_t params[5] = {IN(x, sizeof(x)), OUT(sums, sizeof(sums)), VALUE(n),
                                      WORKGROUP(TILE * sizeof(float)),
                                      WORKGROUP(TILE * sizeof(int))};
  const int64_t grid[3] = {TILES * TILE, 1, 1}, block[3] = {TILE, 1, 1};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(&tile_site, grid, block, params, 5, &ran));
  CHECK_EQ_INT(ran, 1);
  for (int t = 0; t < TILES; ++t) {
    float sum = 0.0f;
    for (int k = 0; k < TILE; ++k)
      sum += t * TILE + k < N ? x[t * TILE + k] : 0.0f;
    if (sums[t] != sum) {
      fprintf(stderr, "tile_sums[%d] = %f, expected %f\n", t, sums[t], sum);
      exit(1);
    }
  }
  CHECK_EQ_INT(live_buffers(), 0);
}

/* Partly written "out" buffers keep the host's other elements; tracked interior pointers go
 * through sub-buffers when aligned and fall back (coherently) when not. */
static void test_buffers(void) {
  enum { N = 333, SKIP = 1024 }; /* 4096 bytes: a multiple of any base address alignment */
  static float data[SKIP + N];
  for (int i = 0; i < SKIP + N; ++i)
    data[i] = (float)i;
  long n = N;
  hpvm_rt_kernel_param_t untracked[2] = {OUT(data + SKIP, N * sizeof(float)), VALUE(n)};
  CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, untracked, 2), 1);
  for (int i = 0; i < N; ++i)
    CHECK(data[SKIP + i] == (i % 2 == 0 ? 2.0f : 1.0f) * (float)(SKIP + i));

  for (int i = 0; i < SKIP + N; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t interior[2] = {OUT(data + SKIP, 0), VALUE(n)};
  CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, interior, 2), 1);
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  for (int i = 0; i < SKIP + N; ++i)
    CHECK(data[i] == (i >= SKIP && (i - SKIP) % 2 == 0 ? 2.0f : 1.0f) * (float)i);

  /* 4 bytes in: no sub-buffer can start there. */
  CHECK(hpvm_opencl_device_base_align(opencl_device()) > 4);
  long m = 16;
  hpvm_rt_kernel_param_t misaligned[2] = {OUT(data + 1, 16 * sizeof(float)), VALUE(m)};
  char text[8192];
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(&scale_site, 16, 1, 1, misaligned, 2), 0);
  capture_end(&capture, text, sizeof(text));
  CHECK_CONTAINS(text, "hpvm-trace: scale falls back to cpu: parameter 0 points 4 bytes into its "
                       "tracked object, not a multiple of the base address alignment");
  CHECK_CONTAINS(text, "hpvm: warning: node 'scale': kernel 'scale_even' cannot run on opencl:");

  /* A work-group larger than the device takes: the kernel never starts, the requested tracked
   * object is the host's again, and the CPU version's writes stay. */
  const int64_t grid[3] = {1 << 16, 1, 1}, block[3] = {1 << 16, 1, 1};
  hpvm_rt_kernel_param_t whole[2] = {INOUT(data, 0), VALUE(n)};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(&scale_site, grid, block, whole, 2, &ran));
  CHECK_EQ_INT(ran, 0);
  for (int i = 0; i < SKIP + N; ++i)
    data[i] = -1.0f;
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  CHECK(data[0] == -1.0f && data[SKIP + N - 1] == -1.0f);
  CHECK_OK(hpvm_rt_untrack(data));

  /* Untracked aliases: the same pointer shares one buffer; 4 bytes apart cannot on OpenCL. */
  static float alias[64];
  for (int i = 0; i < 64; ++i)
    alias[i] = 1.0f;
  float one = 1.0f;
  long count = 64;
  hpvm_rt_kernel_param_t same[4] = {INOUT(alias, sizeof(alias)), IN(alias, sizeof(alias)),
                                    VALUE(one), VALUE(count)};
  CHECK_EQ_INT(run_site(&saxpy_site, 64, 1, 1, same, 4), 1);
  CHECK(alias[0] == 2.0f && alias[63] == 2.0f);
  hpvm_rt_kernel_param_t shifted[4] = {INOUT(alias + 1, 63 * sizeof(float)),
                                       IN(alias, sizeof(alias)), VALUE(one), VALUE(count)};
  CHECK_EQ_INT(run_site(&saxpy_site, 63, 1, 1, shifted, 4), 0);
  CHECK(alias[1] == 2.0f); /* untouched */
  CHECK_EQ_INT(live_buffers(), 0);
}

/* CUDA first when the site has an image and the kernel, else OpenCL; HPVM_DEVICE forces. */
static void test_choice(const char *fake) {
  setenv("HPVM_CUDA_LIBRARY", fake, 1);
  hpvm_rt_shutdown();
  static float a[100], b[100], c[100];
  for (int i = 0; i < 100; ++i) {
    a[i] = (float)i;
    b[i] = 2.0f;
  }
  int n = 100;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  long launches = fake_launches();
  char text[8192];
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(&vadd_site, 100, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 1);
  static float x[100], y[100];
  float factor = 2.0f;
  long count = 100;
  hpvm_rt_kernel_param_t saxpy[4] = {INOUT(y, sizeof(y)), IN(a, sizeof(a)), VALUE(factor),
                                     VALUE(count)};
  CHECK_EQ_INT(run_site(&both_saxpy_site, 100, 1, 1, saxpy, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 1);
  (void)x;
  CHECK(y[99] == 198.0f);
  capture_end(&capture, text, sizeof(text));
  char expected[512];
  snprintf(expected, sizeof(expected), "hpvm-trace: vadd on cuda:0\nhpvm: warning: node "
                                       "'both_saxpy' cannot run on cuda:Fake GPU");
  CHECK_CONTAINS(text, expected);
  snprintf(expected, sizeof(expected), "\nhpvm-trace: both_saxpy on %s\n",
           hpvm_rt_device_name(opencl_device()));
  CHECK_CONTAINS(text, expected);

  restart_with_device("opencl");
  for (int i = 0; i < 100; ++i)
    c[i] = 0.0f;
  CHECK_EQ_INT(run_site(&vadd_site, 100, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 1);
  CHECK(c[7] == 9.0f);
  restart_with_device("cuda");
  CHECK_EQ_INT(run_site(&saxpy_site, 100, 1, 1, saxpy, 4), 0); /* no CUDA image */
  CHECK_EQ_INT(run_site(&vadd_site, 100, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 2);
  restart_with_device(NULL);
  setenv("HPVM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  hpvm_rt_shutdown();
}

/* Two threads on one OpenCL device: the same site (its kernel object serialises argument
 * setting) and another one. */
static void *worker(void *opaque) {
  int index = (int)(intptr_t)opaque;
  enum { N = 777 };
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  int *out = malloc(40 * 8 * sizeof(int));
  uint64_t rounds = test_scaled(40);
  for (uint64_t round = 0; round < rounds; ++round) {
    for (int i = 0; i < N; ++i) {
      x[i] = (float)(i + index);
      y[i] = 1.0f;
    }
    float a = (float)(index + 1);
    long n = N;
    hpvm_rt_kernel_param_t params[4] = {INOUT(y, N * sizeof(float)), IN(x, N * sizeof(float)),
                                        VALUE(a), VALUE(n)};
    CHECK_EQ_INT(run_site(&saxpy_site, N, 1, 1, params, 4), 1);
    for (int i = 0; i < N; ++i)
      CHECK(y[i] == a * x[i] + 1.0f);
    long nx = 40, ny = 8, nz = 1;
    hpvm_rt_kernel_param_t fill[4] = {OUT(out, 40 * 8 * sizeof(int)), VALUE(nx), VALUE(ny),
                                      VALUE(nz)};
    CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, fill, 4), 1);
    CHECK_EQ_INT(out[7 * 40 + 39], 39 + 700);
  }
  free(x);
  free(y);
  free(out);
  return NULL;
}

static void test_threads(void) {
  pthread_t threads[2];
  for (intptr_t i = 0; i < 2; ++i)
    CHECK(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  CHECK_EQ_INT(live_buffers(), 0);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kernel_run_opencl_test kernel_run.spv libfake_cuda.so\n");
    return 2;
  }
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_TRACE");
  setenv("HPVM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1); /* OpenCL only, at first */
  hpvm_rt_device_t *device;
  hpvm_status_t status = hpvm_rt_device_get(HPVM_RT_DEVICE_OPENCL, &device);
  if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE) {
    printf("SKIPPED: no OpenCL device: %s\n", hpvm_status_message(status));
    hpvm_status_free(status);
    return TEST_SKIP_CODE;
  }
  CHECK_OK(status);
  printf("device: %s\n", hpvm_rt_device_name(device));
  void *library = dlopen(argv[2], RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  CHECK(fake_launches != NULL);
  size_t size;
  void *data = test_read_file(argv[1], &size);
  spirv.format = HPVM_RT_IMAGE_SPIRV;
  spirv.data = data;
  spirv.size = size;
  test_saxpy();
  test_fill3d();
  test_workgroup();
  test_buffers();
  test_threads();
  test_choice(argv[2]);
  hpvm_rt_shutdown();
  CHECK(saxpy_site.state == NULL && vadd_site.state == NULL);
  free(data);
  dlclose(library);
  printf("kernel_run_opencl_test: OK\n");
  return 0;
}
