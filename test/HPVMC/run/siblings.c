// Independent siblings: the root creates three children with no edges
// between them, which may run concurrently: a 1-D leaf squaring x into y, a
// 2-D leaf filling a multiplication table, and a 0-D leaf summing z whose two
// outputs (float sum, long count) are the root's outputs.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float sum;
  long count;
} SumOut;

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes_x;
  float *y;
  size_t bytes_y;
  long n;
  int *table;
  size_t bytes_table;
  long rows, cols;
  float *z;
  size_t bytes_z;
  long m;
  SumOut out;
} RootIn;

void square(float *x, size_t bytes_x, float *y, size_t bytes_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, y);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  y[i] = x[i] * x[i];
}

void table(int *t, size_t bytes_t, long cols) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, t);
  void *self = __hpvm__getNode();
  long c = __hpvm__getNodeInstanceID_x(self);
  long r = __hpvm__getNodeInstanceID_y(self);
  t[r * cols + c] = (int)((r + 1) * (c + 1));
}

SumOut sum(float *z, size_t bytes_z, long m) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, z, 0);
  float s = 0.0f;
  for (long i = 0; i < m; ++i)
    s += z[i];
  __hpvm__return(2, s, m);
}

SumOut siblings_root(float *x, size_t bytes_x, float *y, size_t bytes_y, long n, int *t,
                     size_t bytes_t, long rows, long cols, float *z, size_t bytes_z, long m) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(4, x, y, t, z, 2, y, t);
  void *sq = __hpvm__createNodeND(1, square, n);
  void *tb = __hpvm__createNodeND(2, table, cols, rows);
  void *sm = __hpvm__createNodeND(0, sum);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(sq, i, i, 0);
  __hpvm__bindIn(tb, 5, 0, 0);
  __hpvm__bindIn(tb, 6, 1, 0);
  __hpvm__bindIn(tb, 8, 2, 0);
  __hpvm__bindIn(sm, 9, 0, 0);
  __hpvm__bindIn(sm, 10, 1, 0);
  __hpvm__bindIn(sm, 11, 2, 0);
  __hpvm__bindOut(sm, 0, 0, 0);
  __hpvm__bindOut(sm, 1, 1, 0);
}

int main(void) {
  long n = 5000, rows = 12, cols = 9, m = 333;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
  int *t = malloc(rows * cols * sizeof(int));
  float *z = malloc(m * sizeof(float));
  for (long i = 0; i < n; ++i)
    x[i] = (float)(i % 100) * 0.5f;
  for (long i = 0; i < m; ++i)
    z[i] = 1.0f / (float)(i + 1);
  __hpvm__init();
  llvm_hpvm_track_mem(x, n * sizeof(float));
  llvm_hpvm_track_mem(y, n * sizeof(float));
  llvm_hpvm_track_mem(t, rows * cols * sizeof(int));
  llvm_hpvm_track_mem(z, m * sizeof(float));
  RootIn *args = malloc(sizeof(RootIn));
  args->x = x;
  args->bytes_x = n * sizeof(float);
  args->y = y;
  args->bytes_y = n * sizeof(float);
  args->n = n;
  args->table = t;
  args->bytes_table = rows * cols * sizeof(int);
  args->rows = rows;
  args->cols = cols;
  args->z = z;
  args->bytes_z = m * sizeof(float);
  args->m = m;
  void *dfg = __hpvm__launch(0, siblings_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(y, n * sizeof(float));
  llvm_hpvm_request_mem(t, rows * cols * sizeof(int));
  llvm_hpvm_untrack_mem(x);
  llvm_hpvm_untrack_mem(y);
  llvm_hpvm_untrack_mem(t);
  llvm_hpvm_untrack_mem(z);
  __hpvm__cleanup();

  long wrong = 0, table_sum = 0;
  double y_sum = 0;
  for (long i = 0; i < n; ++i) {
    wrong += y[i] != x[i] * x[i];
    y_sum += y[i];
  }
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) {
      wrong += t[r * cols + c] != (r + 1) * (c + 1);
      table_sum += t[r * cols + c];
    }
  float s = 0.0f;
  for (long i = 0; i < m; ++i)
    s += z[i];
  wrong += args->out.sum != s || args->out.count != m;
  printf("siblings: y_sum=%.2f table_sum=%ld z_sum=%.6f count=%ld wrong=%ld\n", y_sum, table_sum,
         args->out.sum, args->out.count, wrong);
  free(x);
  free(y);
  free(t);
  free(z);
  free(args);
  return wrong != 0;
}
