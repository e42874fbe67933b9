/* small_ref_selftest.c - sanity test of the small references against independently computed values. */
#include "small_ref.h"

#include <stdio.h>
#include <stdlib.h>

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAIL %s\n", what);
    failures++;
  }
}

int main(void) {
  enum { N = 100003 }; /* not a multiple of 64: exercises the partial last tile */
  float *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N), *c = malloc(sizeof(float) * N);
  unsigned char *bytes = malloc(N);
  float *sums = malloc(sizeof(float) * (size_t)tilesum_ntiles(N));
  if (!a || !b || !c || !bytes || !sums) return 2;

  vadd_init(a, b, N);
  vadd_ref(a, b, c, N);
  double dsum = 0.0;
  for (long i = 0; i < N; i++) dsum += (double)a[i] + (double)b[i] - (double)c[i];
  expect(dsum == 0.0, "vadd matches a double-precision sum");

  unsigned int bins[HIST_BINS];
  hist_init(bytes, N);
  hist_ref(bytes, N, bins);
  unsigned long total = 0;
  for (int i = 0; i < HIST_BINS; i++) total += bins[i];
  expect(total == N, "histogram counts add up to n");
  expect(bins[3] > bins[200], "low bins are hot (skewed input)");

  /* Pairwise (tree) reduction in double: a different association must give the same exact sums. */
  tilesum_init(a, N);
  tilesum_ref(a, N, sums);
  expect(tilesum_ntiles(N) == (N + 63) / 64, "tile count rounds up");
  for (long t = 0; t < tilesum_ntiles(N); t++) {
    double tmp[TILESUM_TILE] = {0};
    long base = t * TILESUM_TILE;
    for (int i = 0; i < TILESUM_TILE && base + i < N; i++) tmp[i] = a[base + i];
    for (int w = TILESUM_TILE / 2; w >= 1; w /= 2)
      for (int i = 0; i < w; i++) tmp[i] += tmp[i + w];
    if ((double)sums[t] != tmp[0]) {
      expect(0, "tile sum matches a tree reduction");
      break;
    }
  }

  printf("small_ref selftest %s\n", failures ? "FAIL" : "ok");
  free(a), free(b), free(c), free(bytes), free(sums);
  return failures ? 1 : 0;
}
