// sgemm (HPVM-C), naive: C = A * B (A m x k, B k x n, row-major), one instance per output
// element, a 2-D leaf hinted GPU_TARGET over n (x: column) x m (y: row), created by a root
// internal node that __hpvm__launch starts (the runtime picks 16x16 work-groups). One
// untimed warm-up launch, then RUNS timed runs, each one __hpvm__launch + __hpvm__wait
// with the tracked buffers resident; C comes back with llvm_hpvm_request_mem after the
// runs (not timed). Usage: sgemm_hpvm M N K RUNS
#include <hpvm/hpvm.h>
#include "bench_common.h"

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytes_A;
  float *B;
  size_t bytes_B;
  float *C;
  size_t bytes_C;
  int m, n, k;
} RootIn;

void sgemm_leaf(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
                int m, int n, int k) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *self = __hpvm__getNode();
  int col = __hpvm__getNodeInstanceID_x(self);
  int row = __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (int p = 0; p < k; ++p)
    sum += A[(long)row * k + p] * B[(long)p * n + col];
  C[(long)row * n + col] = sum;
}

void sgemm_root(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
                int m, int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *leaf = __hpvm__createNodeND(2, sgemm_leaf, (long)n, (long)m);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 512, n = argc > 2 ? atoi(argv[2]) : 512,
      k = argc > 3 ? atoi(argv[3]) : 512, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float);
  float *A = malloc(bytes_A), *B = malloc(bytes_B), *C = malloc(bytes_C);
  sgemm_init(A, B, C, m, n, k);
  __hpvm__init();
  llvm_hpvm_track_mem(A, bytes_A);
  llvm_hpvm_track_mem(B, bytes_B);
  llvm_hpvm_track_mem(C, bytes_C);
  RootIn *args = malloc(sizeof(RootIn));
  args->A = A;
  args->bytes_A = bytes_A;
  args->B = B;
  args->bytes_B = bytes_B;
  args->C = C;
  args->bytes_C = bytes_C;
  args->m = m;
  args->n = n;
  args->k = k;
  void *dfg = __hpvm__launch(0, sgemm_root, (void *)args); // warm-up
  __hpvm__wait(dfg);
  double *times = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = bench_now_ms();
    dfg = __hpvm__launch(0, sgemm_root, (void *)args);
    __hpvm__wait(dfg);
    times[r] = bench_now_ms() - t0;
  }
  llvm_hpvm_request_mem(C, bytes_C);
  char name[64];
  snprintf(name, sizeof name, "sgemm %dx%dx%d", m, n, k);
  bench_report(name, "hpvm", times, runs, bench_checksum(C, (size_t)m * n));
  llvm_hpvm_untrack_mem(A);
  llvm_hpvm_untrack_mem(B);
  llvm_hpvm_untrack_mem(C);
  __hpvm__cleanup();
  return 0;
}
