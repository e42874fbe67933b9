/* Host of examples/sgemm.mlir for the integration test: odd sizes (not multiples of the 64x4
 * tile), compared exactly with the sequential reference of benchmarks/sgemm. */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>

#include "sgemm_ref.h"


int main(int argc, char **argv) {
  int M = argc > 1 ? atoi(argv[1]) : 100, N = argc > 2 ? atoi(argv[2]) : 70,
      K = argc > 3 ? atoi(argv[3]) : 33;
  float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
  float *C = malloc(sizeof(float) * M * N), *ref = malloc(sizeof(float) * M * N);
  sgemm_init(A, B, M, N, K);
  for (long i = 0; i < (long)M * N; ++i)
    C[i] = -12345.0f; /* every element must be written */
  hpvm_memref_f32_2d_t a = hpvm_memref_f32_2d(A, M, K), b = hpvm_memref_f32_2d(B, K, N),
                       c = hpvm_memref_f32_2d(C, M, N);
  _mlir_ciface_sgemm(&a, &b, &c);
  sgemm_seq(A, B, ref, M, N, K);
  int mismatches = sgemm_check(C, ref, M, N, 0.0f);
  printf("sgemm %dx%dx%d mismatches: %d\n", M, N, K, mismatches);
  free(A), free(B), free(C), free(ref);
  return mismatches != 0;
}
