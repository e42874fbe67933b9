/* Host of strided_copy.mlir: transposes an n x m matrix one column copy per instance. */
#include <hpvm/hpvm_memref.h>
#include <stdio.h>
#include <stdlib.h>

void _mlir_ciface_transpose(hpvm_memref_f32_2d_t *a, hpvm_memref_f32_2d_t *c, long m);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 37, m = argc > 2 ? atol(argv[2]) : 23;
  float *a = malloc(sizeof(float) * n * m), *c = malloc(sizeof(float) * n * m);
  for (long i = 0; i < n * m; ++i) {
    a[i] = (float)i * 0.5f;
    c[i] = -1.0f;
  }
  hpvm_memref_f32_2d_t A = hpvm_memref_f32_2d(a, n, m), C = hpvm_memref_f32_2d(c, m, n);
  _mlir_ciface_transpose(&A, &C, m);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < m; ++j)
      wrong += c[j * n + i] != a[i * m + j];
  printf("strided copy %ldx%ld wrong=%ld\n", n, m, wrong);
  free(a);
  free(c);
  return wrong != 0;
}
