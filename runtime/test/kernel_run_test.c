/* kernel_run_test.c - hpvm_rt_kernel_run against the fake libcuda (path in argv[1]): parameter
 * resolution, tracked and untracked buffers, copies back, picked block sizes, fallbacks and
 * out_ran, module sharing, HPVM_DEVICE, HPVM_TRACE lines and warnings, two threads, shutdown. */
#include <dlfcn.h>

#include "kernel_run_test.h"
#include "runtime.h"
#include "test_device.h"

static long (*fake_live_objects)(void);
static long (*fake_launches)(void);
static long (*fake_module_loads)(void);
static void (*fake_last_launch)(unsigned dims[6]);
static unsigned (*fake_last_shared)(void);

static const char cubin[] = "FAKE-CUBIN kernel_run_test";
static const hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
/* Another image struct over the same data: it shares the module. */
static const hpvm_rt_module_image_t same_data = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL,
                                                 0};
static const char broken[] = "NOT A CUBIN";
static const hpvm_rt_module_image_t broken_image = {HPVM_RT_IMAGE_CUBIN, broken, sizeof(broken),
                                                    NULL, 0};

static hpvm_rt_kernel_site_t vadd_site = {"vadd", "vector_add", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t scale_site = {"scale", "scale_even", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t fill_site = {"fill", "fill3d", &same_data, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t pointers_site = {"pointers", "pointers", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t busy_site = {"busy", "no_resources", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t broken_site = {"broken", "vector_add", &broken_image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t missing_site = {"missing", "no_such_kernel", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t imageless_site = {"imageless", "vector_add", NULL, NULL, NULL, NULL};

static hpvm_device_t *cuda_device(void) {
  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device));
  return device;
}

/* Live device buffers: tracked copies plus temporaries (which must never outlive a call). */
static size_t live_buffers(void) { return hpvm_buffer_registry_count(&cuda_device()->buffers); }

static void check_last_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz) {
  unsigned dims[6];
  fake_last_launch(dims);
  const unsigned expected[6] = {gx, gy, gz, bx, by, bz};
  for (int i = 0; i < 6; ++i)
    CHECK_EQ_INT(dims[i], expected[i]);
}

/* c = a + b with untracked a, b (in) and c (out), an int value parameter. */
static void test_untracked(void) {
  enum { N = 1000 };
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 0.25f * (float)i;
    c[i] = -1.0f;
  }
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  long launches = fake_launches();
  CHECK_EQ_INT(run_site(&vadd_site, N, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 1);
  check_last_launch(4, 1, 1, 256, 1, 1);
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == a[i] + b[i]);
  CHECK_EQ_INT(live_buffers(), 0); /* the three temporaries are gone */
  CHECK(vadd_site.state != NULL);
}

/* An "out" buffer the kernel writes only in part keeps the host's other elements, tracked or
 * not: the device copy starts from the host data. */
static void test_partial_out(void) {
  enum { N = 301 };
  static float data[N];
  for (int i = 0; i < N; ++i)
    data[i] = (float)i + 0.5f;
  long n = N;
  hpvm_rt_kernel_param_t params[2] = {OUT(data, sizeof(data)), VALUE(n)};
  CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, params, 2), 1);
  for (int i = 0; i < N; ++i)
    CHECK(data[i] == (i % 2 == 0 ? 2.0f : 1.0f) * ((float)i + 0.5f));

  /* Tracked: the device copy becomes the valid one, the host is stale until requested. */
  for (int i = 0; i < N; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t tracked[2] = {OUT(data, 0), VALUE(n)};
  CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, tracked, 2), 1);
  CHECK(data[2] == 2.0f); /* not copied back yet */
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  for (int i = 0; i < N; ++i)
    CHECK(data[i] == (i % 2 == 0 ? 2.0f : 1.0f) * (float)i);
  /* An interior pointer of the tracked object: handle + offset on CUDA. */
  long rest = N - 11;
  hpvm_rt_kernel_param_t interior[2] = {INOUT(data + 11, 0), VALUE(rest)};
  CHECK_EQ_INT(run_site(&scale_site, rest, 1, 1, interior, 2), 1);
  CHECK_OK(hpvm_rt_untrack(data)); /* copies the newer device data home */
  for (int i = 0; i < N; ++i) {
    float once = (i % 2 == 0 ? 2.0f : 1.0f) * (float)i;
    CHECK(data[i] == (i >= 11 && (i - 11) % 2 == 0 ? 2.0f * once : once));
  }
  CHECK_EQ_INT(live_buffers(), 0);

  /* OUT | WRITES_ALL: the tracked device copy does not start from the host data (the fake
   * device's fresh memory is zeros), so what the kernel leaves alone is not the host's. */
  for (int i = 0; i < N; ++i)
    data[i] = (float)i + 0.5f;
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t fresh[2] = {
      buffer_param(data, 0, HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL), VALUE(n)};
  CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, fresh, 2), 1);
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  CHECK(data[1] == 0.0f && data[3] == 0.0f);
  CHECK_OK(hpvm_rt_untrack(data));
  CHECK_EQ_INT(live_buffers(), 0);

  /* A range leaving its tracked object is the caller's error. */
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t too_long[2] = {OUT(data + 1, sizeof(data)), VALUE(n)};
  const int64_t grid[3] = {N, 1, 1};
  int32_t ran = -1;
  CHECK_CODE(hpvm_rt_kernel_run(&scale_site, grid, NULL, too_long, 2, &ran),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_EQ_INT(ran, 0);
  CHECK_OK(hpvm_rt_untrack(data));
}

/* Which device pointer each buffer parameter gets. */
static void test_pointer_resolution(void) {
  static uint64_t seen[3];
  static float x[64];
  hpvm_rt_kernel_param_t same[4] = {OUT(seen, sizeof(seen)), IN(x, sizeof(x)), IN(x, sizeof(x)),
                                    IN(NULL, 0)};
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, same, 4), 1);
  CHECK(seen[0] != 0 && seen[0] == seen[1]); /* one host pointer, one device copy */
  CHECK_EQ_INT(seen[2], 0);                  /* NULL stays a null device pointer */
  /* Overlapping untracked ranges (a memref's allocated and aligned pointers) share one
   * temporary: the aligned one lies 16 bytes into it. */
  hpvm_rt_kernel_param_t overlap[4] = {OUT(seen, sizeof(seen)), IN(x, sizeof(x)),
                                       INOUT(x + 4, sizeof(x) - 16), IN(NULL, 0)};
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, overlap, 4), 1);
  CHECK_EQ_INT(seen[1] - seen[0], 16);
  /* Tracked: the tracker's device copy, plus the offset. */
  static float t[32];
  CHECK_OK(hpvm_rt_track(t, sizeof(t)));
  hpvm_rt_kernel_param_t tracked[4] = {OUT(seen, sizeof(seen)), IN(t, 0), IN(t + 2, 8),
                                       IN(x, sizeof(x))};
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, tracked, 4), 1);
  uint64_t handle;
  size_t offset;
  CHECK_OK(hpvm_rt_request_device(t, 0, cuda_device(), HPVM_RT_ACCESS_IN, &handle, &offset));
  CHECK_EQ_INT(seen[0], handle);
  CHECK_EQ_INT(seen[1], handle + 8);
  CHECK(seen[2] != handle && seen[2] != 0); /* untracked x: a temporary */
  CHECK_OK(hpvm_rt_untrack(t));
  CHECK_EQ_INT(live_buffers(), 0);
}

/* WORKGROUP parameters: CUDA kernels get the byte offsets of the buffers in the launch's
 * dynamic shared memory (16-byte aligned, in order) and the launch gets their total; more
 * than a block's 48 KiB runs the CPU version instead. */
static void test_workgroup(void) {
  static uint64_t seen[3];
  hpvm_rt_kernel_param_t params[4] = {OUT(seen, sizeof(seen)), WORKGROUP(10), WORKGROUP(100),
                                      WORKGROUP(4)};
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, params, 4), 1);
  CHECK_EQ_INT(seen[0], 0);
  CHECK_EQ_INT(seen[1], 16);
  CHECK_EQ_INT(seen[2], 128);
  CHECK_EQ_INT(fake_last_shared(), 132);
  /* 0 bytes is taken as 1; the last buffer ends exactly at the limit. */
  params[1] = WORKGROUP(0);
  params[2] = WORKGROUP(48 * 1024 - 32);
  params[3] = WORKGROUP(16);
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, params, 4), 1);
  CHECK_EQ_INT(seen[2], 48 * 1024 - 16);
  CHECK_EQ_INT(fake_last_shared(), 48 * 1024);
  /* One byte more: the CPU version runs, and nothing launched. */
  long launches = fake_launches();
  params[3] = WORKGROUP(17);
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, params, 4), 0);
  params[3] = WORKGROUP(1u << 20);
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, params, 4), 0);
  CHECK_EQ_INT(fake_launches(), launches);
  /* More than a 32-bit size per work-group is a malformed call. */
  params[3] = WORKGROUP((uint64_t)1 << 33);
  int64_t grid[3] = {1, 1, 1};
  int32_t ran = -1;
  CHECK_CODE(hpvm_rt_kernel_run(&pointers_site, grid, NULL, params, 4, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(live_buffers(), 0);
}

static void check_fill(const int *out, long nx, long ny, long nz) {
  for (long z = 0; z < nz; ++z)
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x)
        CHECK_EQ_INT(out[(z * ny + y) * nx + x], x + 100 * y + 10000 * z);
}

/* Picked block sizes (1-D 256, 2-D 16x16, 3-D 8x8x4, clamped to the grid), given ones, and
 * the grids that cannot or need not run. */
static void test_dims(void) {
  static int out[40 * 23 * 5];
  long nx = 37, ny = 5, nz = 3;
  hpvm_rt_kernel_param_t params[4] = {OUT(out, sizeof(out)), VALUE(nx), VALUE(ny), VALUE(nz)};
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
  check_last_launch(5, 1, 1, 8, 5, 3);
  check_fill(out, nx, ny, nz);
  ny = 23;
  nz = 1;
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
  check_last_launch(3, 2, 1, 16, 16, 1);
  check_fill(out, nx, ny, nz);
  nx = 100;
  ny = 1;
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
  check_last_launch(1, 1, 1, 100, 1, 1);
  check_fill(out, nx, ny, nz);
  nx = 1;
  ny = 1;
  nz = 7;
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1); /* 3-D by its z extent */
  check_last_launch(1, 1, 2, 1, 1, 4);
  check_fill(out, nx, ny, nz);

  /* Given work-groups must divide the grid. */
  nx = 40;
  ny = 5;
  nz = 3;
  int64_t grid[3] = {40, 5, 3}, block[3] = {8, 5, 1};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(&fill_site, grid, block, params, 4, &ran));
  CHECK_EQ_INT(ran, 1);
  check_last_launch(5, 1, 3, 8, 5, 1);
  check_fill(out, nx, ny, nz);
  block[0] = 7;
  CHECK_CODE(hpvm_rt_kernel_run(&fill_site, grid, block, params, 4, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(ran, 0);
  block[0] = 0; /* some 0, some not */
  CHECK_CODE(hpvm_rt_kernel_run(&fill_site, grid, block, params, 4, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  grid[1] = -5;
  CHECK_CODE(hpvm_rt_kernel_run(&fill_site, grid, NULL, params, 4, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);

  /* Nothing to run: ran, without launching. */
  long launches = fake_launches();
  CHECK_EQ_INT(run_site(&fill_site, 0, 5, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches);
  /* Past CUDA's limits: 65537 work-groups along y, or 2048-instance work-groups. */
  CHECK_EQ_INT(run_site(&fill_site, 1, 65537 * 16, 1, params, 4), 0);
  const int64_t wide[3] = {2048, 1, 1}, wide_block[3] = {2048, 1, 1};
  CHECK_OK(hpvm_rt_kernel_run(&fill_site, wide, wide_block, params, 4, &ran));
  CHECK_EQ_INT(ran, 0);
  CHECK_EQ_INT(fake_launches(), launches);
  CHECK_EQ_INT(live_buffers(), 0);
}

/* Kernels that cannot start fall back (tracked data stays coherent for the CPU version);
 * kernels that fail after starting are failover_test's. */
static void test_failures(void) {
  static float data[64];
  for (int i = 0; i < 64; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_kernel_param_t params[1] = {INOUT(data, 0)};
  CHECK_EQ_INT(run_site(&busy_site, 64, 1, 1, params, 1), 0);
  /* The CPU version writes the host copy, which must be the valid one again. */
  for (int i = 0; i < 64; ++i)
    data[i] = -(float)i;
  CHECK_OK(hpvm_rt_request_host(data, 0, HPVM_RT_ACCESS_IN));
  CHECK(data[5] == -5.0f);
  CHECK_EQ_INT(run_site(&busy_site, 64, 1, 1, params, 1), 0); /* again: not remembered */

  CHECK_OK(hpvm_rt_untrack(data));

  /* Module and kernel failures: remembered, never retried. */
  long loads = fake_module_loads();
  hpvm_rt_kernel_param_t none[1] = {IN(NULL, 0)};
  CHECK_EQ_INT(run_site(&broken_site, 8, 1, 1, none, 1), 0);
  CHECK_EQ_INT(run_site(&broken_site, 8, 1, 1, none, 1), 0);
  CHECK_EQ_INT(run_site(&missing_site, 8, 1, 1, none, 1), 0);
  CHECK_EQ_INT(run_site(&missing_site, 8, 1, 1, none, 1), 0);
  CHECK_EQ_INT(fake_module_loads(), loads); /* the good image was loaded already */
  CHECK_EQ_INT(run_site(&imageless_site, 8, 1, 1, none, 1), 0);
  /* An untracked buffer without a size cannot be copied. */
  const int64_t grid[3] = {64, 1, 1};
  hpvm_rt_kernel_param_t unsized[2] = {OUT(data, 0), VALUE(grid[0])};
  CHECK_EQ_INT(run_site(&scale_site, 64, 1, 1, unsized, 2), 0);
  CHECK_EQ_INT(live_buffers(), 0);

}

static void test_bad_calls(void) {
  int64_t grid[3] = {4, 1, 1};
  int32_t ran = -1;
  float x[4];
  hpvm_rt_kernel_param_t params[2] = {IN(x, sizeof(x)), value_param(x, 0)};
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  params[1] = value_param(x, 65);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  params[1] = value_param(NULL, 4);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  params[1] = buffer_param(x, 4, 0);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  /* WRITES_ALL goes with OUT only. */
  params[1] = buffer_param(x, 4, HPVM_RT_ACCESS_INOUT | HPVM_RT_PARAM_WRITES_ALL);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  params[1].kind = 7;
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 2, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_kernel_run(NULL, grid, NULL, params, 1, &ran), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, NULL, NULL, params, 1, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 1, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, NULL, 1, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  /* A copied site carries another site's state. */
  hpvm_rt_kernel_site_t copy = vadd_site;
  CHECK(copy.state != NULL);
  CHECK_CODE(hpvm_rt_kernel_run(&copy, grid, NULL, params, 1, &ran),
             HPVM_STATUS_FAILED_PRECONDITION);
}

/* Many parameters (past the on-stack scratch) still resolve. */
static void test_many_params(void) {
  enum { COUNT = 40 };
  static uint64_t seen[3];
  static float x[8];
  hpvm_rt_kernel_param_t params[COUNT];
  params[0] = OUT(seen, sizeof(seen));
  params[1] = IN(x, sizeof(x));
  params[2] = IN(x, sizeof(x));
  params[3] = IN(NULL, 0);
  int extra = 5;
  for (int i = 4; i < COUNT; ++i)
    params[i] = i % 2 ? VALUE(extra) : IN(x + (i % 8), 4);
  CHECK_EQ_INT(run_site(&pointers_site, 1, 1, 1, params, COUNT), 1);
  CHECK(seen[0] == seen[1] && seen[0] != 0 && seen[2] == 0);
  CHECK_EQ_INT(live_buffers(), 0);
}

/* Two threads run sites at once, one of them shared, fresh (its state is created by a race). */
static hpvm_rt_kernel_site_t shared_site = {"shared", "vector_add", &image, NULL, NULL, NULL};

typedef struct worker_t {
  int index;
  _Atomic int *ready;
} worker_t;

static void *worker(void *opaque) {
  worker_t *self = opaque;
  enum { N = 517 };
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
  float *c = malloc(N * sizeof(float)), *d = malloc(N * sizeof(float));
  for (int i = 0; i < N; ++i) {
    a[i] = (float)(i * (self->index + 1));
    b[i] = 1.0f;
    d[i] = (float)i;
  }
  CHECK_OK(hpvm_rt_track(d, N * sizeof(float)));
  atomic_fetch_add(self->ready, 1);
  while (atomic_load(self->ready) < 2) {
  }
  int n = N;
  long count = N;
  uint64_t rounds = test_scaled(200);
  for (uint64_t round = 0; round < rounds; ++round) {
    hpvm_rt_kernel_param_t add[4] = {IN(a, N * sizeof(float)), IN(b, N * sizeof(float)),
                                     OUT(c, N * sizeof(float)), VALUE(n)};
    CHECK_EQ_INT(run_site(&shared_site, N, 1, 1, add, 4), 1);
    for (int i = 0; i < N; ++i)
      CHECK(c[i] == a[i] + 1.0f);
    hpvm_rt_kernel_param_t scale[2] = {INOUT(d, 0), VALUE(count)};
    CHECK_EQ_INT(run_site(&scale_site, N, 1, 1, scale, 2), 1);
    if (round % 8 == 7) {
      CHECK_OK(hpvm_rt_request_host(d, 0, HPVM_RT_ACCESS_INOUT));
      for (int i = 0; i < N; ++i)
        d[i] = (float)i;
    }
  }
  CHECK_OK(hpvm_rt_untrack(d));
  free(a);
  free(b);
  free(c);
  free(d);
  return NULL;
}

static void test_threads(void) {
  _Atomic int ready = 0;
  worker_t workers[2] = {{0, &ready}, {1, &ready}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    CHECK(pthread_create(&threads[i], NULL, worker, &workers[i]) == 0);
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  CHECK_EQ_INT(live_buffers(), 0);
}

/* Sites outlive runtimes: shutdown unloads the modules and clears every site's state. */
static void test_shutdown(void) {
  CHECK(vadd_site.state != NULL && fill_site.state != NULL);
  hpvm_rt_shutdown();
  CHECK(vadd_site.state == NULL && fill_site.state == NULL && broken_site.state == NULL);
  CHECK_EQ_INT(fake_live_objects(), 0);
  long loads = fake_module_loads();
  static float a[8], b[8], c[8];
  int n = 8;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_module_loads(), loads + 1);
}

static void test_device_variable(void) {
  static float a[8], b[8], c[8];
  int n = 8;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  restart_with_device("cpu");
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 0);
  restart_with_device("opencl"); /* the site has no OpenCL image */
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 0);
  restart_with_device("cuda");
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 1);
  restart_with_device("gpu");
  CHECK_CODE(hpvm_rt_init(), HPVM_STATUS_INVALID_ARGUMENT);
  const int64_t grid[3] = {8, 1, 1};
  int32_t ran = -1;
  CHECK_CODE(hpvm_rt_kernel_run(&vadd_site, grid, NULL, params, 4, &ran),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(ran, 0);
  restart_with_device(NULL);
}

/* HPVM_WORKGROUP replaces the runtime's picks per rank; a malformed value is an error. */
static void test_workgroup_variable(void) {
  int64_t picks[3][3];
  CHECK_OK(hpvm_kernel_workgroup_parse("64,32x4,4x4x16", picks));
  CHECK(picks[0][0] == 64 && picks[0][1] == 1 && picks[1][0] == 32 && picks[1][1] == 4 &&
        picks[2][0] == 4 && picks[2][1] == 4 && picks[2][2] == 16);
  CHECK_OK(hpvm_kernel_workgroup_parse("", picks));
  CHECK(picks[0][0] == 256 && picks[1][0] == 16 && picks[1][1] == 16 && picks[2][2] == 4);
  CHECK_OK(hpvm_kernel_workgroup_parse("8x2", picks)); /* only rank 2 replaced */
  CHECK(picks[0][0] == 256 && picks[1][0] == 8 && picks[1][1] == 2 && picks[2][0] == 8);
  static const char *bad[] = {"0", "2048", "16x", "x16", "16,,8", "16;8", "-4", "4x4x4x4", "abc",
                              "16 "};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    hpvm_status_t status = hpvm_kernel_workgroup_parse(bad[i], picks);
    CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(hpvm_status_message(status), "HPVM_WORKGROUP") != NULL);
    hpvm_status_free(status);
  }

  static int out[40 * 23 * 5];
  long nx = 37, ny = 23, nz = 1;
  hpvm_rt_kernel_param_t params[4] = {OUT(out, sizeof(out)), VALUE(nx), VALUE(ny), VALUE(nz)};
  hpvm_rt_shutdown();
  setenv("HPVM_WORKGROUP", "32x4,128", 1);
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
  check_last_launch(2, 6, 1, 32, 4, 1);
  check_fill(out, nx, ny, nz);
  nz = 5; /* rank 3 keeps the default 8x8x4 */
  CHECK_EQ_INT(run_site(&fill_site, nx, ny, nz, params, 4), 1);
  check_last_launch(5, 3, 2, 8, 8, 4);
  check_fill(out, nx, ny, nz);
  /* A shape larger than CUDA allows falls back to the CPU version with the reason. */
  hpvm_rt_shutdown();
  setenv("HPVM_WORKGROUP", "64x32", 1);
  nz = 1;
  CHECK_EQ_INT(run_site(&fill_site, 64, 32, 1, params, 4), 0);
  hpvm_rt_shutdown();
  setenv("HPVM_WORKGROUP", "16x", 1);
  CHECK_CODE(hpvm_rt_init(), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_shutdown();
  unsetenv("HPVM_WORKGROUP");
}

static hpvm_status_t cpu_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  ++*(int *)context;
  return NULL;
}

/* A task graph of two CPU nodes: the runtime's own nodes print nothing, traced or not (the
 * compiler emits hpvm_rt_trace_node for the CPU runs it wants traced). */
static void run_graph(void) {
  int runs = 0;
  hpvm_rt_graph_t *graph;
  CHECK_OK(hpvm_rt_graph_create(2, &graph));
  hpvm_rt_node_version_t version = {HPVM_RT_DEVICE_CPU, cpu_node};
  uint32_t first, second;
  CHECK_OK(hpvm_rt_graph_add_node(graph, "first", &version, 1, &runs, &first));
  CHECK_OK(hpvm_rt_graph_add_node(graph, "second", &version, 1, &runs, &second));
  CHECK_OK(hpvm_rt_graph_add_edge(graph, first, second));
  CHECK_OK(hpvm_rt_graph_run(graph));
  hpvm_rt_graph_destroy(graph);
  CHECK_EQ_INT(runs, 2);
}

/* HPVM_TRACE=1: the documented lines, and nothing without it; warnings once. */
static void test_trace(void) {
  static float a[8], b[8], c[8];
  int n = 8;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  char text[16384];
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 1);
  run_graph();
  hpvm_rt_trace_node("host_node", NULL);
  hpvm_rt_trace_node("other", "opencl:some device");
  CHECK_EQ_INT(run_site(&imageless_site, 8, 1, 1, params, 4), 0);
  capture_end(&capture, text, sizeof(text));
  const char *expected = "hpvm-trace: vadd on cuda:0\n"
                         "hpvm-trace: host_node on cpu\n"
                         "hpvm-trace: other on opencl:some device\n"
                         "hpvm-trace: imageless falls back to cpu: no cuda image; no opencl "
                         "image\n";
  if (strcmp(text, expected) != 0) {
    fprintf(stderr, "trace:\n%s\nexpected:\n%s\n", text, expected);
    exit(1);
  }

  /* Without HPVM_TRACE: silence. */
  capture_begin(&capture, false);
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 1);
  run_graph();
  CHECK_EQ_INT(run_site(&imageless_site, 8, 1, 1, params, 4), 0);
  hpvm_rt_trace_node("host_node", NULL);
  capture_end(&capture, text, sizeof(text));
  CHECK_EQ_INT(strlen(text), 0);

  /* Failures worth a warning are warned once; every fallback is traced with its reason.
   * (A fresh runtime, so that nothing was warned yet.) */
  hpvm_rt_shutdown();
  capture_begin(&capture, true);
  hpvm_rt_kernel_param_t none[1] = {IN(NULL, 0)};
  for (int i = 0; i < 2; ++i) {
    CHECK_EQ_INT(run_site(&broken_site, 8, 1, 1, none, 1), 0);
    CHECK_EQ_INT(run_site(&missing_site, 8, 1, 1, none, 1), 0);
    CHECK_EQ_INT(run_site(&busy_site, 8, 1, 1, none, 1), 0);
  }
  capture_end(&capture, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "hpvm: warning: "), 3);
  CHECK_CONTAINS(text, "hpvm: warning: cannot load the cuda image of node 'broken' on "
                       "cuda:Fake GPU");
  CHECK_CONTAINS(text, "CUDA_ERROR_INVALID_IMAGE");
  CHECK_CONTAINS(text, "hpvm: warning: node 'missing' cannot run on cuda:Fake GPU");
  CHECK_CONTAINS(text, "hpvm: warning: node 'busy': kernel 'no_resources' cannot run on "
                       "cuda:Fake GPU");
  CHECK_EQ_INT(count_occurrences(text, "hpvm-trace: broken falls back to cpu: cuda:Fake GPU: "),
               2);
  CHECK_EQ_INT(count_occurrences(text, "hpvm-trace: missing falls back to cpu: "), 2);
  CHECK_EQ_INT(count_occurrences(text, "hpvm-trace: busy falls back to cpu: "), 2);
  CHECK_CONTAINS(text, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");

  /* HPVM_DEVICE=cpu says so. */
  restart_with_device("cpu");
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 0);
  capture_end(&capture, text, sizeof(text));
  CHECK(strcmp(text, "hpvm-trace: vadd falls back to cpu: HPVM_DEVICE=cpu\n") == 0);
  restart_with_device(NULL);
}

/* No driver: the CPU version runs, quietly (a missing GPU is not worth a warning). */
static void test_missing_driver(const char *fake) {
  setenv("HPVM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  hpvm_rt_shutdown();
  static float a[8], b[8], c[8];
  int n = 8;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  char text[4096];
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(&vadd_site, 8, 1, 1, params, 4), 0);
  capture_end(&capture, text, sizeof(text));
  CHECK(strncmp(text, "hpvm-trace: vadd falls back to cpu: CUDA is not available", 57) == 0);
  CHECK_EQ_INT(count_occurrences(text, "\n"), 1);
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0);
  setenv("HPVM_CUDA_LIBRARY", fake, 1);
  hpvm_rt_shutdown();
}

/*===--- fault injection: a device failing at call N, the allocator at allocation N ------===*/

enum { SWEEP_N = 96 };
static const hpvm_rt_module_image_t sweep_image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL,
                                                   0};
/* test_device.h's kernel "scale": buffer, float factor, uint64 count. */
static hpvm_rt_kernel_site_t sweep_site = {"sweep", "scale", &sweep_image, NULL, NULL, NULL};

/* A tracked and an untracked buffer doubled by the kernel, or by "the CPU version" when it
 * reports that it did not run; stops at the first error, as compiled code does. */
static hpvm_status_t sweep_workload(hpvm_runtime_t *runtime, float *tracked, float *plain) {
  hpvm_mem_tracker_t *tracker = hpvm_runtime_tracker(runtime);
  HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_track(tracker, tracked, SWEEP_N * sizeof(float)));
  float factor = 2.0f;
  uint64_t count = SWEEP_N;
  const int64_t grid[3] = {SWEEP_N, 1, 1};
  hpvm_status_t status = NULL;
  for (int round = 0; round < 4 && !status; ++round) {
    float *data = round % 2 == 0 ? tracked : plain;
    hpvm_rt_kernel_param_t params[3] = {INOUT(data, round % 2 == 0 ? 0 : SWEEP_N * sizeof(float)),
                                        VALUE(factor), VALUE(count)};
    int32_t ran = -1;
    status = hpvm_runtime_kernel_run(runtime, &sweep_site, grid, NULL, params, 3, &ran);
    CHECK(ran == 0 || ran == 1);
    if (!status && !ran) {
      if (data == tracked)
        status = hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_INOUT, NULL,
                                          NULL);
      for (int i = 0; i < SWEEP_N && !status; ++i)
        data[i] *= 2.0f;
    }
  }
  if (!status)
    status = hpvm_mem_tracker_request(tracker, tracked, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL);
  hpvm_status_t untrack = hpvm_mem_tracker_untrack(tracker, tracked);
  if (!status)
    return untrack;
  hpvm_status_free(untrack);
  return status;
}

/* Returns the device calls and allocations of the run; every run must leave nothing behind
 * and, when it succeeds, the right data. */
static void sweep_once(int64_t device_fail_at, int64_t allocation_fail_at, int64_t *out_calls,
                       int64_t *out_allocations) {
  test_allocator_t state = {0};
  atomic_store(&state.fail_at, allocation_fail_at);
  test_allocator_t device_state = {0};
  test_device_t *gpu = test_device_create(test_allocator_make(&device_state), HPVM_RT_DEVICE_CUDA);
  atomic_store(&gpu->fail_at, device_fail_at);
  hpvm_runtime_options_t options = {0};
  options.allocator = test_allocator_make(&state);
  options.thread_count = 1;
  options.only_given_devices = true;
  options.devices[HPVM_RT_DEVICE_CUDA] = &gpu->base;
  options.has_kernel_device = true;
  options.kernel_device = HPVM_KERNEL_DEVICE_ANY;
  static float tracked[SWEEP_N], plain[SWEEP_N];
  for (int i = 0; i < SWEEP_N; ++i)
    tracked[i] = plain[i] = (float)i;
  hpvm_runtime_t *runtime = NULL;
  hpvm_status_t status = hpvm_runtime_create(&options, &runtime);
  int64_t live_buffers = 0, live_modules = 0;
  if (!status) {
    status = sweep_workload(runtime, tracked, plain);
    if (!status)
      for (int i = 0; i < SWEEP_N; ++i)
        CHECK(tracked[i] == 4.0f * (float)i && plain[i] == 4.0f * (float)i);
    *out_calls = atomic_load(&gpu->calls);
    live_buffers = atomic_load(&gpu->live_buffers);
    live_modules = atomic_load(&gpu->live_modules);
    hpvm_status_free(hpvm_runtime_destroy(runtime));
    /* The temporaries are gone after each call; the tracked copy went with untrack; the
     * module stays until the runtime is destroyed. */
    CHECK_EQ_INT(live_buffers, 0);
    CHECK(live_modules <= 1);
  }
  hpvm_status_free(status);
  *out_allocations = atomic_load(&state.calls);
  CHECK(sweep_site.state == NULL);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  CHECK_EQ_INT(atomic_load(&device_state.live), 0);
}

static void test_fault_sweep(void) {
  char text[65536];
  capture_t capture;
  capture_begin(&capture, false); /* the fallbacks warn */
  int64_t calls = 0, allocations = 0, ignored;
  sweep_once(0, 0, &calls, &allocations);
  CHECK(calls > 8 && allocations > 8);
  for (int64_t n = 1; n <= calls; ++n)
    sweep_once(n, 0, &ignored, &ignored);
  for (int64_t n = 1; n <= allocations; ++n)
    sweep_once(0, n, &ignored, &ignored);
  capture_end(&capture, text, sizeof(text));
  printf("fault sweep: %lld device calls, %lld allocations\n", (long long)calls,
         (long long)allocations);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: kernel_run_test path/to/libfake_cuda.so\n");
    return 2;
  }
  const char *fake = argv[1];
  void *library = dlopen(fake, RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_live_objects = dlsym(library, "fake_cuda_live_objects");
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  *(void **)&fake_module_loads = dlsym(library, "fake_cuda_module_loads");
  *(void **)&fake_last_launch = dlsym(library, "fake_cuda_last_launch");
  *(void **)&fake_last_shared = dlsym(library, "fake_cuda_last_shared");
  CHECK(fake_live_objects && fake_launches && fake_module_loads && fake_last_launch &&
        fake_last_shared);
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_TRACE");
  test_missing_driver(fake);
  setenv("HPVM_CUDA_LIBRARY", fake, 1);
  long loads = fake_module_loads();
  test_untracked();
  test_partial_out();
  test_pointer_resolution();
  test_workgroup();
  test_dims();
  CHECK_EQ_INT(fake_module_loads(), loads + 1); /* five sites, two image structs, one module */
  test_failures();
  test_bad_calls();
  test_many_params();
  test_threads();
  test_shutdown();
  test_device_variable();
  test_workgroup_variable();
  test_trace();
  hpvm_rt_shutdown();
  test_fault_sweep();
  CHECK_EQ_INT(fake_live_objects(), 0);
  dlclose(library);
  printf("kernel_run_test: OK\n");
  return 0;
}
