// Leaves whose instances each sum products in a loop (hpvm-vectorize's
// contractions): every instance's sum computed at once by the runtime, then the rest of
// the leaf. Grids of 8x4 tiles of a 2-D leaf, each leaf a different shape of the loop:
//   nn        C[r][c] = sum_i A[r][i] * B[i][c], 32-bit int indices (checked for wrapping)
//   bfirst    the same with the x operand loaded first (the other operand order)
//   unfused   a product then a sum in two statements (no FMA)
//   bias      the sum starts from an input
//   reversed  B read from its last row up (a negative stride)
//   diagonal  A[r + c + i]: one operand indexed by both x and y, which the plan declines
// and nn once more with k = 0 (the guard skips the loop; the plan declines), and flat: a
// grid of C's elements without tiles. Each is checked bit for bit against the same loop in C,
// in the same order of operations. These sizes are below where contractions pay
// (hpvm_rt_contract_pays): run with HPVM_CONTRACT_MIN=1 to contract them.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE_X 8
#define TILE_Y 4

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes_a;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  int k, cols;
  float bias;
  long grid_x, grid_y;
} RootIn;

// The leaf's body sees a, b, c, k, cols, bias, row and col.
#define GRAPH(NAME, BODY)                                                                   \
  void NAME##_leaf(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c,            \
                   size_t bytes_c, int k, int cols, float bias) {                           \
    __hpvm__hint(CPU_TARGET);                                                               \
    __hpvm__attributes(2, a, b, 1, c);                                                      \
    void *self = __hpvm__getNode();                                                         \
    void *tile = __hpvm__getParentNode(self);                                               \
    int col = __hpvm__getNodeInstanceID_x(tile) * __hpvm__getNumNodeInstances_x(self) +     \
              __hpvm__getNodeInstanceID_x(self);                                            \
    int row = __hpvm__getNodeInstanceID_y(tile) * __hpvm__getNumNodeInstances_y(self) +     \
              __hpvm__getNodeInstanceID_y(self);                                            \
    BODY                                                                                    \
  }                                                                                         \
  void NAME##_tile(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c,            \
                   size_t bytes_c, int k, int cols, float bias) {                           \
    __hpvm__hint(CPU_TARGET);                                                               \
    __hpvm__attributes(2, a, b, 1, c);                                                      \
    void *leaf = __hpvm__createNodeND(2, NAME##_leaf, TILE_X, TILE_Y);                      \
    for (int i = 0; i < 9; ++i)                                                             \
      __hpvm__bindIn(leaf, i, i, 0);                                                        \
  }                                                                                         \
  void NAME##_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c,            \
                   size_t bytes_c, int k, int cols, float bias, long grid_x, long grid_y) { \
    __hpvm__hint(CPU_TARGET);                                                               \
    __hpvm__attributes(2, a, b, 1, c);                                                      \
    void *tiles = __hpvm__createNodeND(2, NAME##_tile, grid_x, grid_y);                     \
    for (int i = 0; i < 9; ++i)                                                             \
      __hpvm__bindIn(tiles, i, i, 0);                                                       \
  }                                                                                         \
  static float NAME##_reference(const float *a, const float *b, const float *c, int k,      \
                                int cols, float bias, int row, int col) {                   \
    (void)c;                                                                                \
    float value;                                                                            \
    BODY_REFERENCE_##NAME                                                                   \
    return value;                                                                           \
  }                                                                                         \
  __attribute__((noinline)) static void NAME##_run(RootIn *args) {                          \
    void *dfg = __hpvm__launch(0, NAME##_root, args);                                       \
    __hpvm__wait(dfg);                                                                      \
  }

#define NN_SUM(INIT, TERM)                                                                  \
  float sum = INIT;                                                                         \
  for (int i = 0; i < k; ++i)                                                               \
    sum += TERM;

#define BODY_REFERENCE_nn NN_SUM(0.0f, a[row * k + i] * b[i * cols + col]) value = sum;
GRAPH(nn, NN_SUM(0.0f, a[row * k + i] * b[i * cols + col]) c[row * cols + col] = sum;)

#define BODY_REFERENCE_bfirst NN_SUM(0.0f, b[i * cols + col] * a[row * k + i]) value = 2 * sum;
GRAPH(bfirst,
      NN_SUM(0.0f, b[i * cols + col] * a[row * k + i]) c[row * cols + col] = 2 * sum;)

#define UNFUSED_SUM                                                                         \
  float sum = 0.0f;                                                                         \
  for (int i = 0; i < k; ++i) {                                                             \
    float product = a[row * k + i] * b[i * cols + col];                                     \
    sum = sum + product;                                                                    \
  }
#define BODY_REFERENCE_unfused UNFUSED_SUM value = sum;
GRAPH(unfused, UNFUSED_SUM c[row * cols + col] = sum;)

#define BODY_REFERENCE_bias NN_SUM(bias, a[row * k + i] * b[i * cols + col]) value = sum;
GRAPH(bias, NN_SUM(bias, a[row * k + i] * b[i * cols + col]) c[row * cols + col] = sum;)

#define BODY_REFERENCE_reversed                                                             \
  NN_SUM(0.0f, a[row * k + i] * b[(k - 1 - i) * cols + col]) value = sum;
GRAPH(reversed,
      NN_SUM(0.0f, a[row * k + i] * b[(k - 1 - i) * cols + col]) c[row * cols + col] = sum;)

#define BODY_REFERENCE_diagonal NN_SUM(0.0f, a[row + col + i] * b[i * cols + col]) value = sum;
GRAPH(diagonal, NN_SUM(0.0f, a[row + col + i] * b[i * cols + col]) c[row * cols + col] = sum;)

// flat: the same product over one 2-D grid of the whole of C (no tiles), written as GPU
// kernels are: 64-bit indices from 32-bit ids. The compiler finds the loop's exit values in
// its preheader.
void flat_leaf(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               int k, int cols, float bias) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *self = __hpvm__getNode();
  int col = __hpvm__getNodeInstanceID_x(self);
  int row = __hpvm__getNodeInstanceID_y(self);
  float sum = 0.0f;
  for (int i = 0; i < k; ++i)
    sum += a[(long)row * k + i] * b[(long)i * cols + col];
  c[(long)row * cols + col] = sum;
}
void flat_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               int k, int cols, float bias, long grid_x, long grid_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(2, flat_leaf, grid_x * TILE_X, grid_y * TILE_Y);
  for (int i = 0; i < 9; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}
static float flat_reference(const float *a, const float *b, const float *c, int k, int cols,
                            float bias, int row, int col) {
  (void)c, (void)bias;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i)
    sum += a[(long)row * k + i] * b[(long)i * cols + col];
  return sum;
}
__attribute__((noinline)) static void flat_run(RootIn *args) {
  void *dfg = __hpvm__launch(0, flat_root, args);
  __hpvm__wait(dfg);
}

typedef void (*run_fn)(RootIn *);
typedef float (*reference_fn)(const float *, const float *, const float *, int, int, float,
                              int, int);

static int check(const char *name, run_fn run, reference_fn reference, long rows, long cols,
                 int k) {
  // Room for every index any leaf reads (diagonal reads up to rows + cols + k).
  long a_size = rows * (k + 1) + cols + k, b_size = (long)(k + 1) * cols;
  float *a = malloc(sizeof(float) * a_size), *b = malloc(sizeof(float) * b_size);
  float *c = calloc(rows * cols, sizeof(float));
  for (long i = 0; i < a_size; ++i)
    a[i] = (float)((i * 7) % 23) / 8.0f - 1.37f;
  for (long i = 0; i < b_size; ++i)
    b[i] = (float)((i * 11) % 19) / 4.0f - 2.11f;
  llvm_hpvm_track_mem(a, sizeof(float) * a_size);
  llvm_hpvm_track_mem(b, sizeof(float) * b_size);
  llvm_hpvm_track_mem(c, sizeof(float) * rows * cols);
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){a, sizeof(float) * a_size, b, sizeof(float) * b_size, c,
                   sizeof(float) * rows * cols, k, (int)cols, 0.625f,
                   cols / TILE_X, rows / TILE_Y};
  run(args);
  llvm_hpvm_request_mem(c, sizeof(float) * rows * cols);
  long wrong = 0;
  double total = 0;
  for (int r = 0; r < rows; ++r)
    for (int col = 0; col < cols; ++col) {
      wrong += c[r * cols + col] != reference(a, b, c, k, (int)cols, 0.625f, r, col);
      total += c[r * cols + col];
    }
  printf("contraction: %s %ldx%ldx%d sum=%.3f wrong=%ld\n", name, rows, cols, k, total, wrong);
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(b);
  llvm_hpvm_untrack_mem(c);
  free(a), free(b), free(c), free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = check("nn", nn_run, nn_reference, 36, 40, 21) +
               check("nn", nn_run, nn_reference, 100, 104, 300) +
               check("bfirst", bfirst_run, bfirst_reference, 28, 48, 17) +
               check("unfused", unfused_run, unfused_reference, 36, 40, 37) +
               check("bias", bias_run, bias_reference, 20, 24, 9) +
               check("reversed", reversed_run, reversed_reference, 12, 32, 13) +
               check("diagonal", diagonal_run, diagonal_reference, 16, 16, 11) +
               check("nn", nn_run, nn_reference, 8, 8, 0) +
               check("flat", flat_run, flat_reference, 44, 48, 29);
  __hpvm__cleanup();
  return failed;
}
