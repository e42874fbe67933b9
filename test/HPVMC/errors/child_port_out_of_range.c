// A bind to an input port the child does not have, and an output port the
// child does not have.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

typedef struct __attribute__((__packed__)) { float *a; size_t bytes; long n; } RootIn;
typedef struct __attribute__((__packed__)) { long v; } Out;

Out leaf(float *a, size_t bytes) {
  __hpvm__attributes(0, 1, a);
  __hpvm__return(1, 42L);
}

Out root(float *a, size_t bytes, long n) {
  void *node = __hpvm__createNodeND(0, leaf);
  // CHECK: child_port_out_of_range.c:[[@LINE+1]]:3: error: 'hpvm.bind_in' op destination port 2 out of range: @leaf has 2 inputs
  __hpvm__bindIn(node, 0, 2, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindOut(node, 0, 0, 0);
}

int main(void) {
  float a[8];
  struct __attribute__((__packed__)) { float *a; size_t bytes; long n; Out out; } args = {a, sizeof a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
