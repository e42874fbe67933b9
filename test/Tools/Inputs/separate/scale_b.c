// One of two HPVM-C translation units with a graph each (hpvm-cc -c, then linked).
#include <hpvm/hpvm.h>
#include <stdlib.h>
typedef struct __attribute__((__packed__)) { float *x; size_t bytes; long n; } In_b;
void leaf_b(float *x, size_t bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, x);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  x[i] = x[i] * 2.0f + ('b' == 'a' ? 1.0f : 3.0f);
}
void root_b(float *x, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, x);
  void *node = __hpvm__createNodeND(1, leaf_b, n);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
}
void run_b(float *x, long n) {
  In_b *args = malloc(sizeof(In_b));
  args->x = x; args->bytes = n * sizeof(float); args->n = n;
  llvm_hpvm_track_mem(x, n * sizeof(float));
  void *dfg = __hpvm__launch(0, root_b, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(x, n * sizeof(float));
  llvm_hpvm_untrack_mem(x);
  free(args);
}
