/* Host of streaming.mlir: row k holds i + k; its result is 2 * sum_i (i + k) + k. */
#include <hpvm/hpvm_memref.h>
#include <stdio.h>
#include <stdlib.h>

void _mlir_ciface_run(hpvm_memref_f32_2d_t *in, hpvm_memref_f32_2d_t *scaled,
                      hpvm_memref_f32_1d_t *out, int64_t items, int64_t n);

int main(int argc, char **argv) {
  long items = argc > 1 ? atol(argv[1]) : 32, n = argc > 2 ? atol(argv[2]) : 100;
  float *in = malloc(sizeof(float) * items * n), *scaled = calloc(items * n, sizeof(float));
  float *out = calloc(items, sizeof(float));
  for (long k = 0; k < items; ++k)
    for (long i = 0; i < n; ++i)
      in[k * n + i] = (float)(i + k);
  hpvm_memref_f32_2d_t a = hpvm_memref_f32_2d(in, items, n), s = hpvm_memref_f32_2d(scaled, items, n);
  hpvm_memref_f32_1d_t o = hpvm_memref_f32_1d(out, items);
  _mlir_ciface_run(&a, &s, &o, items, n);
  long wrong = 0;
  for (long k = 0; k < items; ++k) {
    double expected = 2.0 * ((double)n * (n - 1) / 2.0 + (double)n * k) + (double)k;
    if (out[k] != (float)expected) {
      if (wrong < 5)
        printf("item %ld: got %.1f, expected %.1f\n", k, out[k], expected);
      ++wrong;
    }
  }
  printf("items=%ld n=%ld wrong=%ld\n", items, n, wrong);
  return wrong != 0;
}
