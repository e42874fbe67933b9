// The same lbm as lbm.c with the leaf called over the same grids (tiles over y and z, the
// cells of a tile along x) by an OpenMP loop nest.
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "lbm_point.h"

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 64, ny = argc > 2 ? atoi(argv[2]) : 64;
  int nz = argc > 3 ? atoi(argv[3]) : 32, steps = argc > 4 ? atoi(argv[4]) : 10;
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  long cells = (long)nx * ny * nz;
  float *a = malloc(sizeof(float) * LBM_Q * cells), *b = malloc(sizeof(float) * LBM_Q * cells);
  int *obstacle = malloc(sizeof(int) * cells);
  double *times = malloc(sizeof(double) * runs);
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    lbm_init(a, b, obstacle, nx, ny, nz);
    float *src = a, *dst = b;
    double start = bench_now_ms();
    for (int t = 0; t < steps; ++t) {
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
          for (int x = 0; x < nx; ++x)
            lbm_cell(src, dst, obstacle, nx, ny, nz, x, y, z);
      float *swap = src;
      src = dst;
      dst = swap;
    }
    times[r] = bench_now_ms() - start;
    checksum = lbm_checksum(src, nx, ny, nz);
  }
  bench_report("lbm", "openmp", times, runs, checksum);
  free(a), free(b), free(obstacle), free(times);
  return 0;
}
