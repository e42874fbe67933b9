/* Host of examples/histogram.mlir for the integration test: contended bins, compared with the
 * sequential reference of benchmarks/common. */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>

#include "small_ref.h"


int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000003;
  unsigned char *data = malloc(n);
  int32_t bins[HIST_BINS] = {0};
  unsigned int ref[HIST_BINS];
  hist_init(data, n);
  hpvm_memref_u8_1d_t d = hpvm_memref_u8_1d(data, n);
  hpvm_examples_bins_t b = {bins, bins, 0, {HIST_BINS}, {1}};
  _mlir_ciface_histogram(&d, &b);
  hist_ref(data, n, ref);
  long mismatches = small_check_uint((const unsigned int *)bins, ref, HIST_BINS);
  long total = 0;
  for (int i = 0; i < HIST_BINS; ++i)
    total += bins[i];
  printf("histogram n=%ld total=%ld mismatches: %ld\n", n, total, mismatches);
  free(data);
  return mismatches != 0;
}
