// An internal node (it creates children) that also computes.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

void leaf(float *a, size_t bytes) {
  __hpvm__attributes(0, 1, a);
  a[1] = 2.0f;
}

void root(float *a, size_t bytes) {
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  // CHECK: computation_in_internal.c:[[@LINE+1]]:8: error: internal node 'root' may only describe its graph (HPVM graph calls and integer arithmetic for extents); found computation ('llvm.store')
  a[0] = 1.0f;
}

int main(void) {
  float a[2];
  struct __attribute__((__packed__)) { float *a; size_t bytes; } args = {a, sizeof a};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
