// sgemm in Hetero-C++: the HPVM-C example's algorithm (examples/hpvm-c/sgemm.c:
// C = alpha A B^T + beta C, column-major, the same data and the same operations
// in the same order), written as a parallel loop over the elements of C. The
// output lines are the HPVM-C program's.
#include <heterocc.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb, float *C,
           size_t bytesC, int ldc, int m, int n, int k, float alpha, float beta) {
  void *section = __hetero_section_begin();
  for (int mm = 0; mm < m; ++mm)
    for (int nn = 0; nn < n; ++nn) {
      __hetero_parallel_loop(2, /* inputs */ 9, A, bytesA, lda, B, bytesB, ldb, C, bytesC,
                             ldc, k, alpha, beta, /* outputs */ 1, C, bytesC,
                             "sgemm_element");
      __hetero_hint(DEVICE);
      float c = 0.0f;
      for (int i = 0; i < k; ++i)
        c += A[mm + i * lda] * B[nn + i * ldb];
      C[mm + nn * ldc] = C[mm + nn * ldc] * beta + alpha * c;
    }
  __hetero_section_end(section);
}

static void reference(int m, int n, int k, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
  for (int mm = 0; mm < m; ++mm)
    for (int nn = 0; nn < n; ++nn) {
      float c = 0.0f;
      for (int i = 0; i < k; ++i)
        c += A[mm + i * lda] * B[nn + i * ldb];
      C[mm + nn * ldc] = C[mm + nn * ldc] * beta + alpha * c;
    }
}

static int run(int m, int n, int k) {
  size_t bytesA = (size_t)m * k * sizeof(float), bytesB = (size_t)n * k * sizeof(float);
  size_t bytesC = (size_t)m * n * sizeof(float);
  float *A = (float *)malloc(bytesA), *B = (float *)malloc(bytesB);
  float *C = (float *)malloc(bytesC), *ref = (float *)malloc(bytesC);
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)n * k; ++i)
    B[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  for (long i = 0; i < (long)m * n; ++i)
    C[i] = ref[i] = (float)(i % 5);
  void *graph = __hetero_launch((void *)sgemm, 11, A, bytesA, m, B, bytesB, n, C, bytesC, m,
                                m, n, k, 1.0f, 0.5f, 1, C, bytesC);
  __hetero_wait(graph);
  reference(m, n, k, 1.0f, A, m, B, n, 0.5f, ref, m);
  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < (long)m * n; ++i) {
    wrong += C[i] != ref[i];
    sum += C[i];
  }
  printf("sgemm: %dx%dx%d sum=%.3f wrong=%ld\n", m, n, k, sum, wrong);
  free(A);
  free(B);
  free(C);
  free(ref);
  return wrong != 0;
}

int main() { return run(128, 96, 64) + run(16, 8, 1) + run(48, 40, 33); }
