/* Host of sibling-grids.mlir: three launches of four sibling grids, every element checked. */
#include <hpvm/hpvm_memref.h>
#include <stdio.h>
#include <stdlib.h>

HPVM_MEMREF_DEFINE(vector_t, float, 1);
HPVM_MEMREF_DEFINE(matrix_t, float, 2);
float _mlir_ciface_run(vector_t *in, matrix_t *out, matrix_t *table, int64_t n, int64_t w,
                       int64_t h);

enum { N = 100, W = 37, H = 23 };

int main(void) {
  static float in[N], out[2][N], table[H][W];
  for (int i = 0; i < N; ++i)
    in[i] = (float)i;
  vector_t vin = {in, in, 0, {N}, {1}};
  matrix_t vout = {&out[0][0], &out[0][0], 0, {2, N}, {N, 1}};
  matrix_t vtable = {&table[0][0], &table[0][0], 0, {H, W}, {W, 1}};
  int launches = 0;
  float total = 0;
  for (; launches < 3; ++launches) {
    for (int i = 0; i < N; ++i)
      out[0][i] = out[1][i] = -1;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        table[y][x] = -1;
    total = _mlir_ciface_run(&vin, &vout, &vtable, N, W, H);
    for (int i = 0; i < N; ++i)
      if (out[0][i] != 2.0f * i || out[1][i] != i + 1.0f) {
        printf("launch %d: out[.][%d] = %g, %g; expected %g, %g\n", launches, i, out[0][i],
               out[1][i], 2.0 * i, i + 1.0);
        return 1;
      }
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        if (table[y][x] != (float)(x * y)) {
          printf("launch %d: table[%d][%d] = %g; expected %d\n", launches, y, x, table[y][x],
                 x * y);
          return 1;
        }
    if (total != N * (N - 1) / 2) {
      printf("launch %d: total %g; expected %d\n", launches, total, N * (N - 1) / 2);
      return 1;
    }
  }
  printf("sibling grids: ok (total %g, %d launches)\n", total, launches);
  return 0;
}
