// 1-D replicated leaf over pointer/size pairs: c[i] = a[i] + b[i] for n
// instances, the buffers tracked by the runtime and requested back.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes_a;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  long n;
} RootIn;

void vadd_leaf(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  c[i] = a[i] + b[i];
}

void vadd_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
               long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(1, vadd_leaf, n);
  __hpvm__bindIn(leaf, 0, 0, 0);
  __hpvm__bindIn(leaf, 1, 1, 0);
  __hpvm__bindIn(leaf, 2, 2, 0);
  __hpvm__bindIn(leaf, 3, 3, 0);
  __hpvm__bindIn(leaf, 4, 4, 0);
  __hpvm__bindIn(leaf, 5, 5, 0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  for (long i = 0; i < n; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(n - i);
    c[i] = -1.0f;
  }
  __hpvm__init();
  llvm_hpvm_track_mem(a, bytes);
  llvm_hpvm_track_mem(b, bytes);
  llvm_hpvm_track_mem(c, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  args->a = a;
  args->bytes_a = bytes;
  args->b = b;
  args->bytes_b = bytes;
  args->c = c;
  args->bytes_c = bytes;
  args->n = n;
  void *dfg = __hpvm__launch(0, vadd_root, (void *)args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(c, bytes);
  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    wrong += c[i] != a[i] + b[i];
    sum += c[i];
  }
  printf("vector_add: n=%ld sum=%.1f wrong=%ld\n", n, sum, wrong);
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(b);
  llvm_hpvm_untrack_mem(c);
  __hpvm__cleanup();
  free(a);
  free(b);
  free(c);
  free(args);
  return wrong != 0;
}
