/* Host of examples/stencil.mlir for the integration test: compared exactly with the sequential
 * reference of benchmarks/stencil (same summation order, no contraction). */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_ref.h"


int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 19, ny = argc > 2 ? atoi(argv[2]) : 13,
      nz = argc > 3 ? atoi(argv[3]) : 7, iterations = argc > 4 ? atoi(argv[4]) : 5;
  long n = (long)nx * ny * nz;
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  float *ra = malloc(sizeof(float) * n), *rb = malloc(sizeof(float) * n);
  stencil_init(a, nx, ny, nz);
  memcpy(b, a, sizeof(float) * n);
  memcpy(ra, a, sizeof(float) * n);
  memcpy(rb, a, sizeof(float) * n);
  hpvm_memref_f32_1d_t A = hpvm_memref_f32_1d(a, n), B = hpvm_memref_f32_1d(b, n);
  _mlir_ciface_stencil(&A, &B, nx, ny, nz, iterations);
  float *ref = stencil_seq(ra, rb, nx, ny, nz, iterations);
  float *result = iterations % 2 == 0 ? a : b;
  int mismatches = stencil_check(result, ref, n, 0.0f);
  printf("stencil %dx%dx%d x%d mismatches: %d\n", nx, ny, nz, iterations, mismatches);
  free(a), free(b), free(ra), free(rb);
  return mismatches != 0;
}
