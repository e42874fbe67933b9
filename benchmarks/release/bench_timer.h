// Timing, initial data and the one-line report shared by the release-style
// benchmarks: "NAME VERSION: min MS median MS max MS (RUNS runs) checksum C".
#ifndef HPVM_BENCH_RELEASE_BENCH_TIMER_H
#define HPVM_BENCH_RELEASE_BENCH_TIMER_H
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

static inline void stencil_init(float *A0, float *Anext, int nx, int ny, int nz) {
  size_t size = (size_t)nx * ny * nz;
  for (size_t i = 0; i < size; ++i)
    A0[i] = Anext[i] = (float)((i * 31) % 97) / 16.0f;
}

static inline double stencil_checksum(const float *A, int nx, int ny, int nz) {
  double sum = 0;
  for (size_t i = 0, e = (size_t)nx * ny * nz; i < e; ++i)
    sum += A[i] * (double)(i % 7 + 1);
  return sum;
}
#endif
