// Shared by the HPVM-C and the hand-written OpenCL versions: timer, initial data,
// checksums and the one-line report
//   "NAME VERSION: min MS median MS max MS (RUNS runs) checksum C"
// where each run is ONE timed repetition (launch + wait, data resident on the device).
#ifndef HPVM_BENCH_OPENCL_COMMON_H
#define HPVM_BENCH_OPENCL_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static inline int bench_compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static inline void bench_report(const char *name, const char *version, double *times,
                                int runs, double checksum) {
  qsort(times, runs, sizeof(double), bench_compare);
  printf("%s %s: min %.3f ms median %.3f ms max %.3f ms (%d runs) checksum %.6e\n", name,
         version, times[0], times[runs / 2], times[runs - 1], runs, checksum);
}

// A weighted sum, so that misplaced elements change it.
static inline double bench_checksum(const float *a, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    sum += a[i] * (double)(i % 7 + 1);
  return sum;
}

static inline void vadd_init(float *a, float *b, float *c, long n) {
  for (long i = 0; i < n; ++i) {
    a[i] = (float)(i % 1000) * 0.5f;
    b[i] = (float)((n - i) % 777);
    c[i] = -1.0f;
  }
}

static inline void stencil_init(float *A0, float *Anext, int nx, int ny, int nz) {
  size_t size = (size_t)nx * ny * nz;
  for (size_t i = 0; i < size; ++i)
    A0[i] = Anext[i] = (float)((i * 31) % 97) / 16.0f;
}

static inline void sgemm_init(float *A, float *B, float *C, int m, int n, int k) {
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 13) / 8.0f - 0.75f;
  for (long i = 0; i < (long)k * n; ++i)
    B[i] = (float)((i * 5) % 11) / 4.0f - 1.25f;
  for (long i = 0; i < (long)m * n; ++i)
    C[i] = 0.0f;
}
#endif
