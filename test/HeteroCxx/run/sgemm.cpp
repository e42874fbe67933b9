// sgemm in Hetero-C++: the HPVM-C example's algorithm (examples/hpvm-c/sgemm.c:
// C = alpha A B^T + beta C, column-major, the same data and the same operations
// in the same order), written as a parallel loop over the elements of C (x, the
// innermost loop, walks a column). The output lines are the HPVM-C program's.
// `sgemm M N K RUNS` times RUNS launches instead (docs/Performance.md).
#include <heterocc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sgemm(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb, float *C,
           size_t bytesC, int ldc, int m, int n, int k, float alpha, float beta) {
  void *section = __hetero_section_begin();
  for (int nn = 0; nn < n; ++nn)
    for (int mm = 0; mm < m; ++mm) {
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

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The best of `runs` launches at M x N x K, and C[0] against the reference's. */
static int bench(int m, int n, int k, int runs) {
  size_t bytesA = (size_t)m * k * sizeof(float), bytesB = (size_t)n * k * sizeof(float);
  size_t bytesC = (size_t)m * n * sizeof(float);
  float *A = (float *)malloc(bytesA), *B = (float *)malloc(bytesB);
  float *C = (float *)calloc((size_t)m * n, sizeof(float));
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)n * k; ++i)
    B[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    double start = now_ms();
    void *graph = __hetero_launch((void *)sgemm, 11, A, bytesA, m, B, bytesB, n, C, bytesC, m,
                                  m, n, k, 1.0f, 0.0f, 1, C, bytesC);
    __hetero_wait(graph);
    double ms = now_ms() - start;
    best = ms < best ? ms : best;
  }
  float c0 = 0.0f;
  for (int i = 0; i < k; ++i)
    c0 += A[i * m] * B[i * n];
  printf("sgemm (Hetero-C++) %dx%dx%d: best of %d %.2f ms, %.1f GFLOP/s, C[0] %s\n", m, n, k,
         runs, best, 2.0 * m * n * k / best / 1e6, C[0] == c0 ? "exact" : "WRONG");
  int wrong = C[0] != c0;
  free(A);
  free(B);
  free(C);
  return wrong;
}

int main(int argc, char **argv) {
  if (argc == 5)
    return bench(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  return run(128, 96, 64) + run(16, 8, 1) + run(48, 40, 33);
}
