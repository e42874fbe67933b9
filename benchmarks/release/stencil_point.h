// The Parboil stencil's computation at one interior point (i, j, k): the one
// definition that the HPVM-C leaf (stencil.c) and the OpenMP loop nest
// (stencil_omp.c) both call, so that the two differ only in how the grid runs.
#ifndef HPVM_BENCH_RELEASE_STENCIL_POINT_H
#define HPVM_BENCH_RELEASE_STENCIL_POINT_H
#include <stddef.h>

#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))

static inline void stencil_point(float c0, float c1, const float *A0, float *Anext, int nx,
                                 int ny, int nz, int i, int j, int k) {
  if (i < nx - 1 && j < ny - 1 && k < nz - 1)
    Anext[Index3D(nx, ny, i, j, k)] =
        c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
              A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
              A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
        A0[Index3D(nx, ny, i, j, k)] * c0;
}

#define STENCIL_BLOCK_X 32
#define STENCIL_BLOCK_Y 4
#define STENCIL_BLOCK_Z 1
#endif
