/* small_ref.h - sequential references for the small HPVM integration tests (vector add, histogram, tile sums). */
#ifndef HPVM_SMALL_REF_H
#define HPVM_SMALL_REF_H

#define HIST_BINS 256
#define TILESUM_TILE 64

/* a[i], b[i]: multiples of 1/8 in [-4, 4), so every a[i] + b[i] is exact. */
void vadd_init(float *a, float *b, long n);
void vadd_ref(const float *a, const float *b, float *c, long n); /* c[i] = a[i] + b[i] */

/* Bytes from a 32-bit LCG (top byte), skewed enough that some bins stay empty-ish and some are hot. */
void hist_init(unsigned char *data, long n);
/* bins[v] = number of i with data[i] == v; bins is fully overwritten. */
void hist_ref(const unsigned char *data, long n, unsigned int bins[HIST_BINS]);

/* x[i]: multiples of 1/4 in [-8, 8), so each tile's sum is exact in any association order. */
void tilesum_init(float *x, long n);
/* Number of tiles: ceil(n / 64); the last tile may be partial. */
long tilesum_ntiles(long n);
/* sums[t] = sum of x[64t .. min(64t+63, n-1)] in ascending index order. */
void tilesum_ref(const float *x, long n, float *sums);

/* Mismatch counters shared by the tests: exact comparison, NaN counts as a mismatch. */
long small_check_float(const float *a, const float *ref, long n);
long small_check_uint(const unsigned int *a, const unsigned int *ref, long n);

#endif
