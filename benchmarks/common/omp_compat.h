/* omp_compat.h - lets the reference files build warning-free with or without -fopenmp. */
#ifndef HPVM_BENCH_OMP_COMPAT_H
#define HPVM_BENCH_OMP_COMPAT_H

/*
 * Integration tests link the sequential references without OpenMP (clang here has no libomp);
 * a bare #pragma omp would then trip -Wunknown-pragmas. Without _OPENMP the *_omp functions
 * simply run sequentially and still give the same results.
 */
#ifdef _OPENMP
/* Declared here rather than via <omp.h>: clang -fopenmp on this machine has no omp.h to find. */
int omp_get_max_threads(void);
#define BENCH_OMP(directive) _Pragma(directive)
static inline int bench_omp_threads(void) { return omp_get_max_threads(); }
#else
#define BENCH_OMP(directive)
static inline int bench_omp_threads(void) { return 1; }
#endif

#endif
