// sgemm in HPVM-C: `hpvm-cc -O3 sgemm.c -o sgemm && ./sgemm [M N K [RUNS]]`.
// Without sizes it checks three small cases bit for bit against a C reference
// (the lit test); with sizes it times RUNS launches of the graph against the
// same loop nest in sequential C and checks a sample of C.
//
// Ported in the style of the Parboil sgemm of the HPVM release: C = alpha A B^T
// + beta C with column-major A (m x k), B (n x k) and C (m x n), pointer/size
// pairs, a root with a 2-D grid of 2-D blocks (parent instance ids give the
// block), __hpvm__hint(DEVICE) (hpvm-cc defines DEVICE as CPU_TARGET),
// __hpvm__attributes, and the buffers tracked, requested and untracked.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// The tile of C one internal-node instance computes (-DTILE_M=... -DTILE_N=... to try
// others, as hpvm-tune does).
#ifndef TILE_M
#define TILE_M 16
#endif
#ifndef TILE_N
#define TILE_N 8
#endif

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytesA;
  int lda;
  float *B;
  size_t bytesB;
  int ldb;
  float *C;
  size_t bytesC;
  int ldc;
  int k;
  float alpha;
  float beta;
  long block_x, block_y, grid_x, grid_y;
} RootIn;

void mysgemmNT(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb, float *C,
               size_t bytesC, int ldc, int k, float alpha, float beta) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(3, A, B, C, 1, C);

  void *thisNode = __hpvm__getNode();
  void *parentNode = __hpvm__getParentNode(thisNode);

  long lx = __hpvm__getNodeInstanceID_x(thisNode);
  long ly = __hpvm__getNodeInstanceID_y(thisNode);
  long gx = __hpvm__getNodeInstanceID_x(parentNode);
  long gy = __hpvm__getNodeInstanceID_y(parentNode);
  long dimx = __hpvm__getNumNodeInstances_x(thisNode);
  long dimy = __hpvm__getNumNodeInstances_y(thisNode);

  float c = 0.0f;
  int m = gx * dimx + lx;
  int n = gy * dimy + ly;
  for (int i = 0; i < k; ++i) {
    float a = A[m + i * lda];
    float b = B[n + i * ldb];
    c += a * b;
  }
  C[m + n * ldc] = C[m + n * ldc] * beta + alpha * c;
}

void basicSgemm_cloned(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb,
                       float *C, size_t bytesC, int ldc, int k, float alpha, float beta,
                       long block_x, long block_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, C, 1, C);
  void *thisNode = __hpvm__createNodeND(2, mysgemmNT, block_x, block_y);
  __hpvm__bindIn(thisNode, 0, 0, 0);
  __hpvm__bindIn(thisNode, 1, 1, 0);
  __hpvm__bindIn(thisNode, 2, 2, 0);
  __hpvm__bindIn(thisNode, 3, 3, 0);
  __hpvm__bindIn(thisNode, 4, 4, 0);
  __hpvm__bindIn(thisNode, 5, 5, 0);
  __hpvm__bindIn(thisNode, 6, 6, 0);
  __hpvm__bindIn(thisNode, 7, 7, 0);
  __hpvm__bindIn(thisNode, 8, 8, 0);
  __hpvm__bindIn(thisNode, 9, 9, 0);
  __hpvm__bindIn(thisNode, 10, 10, 0);
  __hpvm__bindIn(thisNode, 11, 11, 0);
}

void root(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb, float *C,
          size_t bytesC, int ldc, int k, float alpha, float beta, long block_x, long block_y,
          long grid_x, long grid_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, C, 1, C);
  void *thisNode = __hpvm__createNodeND(2, basicSgemm_cloned, grid_x, grid_y);
  for (int i = 0; i < 14; ++i)
    __hpvm__bindIn(thisNode, i, i, 0);
}

/* One element of the reference: the same operations in the same order. */
static float reference_element(int mm, int nn, int k, float alpha, const float *A, int lda,
                               const float *B, int ldb, float beta, float c0) {
  float c = 0.0f;
  for (int i = 0; i < k; ++i)
    c += A[mm + i * lda] * B[nn + i * ldb];
  return c0 * beta + alpha * c;
}

static void reference(int m, int n, int k, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
  for (int mm = 0; mm < m; ++mm)
    for (int nn = 0; nn < n; ++nn)
      C[mm + nn * ldc] =
          reference_element(mm, nn, k, alpha, A, lda, B, ldb, beta, C[mm + nn * ldc]);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int run(int matArow, int matBcol, int matAcol) {
  size_t bytesA = (size_t)matArow * matAcol * sizeof(float);
  size_t bytesB = (size_t)matBcol * matAcol * sizeof(float);
  size_t bytesC = (size_t)matArow * matBcol * sizeof(float);
  float *A = malloc(bytesA), *B = malloc(bytesB), *C = malloc(bytesC), *ref = malloc(bytesC);
  for (long i = 0; i < (long)matArow * matAcol; ++i)
    A[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)matBcol * matAcol; ++i)
    B[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  for (long i = 0; i < (long)matArow * matBcol; ++i)
    C[i] = ref[i] = (float)(i % 5);

  llvm_hpvm_track_mem(A, bytesA);
  llvm_hpvm_track_mem(B, bytesB);
  llvm_hpvm_track_mem(C, bytesC);
  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  args->A = A;
  args->bytesA = bytesA;
  args->lda = matArow;
  args->B = B;
  args->bytesB = bytesB;
  args->ldb = matBcol;
  args->C = C;
  args->bytesC = bytesC;
  args->ldc = matArow;
  args->k = matAcol;
  args->alpha = 1.0f;
  args->beta = 0.5f;
  args->block_x = TILE_M;
  args->block_y = TILE_N;
  args->grid_x = matArow / TILE_M;
  args->grid_y = matBcol / TILE_N;
  void *sgemmDFG = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(sgemmDFG);
  llvm_hpvm_request_mem(C, bytesC);
  llvm_hpvm_untrack_mem(A);
  llvm_hpvm_untrack_mem(B);
  llvm_hpvm_untrack_mem(C);

  reference(matArow, matBcol, matAcol, 1.0f, A, matArow, B, matBcol, 0.5f, ref, matArow);
  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < (long)matArow * matBcol; ++i) {
    wrong += C[i] != ref[i];
    sum += C[i];
  }
  printf("sgemm: %dx%dx%d sum=%.3f wrong=%ld\n", matArow, matBcol, matAcol, sum, wrong);
  free(A);
  free(B);
  free(C);
  free(ref);
  free(args);
  return wrong != 0;
}

/* Times `runs` launches at M x N x K (multiples of the block sizes) against the
 * sequential reference, and checks 4096 sampled elements of C. */
static int bench(int m, int n, int k, int runs) {
  size_t bytesA = (size_t)m * k * sizeof(float), bytesB = (size_t)n * k * sizeof(float);
  size_t bytesC = (size_t)m * n * sizeof(float);
  float *A = malloc(bytesA), *B = malloc(bytesB), *C = calloc((size_t)m * n, sizeof(float));
  float *ref = calloc((size_t)m * n, sizeof(float));
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)n * k; ++i)
    B[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  llvm_hpvm_track_mem(A, bytesA);
  llvm_hpvm_track_mem(B, bytesB);
  llvm_hpvm_track_mem(C, bytesC);
  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  *args = (RootIn){A, bytesA, m, B, bytesB, n, C, bytesC, m, k, 1.0f, 0.0f,
                   TILE_M, TILE_N, m / TILE_M, n / TILE_N};
  double *times = malloc(sizeof(double) * runs);
  for (int r = 0; r < runs; ++r) {
    double start = now_ms();
    void *graph = __hpvm__launch(0, root, (void *)args);
    __hpvm__wait(graph);
    llvm_hpvm_request_mem(C, bytesC);
    times[r] = now_ms() - start;
  }
  qsort(times, runs, sizeof(double), compare_doubles);
  double start = now_ms();
  reference(m, n, k, 1.0f, A, m, B, n, 0.0f, ref, m);
  double sequential = now_ms() - start;
  long wrong = 0;
  for (long s = 0; s < 4096; ++s) {
    long i = (s * 2654435761L) % ((long)m * n);
    wrong += C[i] != ref[i];
  }
  double gflops = 2.0 * m * n * k / (times[runs / 2] * 1e6);
  printf("hpvm-c sgemm %dx%dx%d: median %.1f ms (min %.1f, max %.1f) (%.2f GFLOP/s) of %d, "
         "sequential C %.1f ms, speedup %.2fx, sampled wrong=%ld\n",
         m, n, k, times[runs / 2], times[0], times[runs - 1], gflops, runs, sequential,
         sequential / times[runs / 2], wrong);
  llvm_hpvm_untrack_mem(A);
  llvm_hpvm_untrack_mem(B);
  llvm_hpvm_untrack_mem(C);
  free(A), free(B), free(C), free(ref), free(args), free(times);
  return wrong != 0;
}

int main(int argc, char **argv) {
  __hpvm__init();
  int failed;
  if (argc >= 4) {
    int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
    int runs = argc > 4 ? atoi(argv[4]) : 5;
    if (m <= 0 || n <= 0 || k <= 0 || m % TILE_M || n % TILE_N || runs <= 0) {
      fprintf(stderr, "usage: sgemm [M N K [RUNS]] with M a multiple of %d, N of %d\n",
              TILE_M, TILE_N);
      return 2;
    }
    failed = bench(m, n, k, runs);
  } else {
    failed = run(128, 96, 64) + run(16, 8, 1) + run(48, 40, 33);
  }
  __hpvm__cleanup();
  return failed;
}
