// Stages as the HPVM release writes pipelines: each leaf writes its buffer and returns it
// (__hpvm__return(2, C, bytes_C)) so that an edge carries it and orders the next stage
// after it. Stage 1: C = A * B, the release's Parboil shape (a 2-D grid of 16 x 8 tiles, each
// a 2-D grid of instances, x the column, y the row); stage 2, after it: C += bias per column,
// then relu (one flat 2-D grid); beside both: D = the max-plus product of A and B (no sum of
// products, so no contraction, but blocks of rows). The root returns C and D with their
// sizes. Prints the bits of C and D, whether the returned pointers and sizes are the
// buffers', and on stderr the median time of RUNS launches (after a first, not counted).
//   passed_on_outputs M N K [RUNS]     (M a multiple of 8, N of 16)
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
  float *C;
  size_t bytes_C;
  float *D;
  size_t bytes_D;
} RootOut;

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytes_A;
  float *B;
  size_t bytes_B;
  float *C;
  size_t bytes_C;
  float *bias;
  size_t bytes_bias;
  float *D;
  size_t bytes_D;
  int n, k;
  long m;
  RootOut out;
} RootIn;

Out product(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
            int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *self = __hpvm__getNode(), *tile = __hpvm__getParentNode(self);
  long col = __hpvm__getNodeInstanceID_x(tile) * __hpvm__getNumNodeInstances_x(self) +
             __hpvm__getNodeInstanceID_x(self);
  long row = __hpvm__getNodeInstanceID_y(tile) * __hpvm__getNumNodeInstances_y(self) +
             __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (int p = 0; p < k; ++p)
    sum += A[row * k + p] * B[(long)p * n + col];
  C[row * n + col] = sum;
  __hpvm__return(2, C, bytes_C);
}

Out product_tiles(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C,
                  size_t bytes_C, int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *leaf = __hpvm__createNodeND(2, product, 16L, 8L);
  for (int p = 0; p < 8; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
  __hpvm__bindOut(leaf, 0, 0, 0);
  __hpvm__bindOut(leaf, 1, 1, 0);
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

Out max_plus(float *A, size_t bytes_A, float *B, size_t bytes_B, float *D, size_t bytes_D,
             int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, D);
  void *self = __hpvm__getNode();
  int col = __hpvm__getNodeInstanceID_x(self);
  int row = __hpvm__getNodeInstanceID_y(self);
  float best = -1e30f;
  for (int p = 0; p < k; ++p) {
    float v = A[(long)row * k + p] + B[(long)p * n + col];
    best = v > best ? v : best;
  }
  D[(long)row * n + col] = best;
  __hpvm__return(2, D, bytes_D);
}

RootOut root(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
             float *bias, size_t bytes_bias, float *D, size_t bytes_D, int n, int k, long m) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, bias, 2, C, D);
  void *mm = __hpvm__createNodeND(2, product_tiles, (long)n / 16, m / 8);
  void *act = __hpvm__createNodeND(2, bias_relu, (long)n, m);
  void *mp = __hpvm__createNodeND(2, max_plus, (long)n, m);
  for (int p = 0; p < 6; ++p) {
    __hpvm__bindIn(mm, p, p, 0);
    __hpvm__bindIn(mp, p < 4 ? p : p + 4, p, 0);
  }
  __hpvm__bindIn(mm, 10, 6, 0);
  __hpvm__bindIn(mm, 11, 7, 0);
  __hpvm__bindIn(mp, 10, 6, 0);
  __hpvm__bindIn(mp, 11, 7, 0);
  __hpvm__edge(mm, act, 1, 0, 0, 0);
  __hpvm__edge(mm, act, 1, 1, 1, 0);
  __hpvm__bindIn(act, 6, 2, 0);
  __hpvm__bindIn(act, 7, 3, 0);
  __hpvm__bindIn(act, 10, 4, 0);
  __hpvm__bindOut(act, 0, 0, 0);
  __hpvm__bindOut(act, 1, 1, 0);
  __hpvm__bindOut(mp, 0, 2, 0);
  __hpvm__bindOut(mp, 1, 3, 0);
}

static unsigned bits_of(const float *x, size_t count) {
  unsigned bits = 0;
  for (size_t i = 0; i < count; ++i) {
    unsigned u;
    memcpy(&u, &x[i], sizeof u);
    bits = bits * 31u + u;
  }
  return bits;
}

int main(int argc, char **argv) {
  long m = argc > 1 ? atol(argv[1]) : 40;
  int n = argc > 2 ? atoi(argv[2]) : 48, k = argc > 3 ? atoi(argv[3]) : 29,
      runs = argc > 4 ? atoi(argv[4]) : 0;
  if (m % 8 || n % 16) {
    fprintf(stderr, "M must be a multiple of 8 and N of 16\n");
    return 2;
  }
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float), bytes_bias = (size_t)n * sizeof(float);
  float *A = malloc(bytes_A), *B = malloc(bytes_B), *C = malloc(bytes_C),
        *D = malloc(bytes_C), *bias = malloc(bytes_bias);
  unsigned seed = 12345;
  for (size_t i = 0; i < (size_t)m * k; ++i)
    A[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (size_t i = 0; i < (size_t)k * n; ++i)
    B[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (int i = 0; i < n; ++i)
    bias[i] = (float)(i % 7) / 8.0f - 0.25f;
  memset(C, 0xff, bytes_C); // NaNs: an element no instance wrote shows
  memset(D, 0xff, bytes_C);
  __hpvm__init();
  RootIn *args = malloc(sizeof(RootIn));
  memset(args, 0, sizeof(RootIn));
  *args = (RootIn){A, bytes_A, B, bytes_B, C, bytes_C, bias, bytes_bias, D, bytes_C, n, k, m};
  void *dfg = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(dfg);
  printf("C: %ld x %d, bits %08x, C[0] %a, C[last] %a; D: bits %08x, D[0] %a\n", m, n,
         bits_of(C, (size_t)m * n), C[0], C[(size_t)m * n - 1], bits_of(D, (size_t)m * n),
         D[0]);
  printf("returned: C %s, %zu bytes; D %s, %zu bytes (of %zu)\n",
         args->out.C == C ? "is C" : "is NOT C", args->out.bytes_C,
         args->out.D == D ? "is D" : "is NOT D", args->out.bytes_D, bytes_C);
  if (runs > 0) {
    // Later launches see the first's C; what was printed is the first's.
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
    fprintf(stderr, "%ld x %d x %d: median %.3f ms of %d launches\n", m, n, k, ms[runs / 2],
            runs);
    free(ms);
  }
  __hpvm__cleanup();
  return 0;
}
