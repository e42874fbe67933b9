/* Host of one-to-one.mlir: out[y][x] = in[y][x]^2 + x and rowsOut[y][x] = in[y][0]. */
#include <hpvm/hpvm_memref.h>
#include <stdio.h>
#include <stdlib.h>

void _mlir_ciface_run(hpvm_memref_f32_2d_t *in, hpvm_memref_f32_2d_t *out,
                      hpvm_memref_f32_2d_t *rows_out);

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 37, cols = argc > 2 ? atol(argv[2]) : 5;
  float *in = malloc(sizeof(float) * rows * cols), *out = calloc(rows * cols, sizeof(float));
  float *rows_out = calloc(rows * cols, sizeof(float));
  for (long i = 0; i < rows * cols; ++i)
    in[i] = (float)(i % 13) - 6.0f;
  hpvm_memref_f32_2d_t a = hpvm_memref_f32_2d(in, rows, cols), o = hpvm_memref_f32_2d(out, rows, cols),
                       r = hpvm_memref_f32_2d(rows_out, rows, cols);
  _mlir_ciface_run(&a, &o, &r);
  long wrong = 0;
  for (long y = 0; y < rows; ++y)
    for (long x = 0; x < cols; ++x) {
      float v = in[y * cols + x];
      wrong += out[y * cols + x] != v * v + (float)x;
      wrong += rows_out[y * cols + x] != in[y * cols];
    }
  printf("rows=%ld cols=%ld wrong=%ld\n", rows, cols, wrong);
  free(in), free(out), free(rows_out);
  return wrong != 0;
}
