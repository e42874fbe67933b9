// The shape of the HPVM release's spmv: the whole product in one leaf that
// never asks which instance it is, created as a 1-D node of `dim` instances
// (the "block" count of the CUDA version). Every instance computes all of y:
// the result is right, the work is done `dim` times, and hpvm-cc warns.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *y;
  size_t bytes_y;
  int *rows;
  size_t bytes_rows;
  int *cols;
  size_t bytes_cols;
  float *vals;
  size_t bytes_vals;
  float *x;
  size_t bytes_x;
  int n;
  long dim;
} RootIn;

void spmv_kernel(float *y, size_t bytes_y, int *rows, size_t bytes_rows, int *cols,
                 size_t bytes_cols, float *vals, size_t bytes_vals, float *x, size_t bytes_x,
                 int n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(4, rows, cols, vals, x, 1, y);
  for (int row = 0; row < n; ++row) {
    float sum = 0.0f;
    for (int j = rows[row]; j < rows[row + 1]; ++j)
      sum += vals[j] * x[cols[j]];
    y[row] = sum;
  }
}

void spmv_root(float *y, size_t bytes_y, int *rows, size_t bytes_rows, int *cols,
               size_t bytes_cols, float *vals, size_t bytes_vals, float *x, size_t bytes_x,
               int n, long dim) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(4, rows, cols, vals, x, 1, y);
  void *node = __hpvm__createNodeND(1, spmv_kernel, dim);
  for (int p = 0; p < 11; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(void) {
  int n = 300, per_row = 5, nnz = n * per_row;
  int *rows = malloc(sizeof(int) * (n + 1)), *cols = malloc(sizeof(int) * nnz);
  float *vals = malloc(sizeof(float) * nnz), *x = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  for (int i = 0; i < n; ++i) {
    rows[i] = i * per_row;
    x[i] = (float)(i % 7) - 3.0f;
    for (int k = 0; k < per_row; ++k) {
      cols[i * per_row + k] = (i * 13 + k * 31) % n;
      vals[i * per_row + k] = (float)((i + k) % 5) * 0.5f;
    }
  }
  rows[n] = nnz;
  __hpvm__init();
  llvm_hpvm_track_mem(y, sizeof(float) * n);
  llvm_hpvm_track_mem(rows, sizeof(int) * (n + 1));
  llvm_hpvm_track_mem(cols, sizeof(int) * nnz);
  llvm_hpvm_track_mem(vals, sizeof(float) * nnz);
  llvm_hpvm_track_mem(x, sizeof(float) * n);
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){y, sizeof(float) * n, rows, sizeof(int) * (n + 1), cols, sizeof(int) * nnz,
                   vals, sizeof(float) * nnz, x, sizeof(float) * n, n, 8};
  void *dfg = __hpvm__launch(0, spmv_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(y, sizeof(float) * n);
  int wrong = 0;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int j = rows[i]; j < rows[i + 1]; ++j)
      sum += vals[j] * x[cols[j]];
    wrong += sum != y[i];
    total += y[i];
  }
  printf("spmv_replicated: n=%d total=%.2f wrong=%d\n", n, total, wrong);
  llvm_hpvm_untrack_mem(y);
  llvm_hpvm_untrack_mem(rows);
  llvm_hpvm_untrack_mem(cols);
  llvm_hpvm_untrack_mem(vals);
  llvm_hpvm_untrack_mem(x);
  __hpvm__cleanup();
  free(rows), free(cols), free(vals), free(x), free(y), free(args);
  return wrong != 0;
}
