/* omp_baseline.h - entry points of the OpenMP baseline (compiled apart with -fopenmp). */
#ifndef HPVM_BENCH_OMP_BASELINE_H
#define HPVM_BENCH_OMP_BASELINE_H

#include <stdint.h>

void hpvm_bench_omp_parallel_for(int64_t n);
int hpvm_bench_omp_threads(void);

#endif
