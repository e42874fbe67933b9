// The same sgemm as sgemm.c with the leaf called over the same grids (tiles, then the
// instances of a tile, x innermost) by an OpenMP loop nest.
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "sgemm_point.h"

int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 256, n = argc > 2 ? atoi(argv[2]) : 256;
  int k = argc > 3 ? atoi(argv[3]) : 256, runs = argc > 4 ? atoi(argv[4]) : 5;
  float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * n * k);
  float *C = malloc(sizeof(float) * m * n);
  double *times = malloc(sizeof(double) * runs);
  const int tm = SGEMM_TILE_M, tn = SGEMM_TILE_N, gms = m / tm, gns = n / tn;
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    sgemm_init(A, B, C, m, n, k);
    double start = bench_now_ms();
#pragma omp parallel for collapse(2) schedule(static)
    for (int gy = 0; gy < gns; ++gy)
      for (int gx = 0; gx < gms; ++gx)
        for (int ly = 0; ly < tn; ++ly)
          for (int lx = 0; lx < tm; ++lx)
            sgemm_point(A, m, B, n, C, m, k, 1.5f, 0.5f, gx * tm + lx, gy * tn + ly);
    times[r] = bench_now_ms() - start;
    checksum = 0;
    for (long i = 0; i < (long)m * n; ++i)
      checksum += C[i] * (double)(i % 7 + 1);
  }
  bench_report("sgemm", "openmp", times, runs, checksum);
  free(A), free(B), free(C), free(times);
  return 0;
}
