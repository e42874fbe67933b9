/* omp_baseline.c - the OpenMP side of the launch-overhead comparison (build with gcc -fopenmp). */
#include <omp.h>
#include <stdint.h>

#include "omp_baseline.h"

/* One `#pragma omp parallel for` over an n-element loop whose body is an empty asm statement:
 * the loop survives -O3 but costs nothing, exactly like the runtime side's body. */
void hpvm_bench_omp_parallel_for(int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    __asm__ __volatile__("" : : "r"(i));
}

int hpvm_bench_omp_threads(void) { return omp_get_max_threads(); }
