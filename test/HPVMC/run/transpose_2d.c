// 2-D nodes in a 2-level hierarchy: the root creates a 2-D grid of tiles
// (an internal node), each tile a 2-D leaf of 8x4 instances. The leaf finds
// its element from its own instance ids and its parent's
// (__hpvm__getParentNode), and skips the part of the last tiles outside the
// matrix: out[c][r] = alpha * in[r][c] for a rows x cols matrix.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE_X 8
#define TILE_Y 4

typedef struct __attribute__((__packed__)) {
  float *in;
  size_t bytes_in;
  float *out;
  size_t bytes_out;
  long rows, cols;
  float alpha;
  long tiles_x, tiles_y;
} RootIn;

void transpose_leaf(float *in, size_t bytes_in, float *out, size_t bytes_out, long rows,
                    long cols, float alpha) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *self = __hpvm__getNode();
  void *tile = __hpvm__getParentNode(self);
  long c = __hpvm__getNodeInstanceID_x(tile) * __hpvm__getNumNodeInstances_x(self) +
           __hpvm__getNodeInstanceID_x(self);
  long r = __hpvm__getNodeInstanceID_y(tile) * __hpvm__getNumNodeInstances_y(self) +
           __hpvm__getNodeInstanceID_y(self);
  if (r < rows && c < cols)
    out[c * rows + r] = alpha * in[r * cols + c];
}

void transpose_tile(float *in, size_t bytes_in, float *out, size_t bytes_out, long rows,
                    long cols, float alpha) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *leaf = __hpvm__createNodeND(2, transpose_leaf, TILE_X, TILE_Y);
  for (int i = 0; i < 7; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

void transpose_root(float *in, size_t bytes_in, float *out, size_t bytes_out, long rows,
                    long cols, float alpha, long tiles_x, long tiles_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *tiles = __hpvm__createNodeND(2, transpose_tile, tiles_x, tiles_y);
  for (int i = 0; i < 7; ++i)
    __hpvm__bindIn(tiles, i, i, 0);
}

static int run(long rows, long cols) {
  size_t bytes = rows * cols * sizeof(float);
  float *in = malloc(bytes), *out = malloc(bytes);
  for (long i = 0; i < rows * cols; ++i) {
    in[i] = (float)(i % 1000) - 300.0f;
    out[i] = 0.0f;
  }
  llvm_hpvm_track_mem(in, bytes);
  llvm_hpvm_track_mem(out, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  args->in = in;
  args->bytes_in = bytes;
  args->out = out;
  args->bytes_out = bytes;
  args->rows = rows;
  args->cols = cols;
  args->alpha = 0.25f;
  args->tiles_x = (cols + TILE_X - 1) / TILE_X;
  args->tiles_y = (rows + TILE_Y - 1) / TILE_Y;
  void *dfg = __hpvm__launch(0, transpose_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, bytes);
  long wrong = 0;
  double sum = 0;
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) {
      wrong += out[c * rows + r] != 0.25f * in[r * cols + c];
      sum += out[c * rows + r];
    }
  printf("transpose_2d: %ldx%ld tiles=%ldx%ld sum=%.2f wrong=%ld\n", rows, cols,
         args->tiles_y, args->tiles_x, sum, wrong);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(out);
  free(in);
  free(out);
  free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(64, 32) + run(37, 50) + run(1, 1);
  __hpvm__cleanup();
  return failed;
}
