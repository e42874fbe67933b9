// The same stencil as stencil.c with the leaf called over the same grids
// (tiles, then the instances of a tile, x innermost) by an OpenMP loop nest.
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "stencil_point.h"

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 128, ny = argc > 2 ? atoi(argv[2]) : 128;
  int nz = argc > 3 ? atoi(argv[3]) : 32, steps = argc > 4 ? atoi(argv[4]) : 10;
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  size_t bytes = (size_t)nx * ny * nz * sizeof(float);
  float *A0 = malloc(bytes), *Anext = malloc(bytes);
  double *times = malloc(sizeof(double) * runs);
  const int bx = STENCIL_BLOCK_X, by = STENCIL_BLOCK_Y, bz = STENCIL_BLOCK_Z;
  const int gxs = (nx - 2 + bx - 1) / bx, gys = (ny - 2 + by - 1) / by,
            gzs = (nz - 2 + bz - 1) / bz;
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    stencil_init(A0, Anext, nx, ny, nz);
    float *in = A0, *out = Anext;
    double start = bench_now_ms();
    for (int t = 0; t < steps; ++t) {
#pragma omp parallel for collapse(3) schedule(static)
      for (int gz = 0; gz < gzs; ++gz)
        for (int gy = 0; gy < gys; ++gy)
          for (int gx = 0; gx < gxs; ++gx)
            for (int lz = 0; lz < bz; ++lz)
              for (int ly = 0; ly < by; ++ly)
                for (int lx = 0; lx < bx; ++lx)
                  stencil_point(1.0f / 6, 1.0f / 36, in, out, nx, ny, nz, gx * bx + lx + 1,
                                gy * by + ly + 1, gz * bz + lz + 1);
      float *swap = in;
      in = out;
      out = swap;
    }
    times[r] = bench_now_ms() - start;
    checksum = stencil_checksum(in, nx, ny, nz);
  }
  bench_report("stencil", "openmp", times, runs, checksum);
  free(A0), free(Anext), free(times);
  return 0;
}
