// Shared by the HPVM-C and the hand-written OpenCL versions: timer, initial data,
// checksums and the one-line report
//   "NAME VERSION: min MS median MS max MS (RUNS runs) checksum C"
// where each run is ONE timed repetition (launch + wait, data resident on the device).
#ifndef HPVM_BENCH_OPENCL_COMMON_H
#define HPVM_BENCH_OPENCL_COMMON_H
// The timer, the report and the stencil's data are the release benchmarks'.
#include "../release/bench_timer.h"

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

static inline void sgemm_init(float *A, float *B, float *C, int m, int n, int k) {
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 13) / 8.0f - 0.75f;
  for (long i = 0; i < (long)k * n; ++i)
    B[i] = (float)((i * 5) % 11) / 4.0f - 1.25f;
  for (long i = 0; i < (long)m * n; ++i)
    C[i] = 0.0f;
}
#endif
