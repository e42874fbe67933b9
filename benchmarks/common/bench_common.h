/* bench_common.h - shared timing, median and command-line helpers for the baseline drivers. */
#ifndef HPVM_BENCH_COMMON_H
#define HPVM_BENCH_COMMON_H

/* clock_gettime is POSIX, hidden by glibc under a strict -std=c11. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Monotonic clock so NTP adjustments cannot distort a measurement. */
static inline double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median rather than mean: the machine is shared, and outliers from other jobs are one-sided. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
  return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The spread of a set of runs: min / median / max (sorts `v`). Tables say a goal is met only
 * when the whole range meets it (docs/Performance.md, scripts/perf-tables.py). */
typedef struct {
  double min, median, max;
} bench_range_t;

static inline bench_range_t bench_range(double *v, int n) {
  double median = bench_median(v, n);
  bench_range_t range = {v[0], median, v[n - 1]};
  return range;
}

/* Aborting allocator: the drivers have no meaningful recovery from an out-of-memory condition. */
static inline void *bench_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
    exit(2);
  }
  return p;
}

/* Options every driver understands; positional integers are the benchmark's sizes. */
struct bench_opts {
  int runs;          /* timed runs after one untimed warm-up */
  int do_seq, do_omp;
  const char *dump;  /* if set, the sequential result is written here as raw float32 */
  int npos;
  long pos[8];
};

static inline void bench_usage(const char *prog, const char *sizes) {
  fprintf(stderr, "usage: %s [%s] [--runs N] [--mode seq|omp|both] [--dump FILE]\n", prog, sizes);
  exit(1);
}

static inline struct bench_opts bench_parse(int argc, char **argv, const char *sizes) {
  struct bench_opts o;
  memset(&o, 0, sizeof o);
  o.runs = 5;
  o.do_seq = o.do_omp = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      o.runs = atoi(argv[++i]);
      if (o.runs < 1) bench_usage(argv[0], sizes);
    } else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      const char *m = argv[++i];
      o.do_seq = !strcmp(m, "seq") || !strcmp(m, "both");
      o.do_omp = !strcmp(m, "omp") || !strcmp(m, "both");
      if (!o.do_seq && !o.do_omp) bench_usage(argv[0], sizes);
    } else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
      o.dump = argv[++i];
    } else if (argv[i][0] >= '0' && argv[i][0] <= '9' && o.npos < 8) {
      o.pos[o.npos++] = strtol(argv[i], NULL, 10);
    } else {
      bench_usage(argv[0], sizes);
    }
  }
  return o;
}

static inline void bench_dump(const char *path, const float *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, sizeof(float), n, f) != n) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

#endif
