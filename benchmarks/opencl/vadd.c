// vadd (HPVM-C): c[i] = a[i] + b[i], a 1-D leaf hinted GPU_TARGET over n instances,
// created by a root internal node that __hpvm__launch starts. The buffers are tracked, so
// after the first (untimed, warm-up) launch they stay on the device; each timed run is one
// __hpvm__launch + __hpvm__wait. The result comes back with llvm_hpvm_request_mem after
// the runs (not timed). Usage: vadd_hpvm N RUNS
#include <hpvm/hpvm.h>
#include "bench_common.h"

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes_a;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  long n;
} RootIn;

void vadd_leaf(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  c[i] = a[i] + b[i];
}

void vadd_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(1, vadd_leaf, n);
  for (int p = 0; p < 6; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1 << 20;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  vadd_init(a, b, c, n);
  __hpvm__init();
  llvm_hpvm_track_mem(a, bytes);
  llvm_hpvm_track_mem(b, bytes);
  llvm_hpvm_track_mem(c, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  args->a = a;
  args->bytes_a = bytes;
  args->b = b;
  args->bytes_b = bytes;
  args->c = c;
  args->bytes_c = bytes;
  args->n = n;
  // Warm-up: loads the module (SPIR-V -> SPIR 1.2 through llvm-spirv, PoCL's compile) and
  // copies the buffers to the device.
  void *dfg = __hpvm__launch(0, vadd_root, (void *)args);
  __hpvm__wait(dfg);
  double *times = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = bench_now_ms();
    dfg = __hpvm__launch(0, vadd_root, (void *)args);
    __hpvm__wait(dfg);
    times[r] = bench_now_ms() - t0;
  }
  llvm_hpvm_request_mem(c, bytes);
  char name[64];
  snprintf(name, sizeof name, "vadd n=%ld", n);
  bench_report(name, "hpvm", times, runs, bench_checksum(c, n));
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(b);
  llvm_hpvm_untrack_mem(c);
  __hpvm__cleanup();
  return 0;
}
