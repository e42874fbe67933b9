/* bench_versions.h - times the HPVM version of a benchmark against its OpenMP and sequential C
 * versions in one process: runs alternate, with a pause between them so that one side's spinning
 * threads have gone to sleep before the other starts; min / median / max are reported. */
#ifndef HPVM_BENCH_VERSIONS_H
#define HPVM_BENCH_VERSIONS_H

#include "bench_common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { VERSION_HPVM, VERSION_OMP, VERSION_SEQ, VERSION_COUNT };
static const char *const version_names[VERSION_COUNT] = {"hpvm", "omp", "seq"};

typedef void (*version_fn)(void *state);

static inline void pause_between_runs(void) {
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
}

/* Fills ms[v] (min / median / max over `runs`) for each version with a non-NULL function, one
 * untimed warm-up each, and `ratio` with the spread of hpvm/omp over the pairs of runs (run r of
 * HPVM against run r of OpenMP, which ran next to it). With HPVM_BENCH_ONLY=hpvm in the
 * environment (the auto-tuner, hpvm-tune) only the HPVM version is timed; the others run once
 * (the warm-up) and report 0, and so does the ratio. */
static inline void time_versions(version_fn fns[VERSION_COUNT], void *state, int runs,
                                 bench_range_t ms[VERSION_COUNT], bench_range_t *ratio) {
  double *samples[VERSION_COUNT], *ratios = bench_alloc(sizeof(double) * (size_t)runs);
  const char *only = getenv("HPVM_BENCH_ONLY");
  version_fn timed[VERSION_COUNT];
  for (int v = 0; v < VERSION_COUNT; ++v) {
    samples[v] = bench_alloc(sizeof(double) * (size_t)runs);
    ms[v] = (bench_range_t){0, 0, 0};
    /* The warm-up runs every version, so that the results a driver checks exist. */
    if (fns[v])
      fns[v](state);
    timed[v] = only && strcmp(only, version_names[v]) ? NULL : fns[v];
  }
  fns = timed;
  for (int r = 0; r < runs; ++r)
    for (int v = 0; v < VERSION_COUNT; ++v) {
      if (!fns[v])
        continue;
      pause_between_runs();
      double start = bench_now_ms();
      fns[v](state);
      samples[v][r] = bench_now_ms() - start;
    }
  for (int r = 0; r < runs; ++r)
    ratios[r] = fns[VERSION_HPVM] && fns[VERSION_OMP]
                    ? samples[VERSION_HPVM][r] / samples[VERSION_OMP][r]
                    : 0.0;
  *ratio = bench_range(ratios, runs);
  for (int v = 0; v < VERSION_COUNT; ++v) {
    if (fns[v])
      ms[v] = bench_range(samples[v], runs);
    free(samples[v]);
  }
  free(ratios);
}

#endif /* HPVM_BENCH_VERSIONS_H */
