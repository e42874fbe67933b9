// Nodes have at most 3 dimensions.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long n) {}

void root(long n) {
  // CHECK: four_dimensions.c:[[@LINE+1]]:13: error: __hpvm__createNodeND with 4 dimensions; HPVM nodes have 0 to 3
  void *a = __hpvm__createNodeND(4, leaf, n, n, n, n);
  __hpvm__bindIn(a, 0, 0, 0);
}

int main(void) {
  struct __attribute__((__packed__)) { long n; } args = {2};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
