// sgemm_blocked.h - sgemm (HPVM-C) register-blocked as fast GPU sgemms are written: C = A * B
// (A m x k, B k x n, row-major). A grid of tiles, each computing a BM x BN block of C with
// TX x TY instances; each instance computes RM x RN elements of it, rows ty + TY*i and columns
// tx + TX*j (so that neighbouring instances touch neighbouring columns). For each BK-wide
// strip of k, the tile's instances copy the strip's BM x BK part of A (transposed) and BK x BN
// part of B into per-tile memory (__hpvm__malloc: work-group memory on devices), wait at a
// barrier, accumulate RM x RN products per step of the strip out of registers, and wait
// again (the fixed loops unrolled, so that the RM x RN sums live in registers). Any sizes: out-of-range elements load as 0 and are not stored. The barriers sit in
// a loop: the tile runs only on a device. Shared by the benchmark (sgemm_blocked.c), its CUDA
// twin (sgemm_blocked_cuda.cu) and test/Integration/Devices/device-only.test.
#ifndef HPVM_BENCH_GPU_SGEMM_BLOCKED_H
#define HPVM_BENCH_GPU_SGEMM_BLOCKED_H
#include <hpvm/hpvm.h>
#include <stdlib.h>

#define BM 128
#define BN 128
#define BK 8
#define TX 16
#define TY 16
#define RM (BM / TY)
#define RN (BN / TX)

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytes_A;
  float *B;
  size_t bytes_B;
  float *C;
  size_t bytes_C;
  int m, n, k;
} RootIn;

typedef struct __attribute__((__packed__)) {
  float *As;
  size_t bytes_As;
  float *Bs;
  size_t bytes_Bs;
} TileMemory;

TileMemory blocked_memory(void) {
  __hpvm__hint(GPU_TARGET);
  size_t bytes_As = BK * BM * sizeof(float), bytes_Bs = BK * BN * sizeof(float);
  void *As = __hpvm__malloc(bytes_As);
  void *Bs = __hpvm__malloc(bytes_Bs);
  __hpvm__return(4, As, bytes_As, Bs, bytes_Bs);
}

void blocked_leaf(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
                  int m, int n, int k, float *As, size_t bytes_As, float *Bs, size_t bytes_Bs) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(4, A, B, As, Bs, 3, C, As, Bs);
  void *self = __hpvm__getNode();
  void *parent = __hpvm__getParentNode(self);
  int tx = __hpvm__getNodeInstanceID_x(self), ty = __hpvm__getNodeInstanceID_y(self);
  int col0 = __hpvm__getNodeInstanceID_x(parent) * BN;
  int row0 = __hpvm__getNodeInstanceID_y(parent) * BM;
  int t = ty * TX + tx;
  float acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j)
      acc[i][j] = 0.0f;
  for (int p0 = 0; p0 < k; p0 += BK) {
    // BM * BK elements of A and BK * BN of B, TX * TY instances: each copies a few of each.
    for (int e = t; e < BM * BK; e += TX * TY) {
      int r = e / BK, q = e % BK;
      int row = row0 + r, p = p0 + q;
      As[q * BM + r] = row < m && p < k ? A[(long)row * k + p] : 0.0f;
    }
    for (int e = t; e < BK * BN; e += TX * TY) {
      int q = e / BN, c = e % BN;
      int col = col0 + c, p = p0 + q;
      Bs[q * BN + c] = col < n && p < k ? B[(long)p * n + col] : 0.0f;
    }
    __hpvm__barrier();
#pragma unroll
    for (int q = 0; q < BK; ++q) {
      float a[RM], b[RN];
#pragma unroll
      for (int i = 0; i < RM; ++i)
        a[i] = As[q * BM + ty + TY * i];
#pragma unroll
      for (int j = 0; j < RN; ++j)
        b[j] = Bs[q * BN + tx + TX * j];
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j)
          acc[i][j] += a[i] * b[j];
    }
    __hpvm__barrier();
  }
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      int row = row0 + ty + TY * i, col = col0 + tx + TX * j;
      if (row < m && col < n)
        C[(long)row * n + col] = acc[i][j];
    }
}

void blocked_tile(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
                  int m, int n, int k) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *memory = __hpvm__createNodeND(0, blocked_memory);
  void *leaf = __hpvm__createNodeND(2, blocked_leaf, (long)TX, (long)TY);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
  for (int p = 0; p < 4; ++p)
    __hpvm__edge(memory, leaf, HPVM_ALL_TO_ALL, p, 9 + p, 0);
}

void blocked_root(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
                  int m, int n, int k) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *tiles = __hpvm__createNodeND(2, blocked_tile, (long)(n + BN - 1) / BN,
                                     (long)(m + BM - 1) / BM);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(tiles, p, p, 0);
}

// The launch block of blocked_root() for C = A * B.
static inline RootIn *sgemm_blocked_args(float *A, float *B, float *C, int m, int n, int k) {
  RootIn *args = malloc(sizeof(RootIn));
  args->A = A;
  args->bytes_A = (size_t)m * k * sizeof(float);
  args->B = B;
  args->bytes_B = (size_t)k * n * sizeof(float);
  args->C = C;
  args->bytes_C = (size_t)m * n * sizeof(float);
  args->m = m;
  args->n = n;
  args->k = k;
  return args;
}
#endif
