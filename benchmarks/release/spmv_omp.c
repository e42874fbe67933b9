// The same spmv as spmv.c with the leaf called once per row by an OpenMP loop.
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "spmv_point.h"

int main(int argc, char **argv) {
  int dim = argc > 1 ? atoi(argv[1]) : 100000, iterations = argc > 2 ? atoi(argv[2]) : 10;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  spmv_matrix_t m = spmv_make(dim);
  float *dst = calloc(dim, sizeof(float));
  double *times = malloc(sizeof(double) * runs);
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    double start = bench_now_ms();
    for (int i = 0; i < iterations; ++i) {
#pragma omp parallel for schedule(static)
      for (int row = 0; row < dim; ++row)
        spmv_row(dst, m.data, m.indices, m.perm, m.x, m.jd_ptr, m.row_length, dim, row);
    }
    times[r] = bench_now_ms() - start;
    checksum = 0;
    for (int i = 0; i < dim; ++i)
      checksum += dst[i] * (double)(i % 7 + 1);
  }
  bench_report("spmv", "openmp", times, runs, checksum);
  spmv_free(&m);
  free(dst), free(times);
  return 0;
}
