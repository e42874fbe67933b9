// Parboil stencil as the HPVM release writes it: a root over a 3-D grid of
// tiles, each a 3-D grid of instances (parent and own instance ids), the graph
// launched once per time step with the buffers swapped.
//   hpvm-cc -O3 stencil.c -o stencil && ./stencil NX NY NZ STEPS RUNS
// prints the median time of RUNS runs of STEPS steps and a checksum.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timer.h"
#include "stencil_point.h"

typedef struct __attribute__((__packed__)) {
  float c0, c1;
  float *A0;
  size_t bytes_A0;
  float *Anext;
  size_t bytes_Anext;
  int nx, ny, nz;
  long blockDimX, blockDimY, blockDimZ;
  long gridDimX, gridDimY, gridDimZ;
} RootIn;

void naive_kernel(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                  size_t bytes_Anext, int nx, int ny, int nz) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(2, A0, Anext, 1, Anext);
  void *thisNode = __hpvm__getNode();
  void *parentNode = __hpvm__getParentNode(thisNode);
  int lx = __hpvm__getNodeInstanceID_x(thisNode);
  int ly = __hpvm__getNodeInstanceID_y(thisNode);
  int lz = __hpvm__getNodeInstanceID_z(thisNode);
  int gx = __hpvm__getNodeInstanceID_x(parentNode);
  int gy = __hpvm__getNodeInstanceID_y(parentNode);
  int gz = __hpvm__getNodeInstanceID_z(parentNode);
  int dimx = __hpvm__getNumNodeInstances_x(thisNode);
  int dimy = __hpvm__getNumNodeInstances_y(thisNode);
  int dimz = __hpvm__getNumNodeInstances_z(thisNode);
  stencil_point(c0, c1, A0, Anext, nx, ny, nz, gx * dimx + lx + 1, gy * dimy + ly + 1,
                gz * dimz + lz + 1);
}

void stencilLvl1(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                 size_t bytes_Anext, int nx, int ny, int nz, long blockDimX, long blockDimY,
                 long blockDimZ) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A0, Anext, 1, Anext);
  void *node = __hpvm__createNodeND(3, naive_kernel, blockDimX, blockDimY, blockDimZ);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

void stencilLvl2(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                 size_t bytes_Anext, int nx, int ny, int nz, long blockDimX, long blockDimY,
                 long blockDimZ, long gridDimX, long gridDimY, long gridDimZ) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A0, Anext, 1, Anext);
  void *node = __hpvm__createNodeND(3, stencilLvl1, gridDimX, gridDimY, gridDimZ);
  for (int p = 0; p < 12; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 128, ny = argc > 2 ? atoi(argv[2]) : 128;
  int nz = argc > 3 ? atoi(argv[3]) : 32, steps = argc > 4 ? atoi(argv[4]) : 10;
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  size_t bytes = (size_t)nx * ny * nz * sizeof(float);
  float *A0 = malloc(bytes), *Anext = malloc(bytes);
  double *times = malloc(sizeof(double) * runs);
  __hpvm__init();
  RootIn *args = malloc(sizeof(RootIn));
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    stencil_init(A0, Anext, nx, ny, nz);
    llvm_hpvm_track_mem(A0, bytes);
    llvm_hpvm_track_mem(Anext, bytes);
    float *in = A0, *out = Anext;
    double start = bench_now_ms();
    for (int t = 0; t < steps; ++t) {
      *args = (RootIn){1.0f / 6, 1.0f / 36, in, bytes, out, bytes, nx, ny, nz,
                       STENCIL_BLOCK_X, STENCIL_BLOCK_Y, STENCIL_BLOCK_Z,
                       (nx - 2 + STENCIL_BLOCK_X - 1) / STENCIL_BLOCK_X,
                       (ny - 2 + STENCIL_BLOCK_Y - 1) / STENCIL_BLOCK_Y,
                       (nz - 2 + STENCIL_BLOCK_Z - 1) / STENCIL_BLOCK_Z};
      void *dfg = __hpvm__launch(0, stencilLvl2, (void *)args);
      __hpvm__wait(dfg);
      float *swap = in;
      in = out;
      out = swap;
    }
    llvm_hpvm_request_mem(in, bytes);
    times[r] = bench_now_ms() - start;
    checksum = stencil_checksum(in, nx, ny, nz);
    llvm_hpvm_untrack_mem(A0);
    llvm_hpvm_untrack_mem(Anext);
  }
  bench_report("stencil", "hpvm", times, runs, checksum);
  __hpvm__cleanup();
  free(A0), free(Anext), free(args), free(times);
  return 0;
}
