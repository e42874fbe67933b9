// An HPVM-C translation unit with one graph, compiled twice apart (hpvm-cc -c) as two: -DNAME=a
// or b names its functions run_NAME, root_NAME and leaf_NAME, -DADD=... is what each instance
// adds after doubling its element.
#include <hpvm/hpvm.h>
#include <stdlib.h>

#define JOIN(x, y) x##_##y
#define NAMED(x, y) JOIN(x, y)

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes;
  long n;
} NAMED(In, NAME);

void NAMED(leaf, NAME)(float *x, size_t bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, x);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  x[i] = x[i] * 2.0f + ADD;
}

void NAMED(root, NAME)(float *x, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, x);
  void *node = __hpvm__createNodeND(1, NAMED(leaf, NAME), n);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
}

void NAMED(run, NAME)(float *x, long n) {
  NAMED(In, NAME) *args = malloc(sizeof(*args));
  args->x = x;
  args->bytes = n * sizeof(float);
  args->n = n;
  llvm_hpvm_track_mem(x, n * sizeof(float));
  void *dfg = __hpvm__launch(0, NAMED(root, NAME), args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(x, n * sizeof(float));
  llvm_hpvm_untrack_mem(x);
  free(args);
}
