// sgemm_tiled.h - tiled sgemm (HPVM-C) as GPU programs are written: C = A * B (A m x k,
// B k x n, row-major) over a grid of TS x TS tiles. Each tile has an allocation node with two
// TS x TS scratch tiles (__hpvm__malloc: work-group memory on devices) and a TS x TS leaf that,
// for each TS-wide strip of k, loads one element of A and one of B into them, waits at a
// barrier, adds up its row of the A tile times its column of the B tile, and waits again
// before the next strip. Sizes need not be multiples of TS. The barriers sit in a loop, which
// the CPU backend cannot split yet: the tile runs only on a device. Shared by the benchmark
// (sgemm_tiled.c) and test/Integration/Devices/Inputs/tiled_sgemm.c.
#ifndef HPVM_BENCH_OPENCL_SGEMM_TILED_H
#define HPVM_BENCH_OPENCL_SGEMM_TILED_H
#include <hpvm/hpvm.h>
#include <stdlib.h>

#define TS 16

typedef struct __attribute__((__packed__)) {
  float *A;
  size_t bytes_A;
  float *B;
  size_t bytes_B;
  float *C;
  size_t bytes_C;
  int m, n, k;
  long tile_bytes;
} RootIn;

typedef struct __attribute__((__packed__)) {
  float *As;
  size_t bytes_As;
  float *Bs;
  size_t bytes_Bs;
} TileMemory;

TileMemory tile_memory(long bytes) {
  __hpvm__hint(GPU_TARGET);
  void *As = __hpvm__malloc(bytes);
  void *Bs = __hpvm__malloc(bytes);
  __hpvm__return(4, As, bytes, Bs, bytes);
}

void tile_leaf(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C,
               int m, int n, int k, float *As, size_t bytes_As, float *Bs, size_t bytes_Bs) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(4, A, B, As, Bs, 3, C, As, Bs);
  void *self = __hpvm__getNode();
  void *parent = __hpvm__getParentNode(self);
  int tx = __hpvm__getNodeInstanceID_x(self), ty = __hpvm__getNodeInstanceID_y(self);
  int col = __hpvm__getNodeInstanceID_x(parent) * TS + tx;
  int row = __hpvm__getNodeInstanceID_y(parent) * TS + ty;
  float sum = 0.0f;
  for (int p0 = 0; p0 < k; p0 += TS) {
    As[ty * TS + tx] = row < m && p0 + tx < k ? A[(long)row * k + p0 + tx] : 0.0f;
    Bs[ty * TS + tx] = col < n && p0 + ty < k ? B[(long)(p0 + ty) * n + col] : 0.0f;
    __hpvm__barrier();
    for (int p = 0; p < TS; ++p)
      sum += As[ty * TS + p] * Bs[p * TS + tx];
    __hpvm__barrier();
  }
  if (row < m && col < n)
    C[(long)row * n + col] = sum;
}

void tile(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C, int m,
          int n, int k, long tile_bytes) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *memory = __hpvm__createNodeND(0, tile_memory);
  void *leaf = __hpvm__createNodeND(2, tile_leaf, (long)TS, (long)TS);
  __hpvm__bindIn(memory, 9, 0, 0);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
  for (int p = 0; p < 4; ++p)
    __hpvm__edge(memory, leaf, HPVM_ALL_TO_ALL, p, 9 + p, 0);
}

void root(float *A, size_t bytes_A, float *B, size_t bytes_B, float *C, size_t bytes_C, int m,
          int n, int k, long tile_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A, B, 1, C);
  void *tiles = __hpvm__createNodeND(2, tile, (long)(n + TS - 1) / TS, (long)(m + TS - 1) / TS);
  for (int p = 0; p < 10; ++p)
    __hpvm__bindIn(tiles, p, p, 0);
}

// The launch block of root() for C = A * B.
static inline RootIn *sgemm_tiled_args(float *A, float *B, float *C, int m, int n, int k) {
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
  args->tile_bytes = TS * TS * sizeof(float);
  return args;
}
#endif
