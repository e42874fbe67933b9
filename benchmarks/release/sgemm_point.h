// The Parboil sgemm's computation of one element of C (C = alpha A B^T + beta C, column-major
// A (m x k), B (n x k), C (m x n)): the one definition that the HPVM-C leaf (sgemm.c) and the
// OpenMP loop nest (sgemm_omp.c) both call.
#ifndef HPVM_BENCH_RELEASE_SGEMM_POINT_H
#define HPVM_BENCH_RELEASE_SGEMM_POINT_H

static inline void sgemm_point(const float *A, int lda, const float *B, int ldb, float *C,
                               int ldc, int k, float alpha, float beta, int m, int n) {
  float c = 0.0f;
  for (int i = 0; i < k; ++i)
    c += A[m + i * lda] * B[n + i * ldb];
  C[m + n * ldc] = C[m + n * ldc] * beta + alpha * c;
}

#define SGEMM_TILE_M 16
#define SGEMM_TILE_N 8

static inline void sgemm_init(float *A, float *B, float *C, int m, int n, int k) {
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 13) / 8.0f - 0.5f;
  for (long i = 0; i < (long)n * k; ++i)
    B[i] = (float)((i * 5) % 11) / 8.0f - 0.5f;
  for (long i = 0; i < (long)m * n; ++i)
    C[i] = (float)(i % 3);
}
#endif
