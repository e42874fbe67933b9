/* small_ref.c - sequential references for the small integration tests; inputs are exact so any order matches. */
#include "small_ref.h"

#include <stdint.h>

void vadd_init(float *a, float *b, long n) {
  for (long i = 0; i < n; i++) {
    a[i] = (float)(i % 64) / 8.0f - 4.0f;
    b[i] = (float)((i * 5 + 3) % 64) / 8.0f - 4.0f;
  }
}

void vadd_ref(const float *a, const float *b, float *c, long n) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

void hist_init(unsigned char *data, long n) {
  uint32_t s = 12345u;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u; /* Numerical Recipes LCG: fixed, portable sequence */
    unsigned v = s >> 24;
    /* Every 4th byte squeezed into 16 bins: uneven counts, so contention on hot bins is exercised. */
    data[i] = (unsigned char)((i & 3) == 0 ? (v & 15) : v);
  }
}

void hist_ref(const unsigned char *data, long n, unsigned int bins[HIST_BINS]) {
  for (int b = 0; b < HIST_BINS; b++) bins[b] = 0;
  for (long i = 0; i < n; i++) bins[data[i]]++;
}

void tilesum_init(float *x, long n) {
  for (long i = 0; i < n; i++) x[i] = (float)((i * 13 + 7) % 64) / 4.0f - 8.0f;
}

long tilesum_ntiles(long n) { return (n + TILESUM_TILE - 1) / TILESUM_TILE; }

void tilesum_ref(const float *x, long n, float *sums) {
  long nt = tilesum_ntiles(n);
  for (long t = 0; t < nt; t++) {
    long end = (t + 1) * TILESUM_TILE < n ? (t + 1) * TILESUM_TILE : n;
    float acc = 0.0f;
    for (long i = t * TILESUM_TILE; i < end; i++) acc += x[i];
    sums[t] = acc;
  }
}

long small_check_float(const float *a, const float *ref, long n) {
  long bad = 0;
  for (long i = 0; i < n; i++) bad += !(a[i] == ref[i]);
  return bad;
}

long small_check_uint(const unsigned int *a, const unsigned int *ref, long n) {
  long bad = 0;
  for (long i = 0; i < n; i++) bad += a[i] != ref[i];
  return bad;
}
