// The last group of a row, fewer instances than vector lanes, runs as lanes
// under a mask (the remainder variant of hpvm-vectorize): rows of 37
// and of 5 instances, a branch that splits the lanes after a store (a masked
// region: the integer division of the lanes that do not take it must not
// trap), and an atomic per running lane. Prints the same with and without
// lanes (lanes.test).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *in;
  size_t bytes_in;
  float *out;
  size_t bytes_out;
  int *sum;
  size_t bytes_sum;
  long n;
} RootIn;

void rest_leaf(float *in, size_t bytes_in, float *out, size_t bytes_out, int *sum,
               size_t bytes_sum) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, sum, 2, out, sum);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  out[i] = in[i];
  int r = (int)(i % 3);
  if (r == 0)
    out[i] = in[i] * 2.0f + out[i];
  else
    out[i] = out[i] + (float)(100 / r);
  __hpvm__atomic_add(sum, (int)i + 1);
}

void rest_root(float *in, size_t bytes_in, float *out, size_t bytes_out, int *sum,
               size_t bytes_sum, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, sum, 2, out, sum);
  void *leaf = __hpvm__createNodeND(1, rest_leaf, n);
  for (int p = 0; p < 6; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

static int run(long n) {
  size_t bytes = n * sizeof(float);
  float *in = malloc(bytes), *out = malloc(bytes);
  int *sum = malloc(sizeof(int));
  *sum = 0;
  for (long i = 0; i < n; ++i) {
    in[i] = (float)i * 0.25f;
    out[i] = -1.0f;
  }
  llvm_hpvm_track_mem(in, bytes);
  llvm_hpvm_track_mem(out, bytes);
  llvm_hpvm_track_mem(sum, sizeof(int));
  RootIn args = {in, bytes, out, bytes, sum, sizeof(int), n};
  void *dfg = __hpvm__launch(0, rest_root, (void *)&args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, bytes);
  llvm_hpvm_request_mem(sum, sizeof(int));
  long wrong = 0;
  double total = 0;
  for (long i = 0; i < n; ++i) {
    float expect = i % 3 == 0 ? in[i] * 2.0f + in[i] : in[i] + (float)(100 / (int)(i % 3));
    wrong += out[i] != expect;
    total += out[i];
  }
  wrong += *sum != (int)(n * (n + 1) / 2);
  printf("remainder: n=%ld total=%.2f sum=%d wrong=%ld\n", n, total, *sum, wrong);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(out);
  llvm_hpvm_untrack_mem(sum);
  free(in);
  free(out);
  free(sum);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(37) | run(5) | run(64);
  __hpvm__cleanup();
  return failed;
}
