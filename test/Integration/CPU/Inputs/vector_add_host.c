/* Host of examples/vector_add.mlir for the integration test: an odd size, checked against the
 * reference of benchmarks/common. */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>

#include "small_ref.h"


int main(void) {
  long n = 1000003;
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  float *c = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  vadd_init(a, b, n);
  for (long i = 0; i < n; ++i)
    c[i] = -1.0f;
  hpvm_memref_f32_1d_t A = hpvm_memref_f32_1d(a, n), B = hpvm_memref_f32_1d(b, n),
                       C = hpvm_memref_f32_1d(c, n);
  _mlir_ciface_vadd(&A, &B, &C, n);
  vadd_ref(a, b, ref, n);
  long mismatches = small_check_float(c, ref, n);
  printf("vector add n=%ld mismatches: %ld\n", n, mismatches);
  free(a), free(b), free(c), free(ref);
  return mismatches != 0;
}
