// Parboil sgemm as the HPVM release writes it: a root over a 2-D grid of tiles, each a 2-D
// grid of instances (parent instance ids give the tile), one instance per element of C.
//   hpvm-cc -O3 sgemm.c -o sgemm && ./sgemm M N K RUNS
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "sgemm_point.h"

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
  sgemm_point(A, lda, B, ldb, C, ldc, k, alpha, beta, gx * dimx + lx, gy * dimy + ly);
}

void basicSgemmLvl1(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb,
                    float *C, size_t bytesC, int ldc, int k, float alpha, float beta,
                    long block_x, long block_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, C, 1, C);
  void *node = __hpvm__createNodeND(2, mysgemmNT, block_x, block_y);
  for (int p = 0; p < 12; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

void basicSgemmLvl2(float *A, size_t bytesA, int lda, float *B, size_t bytesB, int ldb,
                    float *C, size_t bytesC, int ldc, int k, float alpha, float beta,
                    long block_x, long block_y, long grid_x, long grid_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, A, B, C, 1, C);
  void *node = __hpvm__createNodeND(2, basicSgemmLvl1, grid_x, grid_y);
  for (int p = 0; p < 14; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(int argc, char **argv) {
  int m = argc > 1 ? atoi(argv[1]) : 256, n = argc > 2 ? atoi(argv[2]) : 256;
  int k = argc > 3 ? atoi(argv[3]) : 256, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t bytesA = sizeof(float) * m * k, bytesB = sizeof(float) * n * k,
         bytesC = sizeof(float) * m * n;
  float *A = malloc(bytesA), *B = malloc(bytesB), *C = malloc(bytesC);
  double *times = malloc(sizeof(double) * runs);
  RootIn *args = malloc(sizeof(RootIn));
  __hpvm__init();
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    sgemm_init(A, B, C, m, n, k);
    llvm_hpvm_track_mem(A, bytesA);
    llvm_hpvm_track_mem(B, bytesB);
    llvm_hpvm_track_mem(C, bytesC);
    double start = bench_now_ms();
    *args = (RootIn){A, bytesA, m, B, bytesB, n, C, bytesC, m, k, 1.5f, 0.5f,
                     SGEMM_TILE_M, SGEMM_TILE_N, m / SGEMM_TILE_M, n / SGEMM_TILE_N};
    void *dfg = __hpvm__launch(0, basicSgemmLvl2, (void *)args);
    __hpvm__wait(dfg);
    llvm_hpvm_request_mem(C, bytesC);
    times[r] = bench_now_ms() - start;
    checksum = 0;
    for (long i = 0; i < (long)m * n; ++i)
      checksum += C[i] * (double)(i % 7 + 1);
    llvm_hpvm_untrack_mem(A);
    llvm_hpvm_untrack_mem(B);
    llvm_hpvm_untrack_mem(C);
  }
  bench_report("sgemm", "hpvm", times, runs, checksum);
  __hpvm__cleanup();
  free(A), free(B), free(C), free(times), free(args);
  return 0;
}
