// An edge from a float output to a pointer input.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

typedef struct __attribute__((__packed__)) { float sum; } SumOut;

SumOut producer(float *a, size_t bytes) {
  __hpvm__attributes(1, a, 0);
  __hpvm__return(1, a[0] + a[1]);
}

void consumer(float *out, size_t bytes) {
  __hpvm__attributes(0, 1, out);
  out[0] = 1.0f;
}

void root(float *a, size_t bytes) {
  void *p = __hpvm__createNodeND(0, producer);
  void *c = __hpvm__createNodeND(0, consumer);
  __hpvm__bindIn(p, 0, 0, 0);
  __hpvm__bindIn(p, 1, 1, 0);
  // CHECK: edge_type_mismatch.c:[[@LINE+1]]:3: error: 'hpvm.edge' op type mismatch: output 0 of @producer is 'f32' but input 0 of @consumer is '!llvm.ptr'
  __hpvm__edge(p, c, 1, 0, 0, 0);
  __hpvm__bindIn(c, 1, 1, 0);
}

int main(void) {
  float a[2] = {1, 2};
  struct __attribute__((__packed__)) { float *a; size_t bytes; } args = {a, sizeof a};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
