// Ported in the style of the Parboil sgemm of the HPVM release: C = alpha A B^T
// + beta C with column-major A (m x k), B (n x k) and C (m x n), pointer/size
// pairs, a root with a 2-D grid of 2-D blocks (parent instance ids give the
// block), __hpvm__hint(DEVICE) (hpvm-cc defines DEVICE as CPU_TARGET),
// __hpvm__attributes, and the buffers tracked, requested and untracked.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE_M 16
#define TILE_N 8

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

int main(void) {
  __hpvm__init();
  int failed = run(128, 96, 64) + run(16, 8, 1) + run(48, 40, 33);
  __hpvm__cleanup();
  return failed;
}
