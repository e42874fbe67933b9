/* sgemm_ref.c - sequential and OpenMP sgemm with the per-element dot product HPVM's leaf uses. */
#include "sgemm_ref.h"
#include "../common/omp_compat.h"

#include <math.h>

/*
 * Values are multiples of 1/16 in [-0.5625, 0.5625], so each product is a multiple of 1/256 and
 * every partial sum stays exactly representable in float for K < ~200000. Any summation order,
 * with or without FMA contraction, therefore gives bitwise-identical C; a mismatch means a real
 * indexing bug, not rounding. The two moduli differ (17, 19) so a transposed operand is caught.
 */
void sgemm_init(float *A, float *B, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++)
      A[(long)i * K + k] = (float)((i * 7 + k * 3) % 17) / 16.0f - 0.5f;
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++)
      B[(long)k * N + j] = (float)((k * 5 + j * 11) % 19) / 16.0f - 0.5625f;
}

float sgemm_element(const float *A, const float *B, int N, int K, int row, int col) {
  const float *a = A + (long)row * K;
  float acc = 0.0f;
  for (int k = 0; k < K; k++)
    acc += a[k] * B[(long)k * N + col];
  return acc;
}

void sgemm_seq(const float *A, const float *B, float *C, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      C[(long)i * N + j] = sgemm_element(A, B, N, K, i, j);
}

void sgemm_omp(const float *A, const float *B, float *C, int M, int N, int K) {
BENCH_OMP("omp parallel for collapse(2) schedule(static)")
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      C[(long)i * N + j] = sgemm_element(A, B, N, K, i, j);
}

int sgemm_check(const float *C, const float *ref, int M, int N, float tolerance) {
  int bad = 0;
  long n = (long)M * N;
  for (long i = 0; i < n; i++) {
    float r = ref[i], d = fabsf(C[i] - r), scale = fabsf(r) > 1.0f ? fabsf(r) : 1.0f;
    if (!(d <= tolerance * scale)) bad++; /* negated so NaN counts as a mismatch */
  }
  return bad;
}
