// sgemm_main.h - the benchmark driver of the tiled HPVM-C sgemms (sgemm_tiled.c here,
// benchmarks/gpu/sgemm_blocked.c): one untimed warm-up launch, then RUNS timed runs, each one
// __hpvm__launch + __hpvm__wait with the tracked buffers resident; C comes back with
// llvm_hpvm_request_mem after the runs (not timed). Before including it, define SGEMM_NAME
// (the report's name), SGEMM_ROOT (the root node) and SGEMM_ARGS (a function of A, B, C, m,
// n, k returning the root's RootIn). Usage of the program: NAME M N K RUNS
#ifndef HPVM_BENCH_OPENCL_SGEMM_MAIN_H
#define HPVM_BENCH_OPENCL_SGEMM_MAIN_H
#include "bench_common.h"

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
  RootIn *args = SGEMM_ARGS(A, B, C, m, n, k);
  void *dfg = __hpvm__launch(0, SGEMM_ROOT, (void *)args); // warm-up
  __hpvm__wait(dfg);
  double *times = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = bench_now_ms();
    dfg = __hpvm__launch(0, SGEMM_ROOT, (void *)args);
    __hpvm__wait(dfg);
    times[r] = bench_now_ms() - t0;
  }
  llvm_hpvm_request_mem(C, bytes_C);
  char name[64];
  snprintf(name, sizeof name, SGEMM_NAME " %dx%dx%d", m, n, k);
  bench_report(name, "hpvm", times, runs, bench_checksum(C, (size_t)m * n));
  llvm_hpvm_untrack_mem(A);
  llvm_hpvm_untrack_mem(B);
  llvm_hpvm_untrack_mem(C);
  __hpvm__cleanup();
  return 0;
}
#endif
