/* stencil_ref.c - sequential and OpenMP 7-point Jacobi sweeps sharing one per-point expression. */
#include "stencil_ref.h"
#include "../common/omp_compat.h"

#include <math.h>
#include <stdint.h>

void stencil_init(float *A, int nx, int ny, int nz) {
  long n = (long)nx * ny * nz;
  for (long idx = 0; idx < n; idx++) {
    /* 32-bit integer hash (lowbias32): platform-independent, unlike rand(). */
    uint32_t h = (uint32_t)idx;
    h ^= h >> 16; h *= 0x7feb352dU;
    h ^= h >> 15; h *= 0x846ca68bU;
    h ^= h >> 16;
    A[idx] = (float)(h >> 8) * (1.0f / 16777216.0f); /* 24 bits: exact in float */
  }
}

float stencil_point(const float *in, int nx, int ny, int nz, int i, int j, int k) {
  long c = STENCIL_IDX(nx, ny, i, j, k);
  if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1)
    return in[c];
  long sy = nx, sz = (long)nx * ny;
  /* Left-to-right sum in this exact order is part of the contract (see README). */
  float sum = in[c - 1] + in[c + 1] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz];
  return STENCIL_C1 * sum - STENCIL_C0 * in[c];
}

void stencil_step_seq(const float *in, float *out, int nx, int ny, int nz) {
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        out[STENCIL_IDX(nx, ny, i, j, k)] = stencil_point(in, nx, ny, nz, i, j, k);
}

void stencil_step_omp(const float *in, float *out, int nx, int ny, int nz) {
  /* collapse(2) because nz alone can be small (Parboil's 512x512x64) relative to the thread count. */
BENCH_OMP("omp parallel for collapse(2) schedule(static)")
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        out[STENCIL_IDX(nx, ny, i, j, k)] = stencil_point(in, nx, ny, nz, i, j, k);
}

float *stencil_seq(float *a, float *b, int nx, int ny, int nz, int iterations) {
  for (int t = 0; t < iterations; t++) {
    stencil_step_seq(a, b, nx, ny, nz);
    float *tmp = a; a = b; b = tmp;
  }
  return a;
}

float *stencil_omp(float *a, float *b, int nx, int ny, int nz, int iterations) {
  for (int t = 0; t < iterations; t++) {
    stencil_step_omp(a, b, nx, ny, nz);
    float *tmp = a; a = b; b = tmp;
  }
  return a;
}

int stencil_check(const float *out, const float *ref, long n, float tolerance) {
  int bad = 0;
  for (long i = 0; i < n; i++) {
    float r = ref[i], d = fabsf(out[i] - r), scale = fabsf(r) > 1.0f ? fabsf(r) : 1.0f;
    if (!(d <= tolerance * scale)) bad++;
  }
  return bad;
}
