// The Parboil lbm's computation at one cell: D3Q19 lattice-Boltzmann, BGK collision, the
// result pushed to the 19 neighbours (structure of arrays, f[q * cells + cell]); obstacle
// cells bounce back. The one definition that the HPVM-C leaf (lbm.c) and the OpenMP loop nest
// (lbm_omp.c) both call. Only interior cells are computed, so that every neighbour exists.
#ifndef HPVM_BENCH_RELEASE_LBM_POINT_H
#define HPVM_BENCH_RELEASE_LBM_POINT_H
#include <stdlib.h>

#define LBM_Q 19
#define LBM_OMEGA 1.95f

static const int lbm_c[LBM_Q][3] = {
    {0, 0, 0},  {0, 1, 0},  {0, -1, 0}, {1, 0, 0},  {-1, 0, 0}, {0, 0, 1},  {0, 0, -1},
    {1, 1, 0},  {-1, 1, 0}, {1, -1, 0}, {-1, -1, 0}, {0, 1, 1}, {0, 1, -1}, {0, -1, 1},
    {0, -1, -1}, {1, 0, 1}, {1, 0, -1}, {-1, 0, 1}, {-1, 0, -1}};
static const int lbm_opposite[LBM_Q] = {0, 2, 1, 4, 3, 6, 5, 10, 9, 8, 7,
                                        14, 13, 12, 11, 18, 17, 16, 15};
static const float lbm_w[LBM_Q] = {1.0f / 3,  1.0f / 18, 1.0f / 18, 1.0f / 18, 1.0f / 18,
                                   1.0f / 18, 1.0f / 18, 1.0f / 36, 1.0f / 36, 1.0f / 36,
                                   1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36,
                                   1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};

static inline void lbm_cell(const float *src, float *dst, const int *obstacle, int nx, int ny,
                            int nz, int x, int y, int z) {
  if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
    return;
  long cells = (long)nx * ny * nz;
  long cell = x + (long)nx * (y + (long)ny * z);
  float f[LBM_Q];
  for (int q = 0; q < LBM_Q; ++q)
    f[q] = src[q * cells + cell];
  if (obstacle[cell]) {
    /* Bounce back: what arrived moving along q leaves along the opposite direction, pushed
     * to the neighbour there (each slot of dst is written by exactly one cell). */
    for (int q = 0; q < LBM_Q; ++q) {
      int o = lbm_opposite[q];
      long to = cell + lbm_c[o][0] + (long)nx * (lbm_c[o][1] + (long)ny * lbm_c[o][2]);
      dst[o * cells + to] = f[q];
    }
    return;
  }
  float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
  for (int q = 0; q < LBM_Q; ++q) {
    rho += f[q];
    ux += f[q] * lbm_c[q][0];
    uy += f[q] * lbm_c[q][1];
    uz += f[q] * lbm_c[q][2];
  }
  ux /= rho;
  uy /= rho;
  uz /= rho;
  float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);
  for (int q = 0; q < LBM_Q; ++q) {
    float cu = 3.0f * (lbm_c[q][0] * ux + lbm_c[q][1] * uy + lbm_c[q][2] * uz);
    float feq = lbm_w[q] * rho * (1.0f + cu + 0.5f * cu * cu - u2);
    long to = cell + lbm_c[q][0] + (long)nx * (lbm_c[q][1] + (long)ny * lbm_c[q][2]);
    dst[q * cells + to] = f[q] - LBM_OMEGA * (f[q] - feq);
  }
}

static inline void lbm_init(float *a, float *b, int *obstacle, int nx, int ny, int nz) {
  long cells = (long)nx * ny * nz;
  for (long cell = 0; cell < cells; ++cell) {
    obstacle[cell] = (cell * 2654435761u >> 7) % 11 == 0;
    for (int q = 0; q < LBM_Q; ++q)
      a[q * cells + cell] = b[q * cells + cell] =
          lbm_w[q] * (1.0f + 0.01f * (float)((cell + q) % 7));
  }
}

static inline double lbm_checksum(const float *f, int nx, int ny, int nz) {
  long cells = (long)nx * ny * nz;
  double sum = 0;
  for (long i = 0; i < cells * LBM_Q; ++i)
    sum += f[i] * (double)(i % 5 + 1);
  return sum;
}
#endif
