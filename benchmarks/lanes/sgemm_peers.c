// sgemm_peers.c - the computation of examples/hpvm-c/sgemm.c (C = alpha A B^T + beta C,
// column-major A (m x k), B (n x k), C (m x n)) done by the code a user would write instead:
//   ./sgemm_peers blas M N K RUNS     OpenBLAS cblas_sgemm (threads: OPENBLAS_NUM_THREADS)
//   ./sgemm_peers omp  M N K RUNS     the same naive loop nest by hand: OpenMP threads over
//                                     the columns of C, `#pragma omp simd` over its rows
// Inputs are those of the HPVM-C program; prints the median time and GFLOP/s, and a checksum
// of C (sum over a fixed sample of elements) for comparing versions.
#include "bench_common.h"

#include <cblas.h>

static void naive(int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc) {
#pragma omp parallel for schedule(static)
  for (int col = 0; col < n; ++col) {
#pragma omp simd
    for (int row = 0; row < m; ++row) {
      float c = 0.0f;
      for (int i = 0; i < k; ++i)
        c += A[row + i * lda] * B[col + i * ldb];
      C[row + col * ldc] = C[row + col * ldc] * beta + alpha * c;
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[1], "blas") && strcmp(argv[1], "omp"))) {
    fprintf(stderr, "usage: sgemm_peers blas|omp M N K RUNS\n");
    return 2;
  }
  int blas = strcmp(argv[1], "blas") == 0;
  int m = atoi(argv[2]), n = atoi(argv[3]), k = atoi(argv[4]), runs = atoi(argv[5]);
  if (m <= 0 || n <= 0 || k <= 0 || runs <= 0) {
    fprintf(stderr, "sgemm_peers: sizes and runs must be positive\n");
    return 2;
  }
  float *A = bench_alloc(sizeof(float) * m * k), *B = bench_alloc(sizeof(float) * n * k);
  float *C = bench_alloc(sizeof(float) * m * n);
  double *times = bench_alloc(sizeof(double) * runs);
  // The inputs of examples/hpvm-c/sgemm.c's bench.
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)n * k; ++i)
    B[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  for (int r = 0; r < runs; ++r) {
    memset(C, 0, sizeof(float) * m * n);
    double start = bench_now_ms();
    if (blas)
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, A, m, B, n, 0.0f,
                  C, m);
    else
      naive(m, n, k, 1.0f, A, m, B, n, 0.0f, C, m);
    times[r] = bench_now_ms() - start;
  }
  bench_range_t range = bench_range(times, runs);
  double checksum = 0;
  for (long s = 0; s < 4096; ++s)
    checksum += C[(s * 2654435761L) % ((long)m * n)];
  printf("%s sgemm %dx%dx%d: median %.1f ms (min %.1f, max %.1f) (%.2f GFLOP/s) of %d, "
         "checksum %.6e\n",
         blas ? "openblas" : "openmp-simd", m, n, k, range.median, range.min, range.max,
         2.0 * m * n * k / (range.median * 1e6), runs, checksum);
  free(A), free(B), free(C), free(times);
  return 0;
}
