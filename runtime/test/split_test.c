/* split_test.c - hpvm_rt_kernel_run_split against the fake libcuda (path in argv[1]): the grid
 * split between the device and the CPU version with outputs equal to a one-device run, tracked
 * and untracked; the trace naming both ranges; the split moving toward the faster side under
 * HPVM_SPLIT_SLOWDOWN; HPVM_SPLIT=0 / 1 against the hint; a device failing during its part. */
#include <dlfcn.h>

#include "kernel_run_test.h"
#include "runtime.h"

static long (*fake_launches)(void);

static const char cubin[] = "FAKE-CUBIN split_test";
static const hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};
static hpvm_rt_kernel_site_t vadd_site = {"vadd", "vector_add", &image, NULL, NULL, NULL};

enum { N = 8192 };
static float a[N], b[N], c[N];

/* The CPU version of vector_add: c = a + b over the box (ids of the whole grid). */
typedef struct vadd_context_t {
  _Atomic long instances;
} vadd_context_t;

static void vadd_body(void *self, const hpvm_rt_instance_range_t *range) {
  vadd_context_t *context = self;
  CHECK_EQ_INT(range->extent[0], N);
  for (int64_t i = range->begin[0]; i < range->end[0]; ++i)
    c[i] = a[i] + b[i];
  atomic_fetch_add(&context->instances, range->end[0] - range->begin[0]);
}

/* One run of the node with `hinted`; returns the instances the CPU ran. */
static long run_vadd(int32_t hinted) {
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  const int64_t grid[3] = {N, 1, 1}, block[3] = {0, 0, 0};
  vadd_context_t context = {0};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run_split(&vadd_site, grid, block, params, 4, hinted, 1, vadd_body,
                                    &context, &ran));
  if (!ran)
    vadd_body(&context, &(hpvm_rt_instance_range_t){{0, 0, 0}, {N, 1, 1}, {N, 1, 1}, 1, 0});
  hpvm_status_t status = hpvm_rt_request_host(c, 0, HPVM_RT_ACCESS_IN); /* when tracked */
  CHECK(!status || hpvm_status_code(status) == HPVM_STATUS_NOT_FOUND);
  hpvm_status_free(status);
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == a[i] + b[i]);
  return atomic_load(&context.instances);
}

static void reset(void) {
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(N - i);
    c[i] = -1.0f;
  }
}

/* The device's share in the last launch traced: its "(split S)", 0 when it kept to the CPU,
 * 1 when it kept to the device; -1 when none. */
static double last_share(const char *text) {
  double share = -1.0;
  for (const char *line = strstr(text, "hpvm-trace: "); line;
       line = strstr(line + 1, "hpvm-trace: ")) {
    const char *end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    const char *split = strstr(line, "(split ");
    if (split && (size_t)(split - line) < length)
      share = atof(split + 7);
    else if (strncmp(line + 12, "vadd keeps to the cpu", 21) == 0)
      share = 0.0;
    else if (strncmp(line + 12, "vadd keeps to the device", 24) == 0)
      share = 1.0;
  }
  return share;
}

static void test_split(void) {
  reset();
  char text[16384];
  capture_t capture;
  capture_begin(&capture, true);
  long launches = fake_launches();
  long cpu = run_vadd(1);
  capture_end(&capture, text, sizeof(text));
  CHECK_EQ_INT(fake_launches(), launches + 1);
  CHECK_EQ_INT(cpu, N / 2); /* the first launch splits evenly */
  CHECK_CONTAINS(text, "hpvm-trace: vadd on cuda:0 [0, 4096) and cpu [4096, 8192) along x "
                       "(split 0.50)\n");
  CHECK_EQ_INT(count_occurrences(text, "\n"), 1);
  /* Not hinted: the device alone. */
  reset();
  launches = fake_launches();
  CHECK_EQ_INT(run_vadd(0), 0);
  CHECK_EQ_INT(fake_launches(), launches + 1);
}

/* Tracked buffers whose newest copies are on the device: the split starts from them and
 * leaves the host copies the only valid ones. */
static void test_tracked(void) {
  reset();
  CHECK_OK(hpvm_rt_track(a, sizeof(a)));
  CHECK_OK(hpvm_rt_track(c, sizeof(c)));
  CHECK_EQ_INT(run_vadd(0), 0); /* c's newest copy on the device */
  CHECK_OK(hpvm_rt_request_host(a, 0, HPVM_RT_ACCESS_INOUT));
  for (int i = 0; i < N; ++i)
    a[i] = 2.0f * (float)i;
  CHECK(run_vadd(1) > 0);
  /* Had the device's copy of c stayed valid, this would bring back the old sums. */
  for (int i = 0; i < N; ++i)
    CHECK(c[i] == 2.0f * (float)i + b[i]);
  CHECK_OK(hpvm_rt_untrack(a));
  CHECK_OK(hpvm_rt_untrack(c));
}

/* Runs the hinted node `launches` times; returns the last share traced. */
static double balance(int launches) {
  char text[65536];
  capture_t capture;
  capture_begin(&capture, true);
  for (int i = 0; i < launches; ++i) {
    reset();
    run_vadd(1);
  }
  capture_end(&capture, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "(split ") + count_occurrences(text, " keeps to the "),
               launches);
  return last_share(text);
}

/* An injected slowdown of one side moves the split toward the other. */
static void test_balance(void) {
  hpvm_rt_shutdown(); /* a fresh runtime: fresh shares, HPVM_SPLIT_SLOWDOWN read again */
  setenv("HPVM_SPLIT_SLOWDOWN", "device:20", 1);
  double slow_device = balance(6);
  hpvm_rt_shutdown();
  setenv("HPVM_SPLIT_SLOWDOWN", "cpu:20", 1);
  double slow_cpu = balance(6);
  hpvm_rt_shutdown();
  unsetenv("HPVM_SPLIT_SLOWDOWN");
  printf("split after 6 launches: %.2f with the device slowed 20x, %.2f with the CPU\n",
         slow_device, slow_cpu);
  CHECK(slow_device >= 0.0 && slow_device < 0.25);
  CHECK(slow_cpu > 0.75);
  setenv("HPVM_SPLIT_SLOWDOWN", "gpu:2", 1);
  hpvm_status_t status = hpvm_rt_init();
  CHECK(status && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "HPVM_SPLIT_SLOWDOWN='gpu:2': expected "
                                             "cpu:<factor> or device:<factor>") != NULL);
  hpvm_status_free(status);
  unsetenv("HPVM_SPLIT_SLOWDOWN");
  hpvm_rt_shutdown();
}

/* The CPU version's rank must cover the grid. */
static void test_bad_calls(void) {
  int n = N;
  hpvm_rt_kernel_param_t params[4] = {IN(a, sizeof(a)), IN(b, sizeof(b)), OUT(c, sizeof(c)),
                                      VALUE(n)};
  const int64_t grid[3] = {N, 2, 1}, block[3] = {0, 0, 0};
  vadd_context_t context = {0};
  int32_t ran = -1;
  hpvm_status_t status =
      hpvm_rt_kernel_run_split(&vadd_site, grid, block, params, 4, 1, 0, vadd_body, &context, &ran);
  CHECK(status && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "found rank 0") != NULL);
  hpvm_status_free(status);
  CHECK_EQ_INT(ran, 0);
  status =
      hpvm_rt_kernel_run_split(&vadd_site, grid, block, params, 4, 1, 1, vadd_body, &context, &ran);
  CHECK(status && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "grid[1] = 2 beyond the CPU version's rank 1") != NULL);
  hpvm_status_free(status);
  CHECK_EQ_INT(atomic_load(&context.instances), 0);
}

/* HPVM_SPLIT=0 keeps hinted nodes on the device; HPVM_SPLIT=1 splits unhinted ones. */
static void test_variable(void) {
  setenv("HPVM_SPLIT", "0", 1);
  hpvm_rt_shutdown();
  reset();
  CHECK_EQ_INT(run_vadd(1), 0);
  setenv("HPVM_SPLIT", "1", 1);
  hpvm_rt_shutdown();
  reset();
  CHECK_EQ_INT(run_vadd(0), N / 2);
  setenv("HPVM_SPLIT", "yes", 1);
  hpvm_rt_shutdown();
  hpvm_status_t status = hpvm_rt_init();
  CHECK(status && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "HPVM_SPLIT='yes'") != NULL);
  hpvm_status_free(status);
  unsetenv("HPVM_SPLIT");
  hpvm_rt_shutdown();
}

/* The device faults during its part: the CPU runs that part too, from inputs the device never
 * wrote; one warning; the next launch runs on the CPU alone. */
static void test_failover(void) {
  char text[16384];
  capture_t capture;
  capture_begin(&capture, true);
  char number[32];
  snprintf(number, sizeof(number), "%ld", fake_launches() + 1);
  setenv("FAKE_CUDA_FAIL_LAUNCH", number, 1);
  reset();
  CHECK_EQ_INT(run_vadd(1), N);
  unsetenv("FAKE_CUDA_FAIL_LAUNCH");
  reset();
  long launches = fake_launches();
  CHECK_EQ_INT(run_vadd(1), N);
  CHECK_EQ_INT(fake_launches(), launches);
  capture_end(&capture, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "hpvm: warning:"), 1);
  CHECK_CONTAINS(text, "kernel 'vector_add' failed on cuda:Fake GPU");
  CHECK_CONTAINS(text, "hpvm-trace: vadd on cpu [0, 8192) after cuda:0 did not run its part "
                       "[0, 4096) along x\n");
  hpvm_rt_shutdown();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: split_test path/to/libfake_cuda.so\n");
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  CHECK(library != NULL);
  *(void **)&fake_launches = dlsym(library, "fake_cuda_launches");
  CHECK(fake_launches != NULL);
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_SPLIT");
  unsetenv("HPVM_SPLIT_SLOWDOWN");
  setenv("HPVM_CUDA_LIBRARY", argv[1], 1);
  test_split();
  test_tracked();
  test_balance();
  test_variable();
  test_bad_calls();
  test_failover();
  dlclose(library);
  printf("split_test: OK\n");
  return 0;
}
