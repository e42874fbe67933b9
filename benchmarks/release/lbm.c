// Parboil lbm as the HPVM release writes it: a root over a 2-D grid (y, z) of tiles, each a
// 1-D grid of instances along x (one per cell), the graph launched once per time step with
// the two lattices swapped.   hpvm-cc -O3 lbm.c -o lbm && ./lbm NX NY NZ STEPS RUNS
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "lbm_point.h"

typedef struct __attribute__((__packed__)) {
  float *src;
  size_t bytes_src;
  float *dst;
  size_t bytes_dst;
  int *obstacle;
  size_t bytes_obstacle;
  int nx, ny, nz;
  long block_x, grid_y, grid_z;
} RootIn;

void performStreamCollide(float *src, size_t bytes_src, float *dst, size_t bytes_dst,
                          int *obstacle, size_t bytes_obstacle, int nx, int ny, int nz) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(2, src, obstacle, 1, dst);
  void *thisNode = __hpvm__getNode();
  void *parentNode = __hpvm__getParentNode(thisNode);
  int x = __hpvm__getNodeInstanceID_x(thisNode);
  int y = __hpvm__getNodeInstanceID_x(parentNode);
  int z = __hpvm__getNodeInstanceID_y(parentNode);
  lbm_cell(src, dst, obstacle, nx, ny, nz, x, y, z);
}

void lbmLvl1(float *src, size_t bytes_src, float *dst, size_t bytes_dst, int *obstacle,
             size_t bytes_obstacle, int nx, int ny, int nz, long block_x) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, src, obstacle, 1, dst);
  void *node = __hpvm__createNodeND(1, performStreamCollide, block_x);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

void lbmLvl2(float *src, size_t bytes_src, float *dst, size_t bytes_dst, int *obstacle,
             size_t bytes_obstacle, int nx, int ny, int nz, long block_x, long grid_y,
             long grid_z) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, src, obstacle, 1, dst);
  void *node = __hpvm__createNodeND(2, lbmLvl1, grid_y, grid_z);
  for (int p = 0; p < 10; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 64, ny = argc > 2 ? atoi(argv[2]) : 64;
  int nz = argc > 3 ? atoi(argv[3]) : 32, steps = argc > 4 ? atoi(argv[4]) : 10;
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  long cells = (long)nx * ny * nz;
  size_t bytes = sizeof(float) * LBM_Q * cells, obstacle_bytes = sizeof(int) * cells;
  float *a = malloc(bytes), *b = malloc(bytes);
  int *obstacle = malloc(obstacle_bytes);
  double *times = malloc(sizeof(double) * runs);
  RootIn *args = malloc(sizeof(RootIn));
  __hpvm__init();
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    lbm_init(a, b, obstacle, nx, ny, nz);
    llvm_hpvm_track_mem(a, bytes);
    llvm_hpvm_track_mem(b, bytes);
    llvm_hpvm_track_mem(obstacle, obstacle_bytes);
    float *src = a, *dst = b;
    double start = bench_now_ms();
    for (int t = 0; t < steps; ++t) {
      *args = (RootIn){src, bytes, dst, bytes, obstacle, obstacle_bytes, nx, ny, nz, nx, ny, nz};
      void *dfg = __hpvm__launch(0, lbmLvl2, (void *)args);
      __hpvm__wait(dfg);
      float *swap = src;
      src = dst;
      dst = swap;
    }
    llvm_hpvm_request_mem(src, bytes);
    times[r] = bench_now_ms() - start;
    checksum = lbm_checksum(src, nx, ny, nz);
    llvm_hpvm_untrack_mem(a);
    llvm_hpvm_untrack_mem(b);
    llvm_hpvm_untrack_mem(obstacle);
  }
  bench_report("lbm", "hpvm", times, runs, checksum);
  __hpvm__cleanup();
  free(a), free(b), free(obstacle), free(times), free(args);
  return 0;
}
