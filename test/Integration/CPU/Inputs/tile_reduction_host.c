/* Host of examples/tile_reduction.mlir: per-tile sums compared exactly with the reference. */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>

#include "small_ref.h"


int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100003, tiles = tilesum_ntiles(n);
  float *x = malloc(sizeof(float) * n), *sums = calloc(tiles, sizeof(float));
  float *ref = malloc(sizeof(float) * tiles);
  tilesum_init(x, n);
  hpvm_memref_f32_1d_t X = hpvm_memref_f32_1d(x, n), S = hpvm_memref_f32_1d(sums, tiles);
  _mlir_ciface_tile_sums(&X, &S);
  tilesum_ref(x, n, ref);
  long mismatches = small_check_float(sums, ref, tiles);
  printf("tile sums n=%ld tiles=%ld mismatches: %ld\n", n, tiles, mismatches);
  free(x), free(sums), free(ref);
  return mismatches != 0;
}
