// Leaves whose rows run together (instance coarsening): a dot product per
// element, C[r][c] = sum_k A[r][k] * B[k][c], whose load of B does not depend
// on the row (r, the y id) and so is shared by a block of rows. Once as a flat
// 2-D grid with a row count that leaves rows over after whole blocks, once as
// a grid of tiles 8 wide and 12 high (a block of 8 rows fits once per tile,
// the other 4 rows go one by one). Checked bit for bit against the same loop
// in C (same order of operations per element).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE_X 8
#define TILE_Y 12

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes_a;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  long k, cols;
  long grid_x, grid_y;
} RootIn;

void dot_flat(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
              long k, long cols) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *self = __hpvm__getNode();
  long col = __hpvm__getNodeInstanceID_x(self);
  long row = __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (long i = 0; i < k; ++i)
    sum = sum + a[row * k + i] * b[i * cols + col];
  c[row * cols + col] = sum;
}

void dot_tiled(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               long k, long cols) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *self = __hpvm__getNode();
  void *tile = __hpvm__getParentNode(self);
  long col = __hpvm__getNodeInstanceID_x(tile) * __hpvm__getNumNodeInstances_x(self) +
             __hpvm__getNodeInstanceID_x(self);
  long row = __hpvm__getNodeInstanceID_y(tile) * __hpvm__getNumNodeInstances_y(self) +
             __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (long i = 0; i < k; ++i)
    sum = sum + a[row * k + i] * b[i * cols + col];
  c[row * cols + col] = sum;
}

void flat_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               long k, long cols, long grid_x, long grid_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(2, dot_flat, grid_x, grid_y);
  for (int i = 0; i < 8; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

void tile_node(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               long k, long cols) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(2, dot_tiled, TILE_X, TILE_Y);
  for (int i = 0; i < 8; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

void tiled_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
                long k, long cols, long grid_x, long grid_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *tiles = __hpvm__createNodeND(2, tile_node, grid_x, grid_y);
  for (int i = 0; i < 8; ++i)
    __hpvm__bindIn(tiles, i, i, 0);
}

__attribute__((noinline)) static void run_flat(RootIn *args) {
  void *dfg = __hpvm__launch(0, flat_root, args);
  __hpvm__wait(dfg);
}

__attribute__((noinline)) static void run_tiled(RootIn *args) {
  void *dfg = __hpvm__launch(0, tiled_root, args);
  __hpvm__wait(dfg);
}

static int run(const char *name, int tiled, long rows, long cols, long k) {
  float *a = malloc(sizeof(float) * rows * k), *b = malloc(sizeof(float) * k * cols);
  float *c = calloc(rows * cols, sizeof(float));
  for (long i = 0; i < rows * k; ++i)
    a[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < k * cols; ++i)
    b[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  llvm_hpvm_track_mem(a, sizeof(float) * rows * k);
  llvm_hpvm_track_mem(b, sizeof(float) * k * cols);
  llvm_hpvm_track_mem(c, sizeof(float) * rows * cols);
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){a, sizeof(float) * rows * k, b, sizeof(float) * k * cols, c,
                   sizeof(float) * rows * cols, k, cols,
                   tiled ? cols / TILE_X : cols, tiled ? rows / TILE_Y : rows};
  if (tiled)
    run_tiled(args);
  else
    run_flat(args);
  llvm_hpvm_request_mem(c, sizeof(float) * rows * cols);
  long wrong = 0;
  double total = 0;
  for (long r = 0; r < rows; ++r)
    for (long col = 0; col < cols; ++col) {
      float sum = 0.0f;
      for (long i = 0; i < k; ++i)
        sum = sum + a[r * k + i] * b[i * cols + col];
      wrong += c[r * cols + col] != sum;
      total += c[r * cols + col];
    }
  printf("coarsened: %s %ldx%ldx%ld sum=%.3f wrong=%ld\n", name, rows, cols, k, total, wrong);
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(b);
  llvm_hpvm_untrack_mem(c);
  free(a), free(b), free(c), free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run("flat", 0, 37, 45, 19) + run("flat", 0, 8, 16, 3) +
               run("tiled", 1, 36, 32, 21) + run("tiled", 1, 12, 8, 1);
  __hpvm__cleanup();
  return failed;
}
