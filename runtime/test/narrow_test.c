/* narrow_test.c - the 32-bit variants of CUDA kernels (HPVM_RT_NARROW_KERNEL_SUFFIX) against
 * the fake libcuda (path in argv[1]), whose "triple" kernel has one ("triple__i32", counted)
 * and "vector_add" none: hpvm_rt_kernel_run launches the variant when the grid and every
 * buffer fit 2^31 (instances, bytes), the kernel itself when they do not, when the image has
 * no variant or when HPVM_CUDA_NARROW=0; the limits themselves (hpvm_kernel_fits_32_bits). */
#include <dlfcn.h>

#include "kernel/kernel_run.h"
#include "kernel_run_test.h"

static long (*fake_launches)(void);
static long (*fake_narrow_launches)(void);

static const char cubin[] = "FAKE-CUBIN narrow_test";
static const hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
static hpvm_rt_kernel_site_t triple_site = {"triple", "triple", &image, NULL, NULL, NULL};
static hpvm_rt_kernel_site_t vadd_site = {"vadd", "vector_add", &image, NULL, NULL, NULL};

enum { N = 1000 };

/* Triples data[0..N) on the device; how many launches and variant launches it took. */
static void triple(float *data, long *out_launches, long *out_narrow) {
  long n = N, launches = fake_launches(), narrow = fake_narrow_launches();
  for (int i = 0; i < N; ++i)
    data[i] = (float)i;
  hpvm_rt_kernel_param_t params[2] = {INOUT(data, N * sizeof(float)), VALUE(n)};
  CHECK_EQ_INT(run_site(&triple_site, N, 1, 1, params, 2), 1);
  for (int i = 0; i < N; ++i)
    CHECK(data[i] == 3.0f * (float)i);
  *out_launches = fake_launches() - launches;
  *out_narrow = fake_narrow_launches() - narrow;
}

/* The variant runs where it fits; the 64-bit kernel when switched off. */
static void test_choice(void) {
  static float data[N];
  long launches, narrow;
  triple(data, &launches, &narrow);
  CHECK_EQ_INT(launches, 1);
  CHECK_EQ_INT(narrow, 1);
  triple(data, &launches, &narrow); /* looked up once, chosen again */
  CHECK_EQ_INT(narrow, 1);
  hpvm_rt_shutdown();
  setenv("HPVM_CUDA_NARROW", "0", 1);
  triple(data, &launches, &narrow);
  CHECK_EQ_INT(launches, 1);
  CHECK_EQ_INT(narrow, 0);
  hpvm_rt_shutdown();
  setenv("HPVM_CUDA_NARROW", "2", 1);
  CHECK_CODE(hpvm_rt_init(), HPVM_STATUS_INVALID_ARGUMENT);
  unsetenv("HPVM_CUDA_NARROW");
  triple(data, &launches, &narrow);
  CHECK_EQ_INT(narrow, 1);
}

/* A kernel without a variant in the image runs as it is. */
static void test_no_variant(void) {
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 1.0f;
  }
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  long launches = fake_launches(), narrow = fake_narrow_launches();
  CHECK_EQ_INT(run_site(&vadd_site, N, 1, 1, params, 4), 1);
  CHECK_EQ_INT(fake_launches(), launches + 1);
  CHECK_EQ_INT(fake_narrow_launches(), narrow);
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == (float)i + 1.0f);
}

/* The limits: grids of 2^31 instances or more, buffers of 2^31 bytes or more, in any
 * dimension or parameter; values and work-group memory do not count. */
static void test_limits(void) {
  hpvm_rt_kernel_param_t params[3];
  param_slot_t slots[3];
  memset(slots, 0, sizeof(slots));
  long value = 1;
  params[0] = IN(NULL, 0);
  params[1] = VALUE(value);
  params[2] = WORKGROUP(64);
  hpvm_kernel_buffers_t run;
  memset(&run, 0, sizeof(run));
  run.params = params;
  run.slots = slots;
  run.count = 3;
  const int64_t top = (int64_t)1 << 31;
  const int64_t small[3] = {4096, 512, 64}, wide_x[3] = {top, 1, 1};
  const int64_t wide_yz[3] = {1, 65536, 32768}, just[3] = {top - 1, 1, 1};
  slots[0].bytes = (size_t)top - 1;
  slots[1].bytes = (size_t)top * 4; /* a value's slot is not a buffer */
  slots[2].bytes = (size_t)top * 4;
  CHECK(hpvm_kernel_fits_32_bits(small, &run));
  CHECK(hpvm_kernel_fits_32_bits(just, &run));
  CHECK(!hpvm_kernel_fits_32_bits(wide_x, &run));
  CHECK(!hpvm_kernel_fits_32_bits(wide_yz, &run));
  slots[0].bytes = (size_t)top;
  CHECK(!hpvm_kernel_fits_32_bits(small, &run));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: narrow_test path/to/libfake_cuda.so\n");
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  *(void **)&fake_narrow_launches = dlsym(library, "fake_cuda_narrow_launches");
  CHECK(fake_launches && fake_narrow_launches);
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_TRACE");
  unsetenv("HPVM_CUDA_NARROW");
  setenv("HPVM_CUDA_LIBRARY", argv[1], 1);
  test_choice();
  test_no_variant();
  test_limits();
  hpvm_rt_shutdown();
  dlclose(library);
  printf("narrow_test: OK\n");
  return 0;
}
