// Two stages as the HPVM release writes pipelines: each leaf writes its buffer and
// returns it (__hpvm__return(2, C, bytes_C)) so that an edge carries it, and orders
// the next stage after it. Stage 1: C = A * B (one instance per element of C, x the
// column, y the row); stage 2: C += bias per column, then relu. Prints C's bits, and
// on stderr the median time of RUNS launches (the first, a warm-up, not counted).
//   passed_on_outputs M N K [RUNS]
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct __attribute__((__packed__)) {
  float *C;
  size_t bytes_C;
} Out;

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytes_A;
  float *B;
  size_t bytes_B;
  float *C;
  size_t bytes_C;
  float *bias;
  size_t bytes_bias;
  int n, k;
  long m;
} RootIn;

Out product(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
            int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *self = __hpvm__getNode();
  int col = __hpvm__getNodeInstanceID_x(self);
  int row = __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (int p = 0; p < k; ++p)
    sum += A[(long)row * k + p] * B[(long)p * n + col];
  C[(long)row * n + col] = sum;
  __hpvm__return(2, C, bytes_C);
}

Out bias_relu(float *C, size_t bytes_C, float *bias, size_t bytes_bias, int n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, C, bias, 1, C);
  void *self = __hpvm__getNode();
  int col = __hpvm__getNodeInstanceID_x(self);
  int row = __hpvm__getNodeInstanceID_y(self);
  float v = C[(long)row * n + col] + bias[col];
  C[(long)row * n + col] = v > 0.0f ? v : 0.0f;
  __hpvm__return(2, C, bytes_C);
}

Out root(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
         float *bias, size_t bytes_bias, int n, int k, long m) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, bias, 1, C);
  void *mm = __hpvm__createNodeND(2, product, (long)n, m);
  void *act = __hpvm__createNodeND(2, bias_relu, (long)n, m);
  for (int p = 0; p < 6; ++p)
    __hpvm__bindIn(mm, p, p, 0);
  __hpvm__bindIn(mm, 8, 6, 0);
  __hpvm__bindIn(mm, 9, 7, 0);
  __hpvm__edge(mm, act, 1, 0, 0, 0);
  __hpvm__edge(mm, act, 1, 1, 1, 0);
  __hpvm__bindIn(act, 6, 2, 0);
  __hpvm__bindIn(act, 7, 3, 0);
  __hpvm__bindIn(act, 8, 4, 0);
  __hpvm__bindOut(act, 0, 0, 0);
  __hpvm__bindOut(act, 1, 1, 0);
}

int main(int argc, char **argv) {
  long m = argc > 1 ? atol(argv[1]) : 37;
  int n = argc > 2 ? atoi(argv[2]) : 45, k = argc > 3 ? atoi(argv[3]) : 29,
      runs = argc > 4 ? atoi(argv[4]) : 0;
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float), bytes_bias = (size_t)n * sizeof(float);
  float *A = malloc(bytes_A), *B = malloc(bytes_B), *C = malloc(bytes_C),
        *bias = malloc(bytes_bias);
  unsigned seed = 12345;
  for (size_t i = 0; i < (size_t)m * k; ++i)
    A[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (size_t i = 0; i < (size_t)k * n; ++i)
    B[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (int i = 0; i < n; ++i)
    bias[i] = (float)(i % 7) / 8.0f - 0.25f;
  memset(C, 0xff, bytes_C); // NaNs: an element no instance wrote shows
  __hpvm__init();
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){A, bytes_A, B, bytes_B, C, bytes_C, bias, bytes_bias, n, k, m};
  void *dfg = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(dfg);
  if (runs > 0) {
    // Later launches see the first's C; the printed bits are the first's.
    float *first = malloc(bytes_C);
    memcpy(first, C, bytes_C);
    double *ms = malloc(sizeof(double) * (size_t)runs);
    for (int r = 0; r < runs; ++r) {
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      dfg = __hpvm__launch(0, root, (void *)args);
      __hpvm__wait(dfg);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double t = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
      int i = r;
      for (; i > 0 && ms[i - 1] > t; --i)
        ms[i] = ms[i - 1];
      ms[i] = t;
    }
    fprintf(stderr, "%ld x %d x %d: median %.3f ms of %d launches\n", m, n, k, ms[runs / 2], runs);
    memcpy(C, first, bytes_C);
    free(first);
    free(ms);
  }
  double sum = 0.0;
  unsigned bits = 0;
  for (size_t i = 0; i < (size_t)m * n; ++i) {
    unsigned u;
    memcpy(&u, &C[i], sizeof u);
    bits = bits * 31u + u;
    sum += C[i];
  }
  printf("C: %ld x %d, sum %.6f, bits %08x, C[0] %a, C[last] %a\n", m, n, sum, bits, C[0],
         C[(size_t)m * n - 1]);
  __hpvm__cleanup();
  return 0;
}
