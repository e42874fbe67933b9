// A bind from an input port the internal node does not have.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

typedef struct __attribute__((__packed__)) { float *a; size_t bytes; long n; } RootIn;

void leaf(float *a, size_t bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, a);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  a[i] = 1.0f;
}

void root(float *a, size_t bytes, long n) {
  void *node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
  // CHECK: port_out_of_range.c:[[@LINE+1]]:3: error: __hpvm__bindIn: input port 3 of 'root' is out of range; it has 3 inputs
  __hpvm__bindIn(node, 3, 1, 0);
}

int main(void) {
  float a[8];
  RootIn args = {a, sizeof a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
