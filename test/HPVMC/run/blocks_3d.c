// 3-D nodes in a 3-level hierarchy: root -> 1-D internal node of slabs along
// z -> 3-D internal node of blocks -> 3-D leaf of 4x2x2 instances. The leaf
// computes its global (x, y, z) from its own ids, its parent's and its
// grandparent's (__hpvm__getParentNode twice) and writes
// v[z][y][x] = 10000 z + 100 y + x + bias.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define LX 4
#define LY 2
#define LZ 2
#define BZ 2 /* blocks per slab along z */

typedef struct __attribute__((__packed__)) {
  int *v;
  size_t bytes_v;
  long nx, ny, nz;
  int bias;
  long blocks_x, blocks_y, slabs;
} RootIn;

void fill_leaf(int *v, size_t bytes_v, long nx, long ny, long nz, int bias) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, v);
  void *self = __hpvm__getNode();
  void *block = __hpvm__getParentNode(self);
  void *slab = __hpvm__getParentNode(block);
  long x = __hpvm__getNodeInstanceID_x(block) * __hpvm__getNumNodeInstances_x(self) +
           __hpvm__getNodeInstanceID_x(self);
  long y = __hpvm__getNodeInstanceID_y(block) * __hpvm__getNumNodeInstances_y(self) +
           __hpvm__getNodeInstanceID_y(self);
  long z = (__hpvm__getNodeInstanceID_x(slab) * __hpvm__getNumNodeInstances_z(block) +
            __hpvm__getNodeInstanceID_z(block)) *
               __hpvm__getNumNodeInstances_z(self) +
           __hpvm__getNodeInstanceID_z(self);
  if (x < nx && y < ny && z < nz)
    v[(z * ny + y) * nx + x] = (int)(10000 * z + 100 * y + x) + bias;
}

void fill_blocks(int *v, size_t bytes_v, long nx, long ny, long nz, int bias, long blocks_x,
                 long blocks_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, v);
  void *leaf = __hpvm__createNodeND(3, fill_leaf, LX, LY, LZ);
  for (int i = 0; i < 6; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

void fill_slabs(int *v, size_t bytes_v, long nx, long ny, long nz, int bias, long blocks_x,
                long blocks_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, v);
  void *blocks = __hpvm__createNodeND(3, fill_blocks, blocks_x, blocks_y, BZ);
  for (int i = 0; i < 8; ++i)
    __hpvm__bindIn(blocks, i, i, 0);
}

void fill_root(int *v, size_t bytes_v, long nx, long ny, long nz, int bias, long blocks_x,
               long blocks_y, long slabs) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, v);
  void *s = __hpvm__createNodeND(1, fill_slabs, slabs);
  for (int i = 0; i < 8; ++i)
    __hpvm__bindIn(s, i, i, 0);
}

static int run(long nx, long ny, long nz) {
  size_t bytes = nx * ny * nz * sizeof(int);
  int *v = malloc(bytes);
  for (long i = 0; i < nx * ny * nz; ++i)
    v[i] = -1;
  llvm_hpvm_track_mem(v, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  args->v = v;
  args->bytes_v = bytes;
  args->nx = nx;
  args->ny = ny;
  args->nz = nz;
  args->bias = 7;
  args->blocks_x = (nx + LX - 1) / LX;
  args->blocks_y = (ny + LY - 1) / LY;
  args->slabs = (nz + LZ * BZ - 1) / (LZ * BZ);
  void *dfg = __hpvm__launch(0, fill_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(v, bytes);
  long wrong = 0, sum = 0;
  for (long z = 0; z < nz; ++z)
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x) {
        int value = v[(z * ny + y) * nx + x];
        wrong += value != (int)(10000 * z + 100 * y + x) + 7;
        sum += value;
      }
  printf("blocks_3d: %ldx%ldx%ld slabs=%ld sum=%ld wrong=%ld\n", nx, ny, nz, args->slabs, sum,
         wrong);
  llvm_hpvm_untrack_mem(v);
  free(v);
  free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(16, 8, 8) + run(13, 5, 11) + run(1, 1, 1);
  __hpvm__cleanup();
  return failed;
}
