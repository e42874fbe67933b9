// Parboil spmv (JDS) in HPVM-C, one instance per row as the HPVM idiom has it (the release
// created its leaf as a grid of "blocks" that never read their instance id: every instance
// did the whole product; hpvm-cc warns about that shape). Run `iterations` products.
//   hpvm-cc -O3 spmv.c -o spmv && ./spmv ROWS ITERATIONS RUNS
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "spmv_point.h"

typedef struct __attribute__((__packed__)) {
  float *dst;
  size_t bytes_dst;
  float *data;
  size_t bytes_data;
  int *indices;
  size_t bytes_indices;
  int *perm;
  size_t bytes_perm;
  float *x;
  size_t bytes_x;
  int *jd_ptr;
  size_t bytes_jd_ptr;
  int *row_length;
  size_t bytes_row_length;
  int dim;
  long rows;
} RootIn;

void spmv_jds(float *dst, size_t bytes_dst, float *data, size_t bytes_data, int *indices,
              size_t bytes_indices, int *perm, size_t bytes_perm, float *x, size_t bytes_x,
              int *jd_ptr, size_t bytes_jd_ptr, int *row_length, size_t bytes_row_length,
              int dim) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(6, data, indices, perm, x, jd_ptr, row_length, 1, dst);
  void *thisNode = __hpvm__getNode();
  int row = __hpvm__getNodeInstanceID_x(thisNode);
  spmv_row(dst, data, indices, perm, x, jd_ptr, row_length, dim, row);
}

void spmvLvl1(float *dst, size_t bytes_dst, float *data, size_t bytes_data, int *indices,
              size_t bytes_indices, int *perm, size_t bytes_perm, float *x, size_t bytes_x,
              int *jd_ptr, size_t bytes_jd_ptr, int *row_length, size_t bytes_row_length,
              int dim, long rows) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(6, data, indices, perm, x, jd_ptr, row_length, 1, dst);
  void *node = __hpvm__createNodeND(1, spmv_jds, rows);
  for (int p = 0; p < 15; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(int argc, char **argv) {
  int dim = argc > 1 ? atoi(argv[1]) : 100000, iterations = argc > 2 ? atoi(argv[2]) : 10;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  spmv_matrix_t m = spmv_make(dim);
  float *dst = calloc(dim, sizeof(float));
  double *times = malloc(sizeof(double) * runs);
  RootIn *args = malloc(sizeof(RootIn));
  __hpvm__init();
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    llvm_hpvm_track_mem(dst, sizeof(float) * dim);
    llvm_hpvm_track_mem(m.data, sizeof(float) * m.nnz);
    llvm_hpvm_track_mem(m.indices, sizeof(int) * m.nnz);
    llvm_hpvm_track_mem(m.perm, sizeof(int) * dim);
    llvm_hpvm_track_mem(m.x, sizeof(float) * dim);
    llvm_hpvm_track_mem(m.jd_ptr, sizeof(int) * (m.max_length + 1));
    llvm_hpvm_track_mem(m.row_length, sizeof(int) * dim);
    double start = bench_now_ms();
    for (int i = 0; i < iterations; ++i) {
      *args = (RootIn){dst, sizeof(float) * dim, m.data, sizeof(float) * m.nnz, m.indices,
                       sizeof(int) * m.nnz, m.perm, sizeof(int) * dim, m.x, sizeof(float) * dim,
                       m.jd_ptr, sizeof(int) * (m.max_length + 1), m.row_length,
                       sizeof(int) * dim, dim, dim};
      void *dfg = __hpvm__launch(0, spmvLvl1, (void *)args);
      __hpvm__wait(dfg);
    }
    llvm_hpvm_request_mem(dst, sizeof(float) * dim);
    times[r] = bench_now_ms() - start;
    checksum = 0;
    for (int i = 0; i < dim; ++i)
      checksum += dst[i] * (double)(i % 7 + 1);
    llvm_hpvm_untrack_mem(dst);
    llvm_hpvm_untrack_mem(m.data);
    llvm_hpvm_untrack_mem(m.indices);
    llvm_hpvm_untrack_mem(m.perm);
    llvm_hpvm_untrack_mem(m.x);
    llvm_hpvm_untrack_mem(m.jd_ptr);
    llvm_hpvm_untrack_mem(m.row_length);
  }
  bench_report("spmv", "hpvm", times, runs, checksum);
  __hpvm__cleanup();
  spmv_free(&m);
  free(dst), free(times), free(args);
  return 0;
}
