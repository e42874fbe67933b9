// Per-tile reduction with scratch memory: every tile (an instance of the
// internal node `tile`) has an allocation leaf that gets TILE floats of
// scratch memory with __hpvm__malloc and passes the pointer to the 1-D
// leaf `tile_sum` over an edge. Each instance copies its element into the
// scratch memory, __hpvm__barrier waits for the whole tile, then instance 0
// adds the tile up. The last tile may be partial.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE 64

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes_x;
  float *sums;
  size_t bytes_sums;
  long n;
  long scratch_bytes;
  long tiles;
} RootIn;

typedef struct __attribute__((__packed__)) {
  float *scratch;
  size_t bytes_scratch;
} AllocOut;

AllocOut tile_alloc(long bytes) {
  __hpvm__hint(CPU_TARGET);
  void *scratch = __hpvm__malloc(bytes);
  __hpvm__return(2, scratch, bytes);
}

void tile_sum(float *x, size_t bytes_x, float *sums, size_t bytes_sums, float *scratch,
              size_t bytes_scratch, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, x, scratch, 2, sums, scratch);
  void *self = __hpvm__getNode();
  long lane = __hpvm__getNodeInstanceID_x(self);
  long width = __hpvm__getNumNodeInstances_x(self);
  long tile = __hpvm__getNodeInstanceID_x(__hpvm__getParentNode(self));
  long g = tile * width + lane;
  scratch[lane] = g < n ? x[g] : 0.0f;
  __hpvm__barrier();
  if (lane == 0) {
    float sum = 0.0f;
    for (long k = 0; k < width; ++k)
      sum += scratch[k];
    sums[tile] = sum;
  }
}

void tile(float *x, size_t bytes_x, float *sums, size_t bytes_sums, long n,
          long scratch_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, sums);
  void *alloc = __hpvm__createNodeND(0, tile_alloc);
  void *lanes = __hpvm__createNodeND(1, tile_sum, TILE);
  __hpvm__bindIn(alloc, 5, 0, 0);
  __hpvm__bindIn(lanes, 0, 0, 0);
  __hpvm__bindIn(lanes, 1, 1, 0);
  __hpvm__bindIn(lanes, 2, 2, 0);
  __hpvm__bindIn(lanes, 3, 3, 0);
  __hpvm__edge(alloc, lanes, HPVM_ALL_TO_ALL, 0, 4, 0);
  __hpvm__edge(alloc, lanes, HPVM_ALL_TO_ALL, 1, 5, 0);
  __hpvm__bindIn(lanes, 4, 6, 0);
}

void tile_root(float *x, size_t bytes_x, float *sums, size_t bytes_sums, long n,
               long scratch_bytes, long tiles) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, sums);
  void *t = __hpvm__createNodeND(1, tile, tiles);
  for (int i = 0; i < 6; ++i)
    __hpvm__bindIn(t, i, i, 0);
}

static int run(long n) {
  long tiles = (n + TILE - 1) / TILE;
  float *x = malloc(n * sizeof(float)), *sums = malloc(tiles * sizeof(float));
  for (long i = 0; i < n; ++i)
    x[i] = (float)(i % 17) - 4.0f;
  llvm_hpvm_track_mem(x, n * sizeof(float));
  llvm_hpvm_track_mem(sums, tiles * sizeof(float));
  RootIn *args = malloc(sizeof(RootIn));
  args->x = x;
  args->bytes_x = n * sizeof(float);
  args->sums = sums;
  args->bytes_sums = tiles * sizeof(float);
  args->n = n;
  args->scratch_bytes = TILE * sizeof(float);
  args->tiles = tiles;
  void *dfg = __hpvm__launch(0, tile_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(sums, tiles * sizeof(float));
  long wrong = 0;
  double total = 0;
  for (long t = 0; t < tiles; ++t) {
    float sum = 0.0f;
    for (long k = 0; k < TILE; ++k)
      sum += t * TILE + k < n ? x[t * TILE + k] : 0.0f;
    wrong += sums[t] != sum;
    total += sums[t];
  }
  printf("tile_reduction: n=%ld tiles=%ld total=%.1f wrong=%ld\n", n, tiles, total, wrong);
  llvm_hpvm_untrack_mem(x);
  llvm_hpvm_untrack_mem(sums);
  free(x);
  free(sums);
  free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(100003) + run(65) + run(64) + run(1);
  __hpvm__cleanup();
  return failed;
}
