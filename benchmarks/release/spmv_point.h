// The Parboil spmv's computation of one row of y = A x with A in JDS format (rows sorted by
// length, stored diagonal by diagonal: element j of row r is at data[jd_ptr[j] + r]): the one
// definition that the HPVM-C leaf (spmv.c) and the OpenMP loop (spmv_omp.c) both call.
#ifndef HPVM_BENCH_RELEASE_SPMV_POINT_H
#define HPVM_BENCH_RELEASE_SPMV_POINT_H
#include <stdlib.h>

static inline void spmv_row(float *dst, const float *data, const int *indices, const int *perm,
                            const float *x, const int *jd_ptr, const int *row_length, int dim,
                            int row) {
  if (row >= dim)
    return;
  float sum = 0.0f;
  int bound = row_length[row];
  for (int j = 0; j < bound; ++j) {
    int at = jd_ptr[j] + row;
    sum += data[at] * x[indices[at]];
  }
  dst[perm[row]] = sum;
}

/* A JDS matrix of `dim` rows with 4 to 36 nonzeros each (a banded pattern plus scattered
 * entries), rows sorted by decreasing length as the format requires. */
typedef struct {
  int dim, nnz, max_length;
  float *data, *x;
  int *indices, *perm, *jd_ptr, *row_length;
} spmv_matrix_t;

static inline spmv_matrix_t spmv_make(int dim) {
  spmv_matrix_t m;
  m.dim = dim;
  m.max_length = 36;
  m.row_length = malloc(sizeof(int) * dim);
  m.perm = malloc(sizeof(int) * dim);
  /* Lengths by rank: row perm[r] has the r-th longest row. */
  for (int r = 0; r < dim; ++r) {
    m.perm[r] = (int)(((long)r * 7919) % dim);
    m.row_length[r] = 36 - (int)((long)r * 32 / dim);
  }
  m.jd_ptr = malloc(sizeof(int) * (m.max_length + 1));
  m.nnz = 0;
  for (int j = 0; j < m.max_length; ++j) {
    m.jd_ptr[j] = m.nnz;
    int rows = 0;
    while (rows < dim && m.row_length[rows] > j)
      ++rows;
    m.nnz += dim; /* padded to dim per diagonal: simple, as Parboil pads to warps */
    (void)rows;
  }
  m.jd_ptr[m.max_length] = m.nnz;
  m.data = malloc(sizeof(float) * m.nnz);
  m.indices = malloc(sizeof(int) * m.nnz);
  for (int j = 0; j < m.max_length; ++j)
    for (int r = 0; r < dim; ++r) {
      int at = m.jd_ptr[j] + r;
      m.data[at] = (float)((r + 3 * j) % 17) / 16.0f - 0.5f;
      m.indices[at] = (m.perm[r] + (j % 2 ? j * 97 : j)) % dim;
    }
  m.x = malloc(sizeof(float) * dim);
  for (int i = 0; i < dim; ++i)
    m.x[i] = (float)(i % 13) / 4.0f - 1.5f;
  return m;
}

static inline void spmv_free(spmv_matrix_t *m) {
  free(m->data), free(m->x), free(m->indices), free(m->perm), free(m->jd_ptr),
      free(m->row_length);
}
#endif
