// A node function that both queries its instance (a leaf call) and creates a
// child (a graph call).
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long n) {}

void root(long n) {
  // CHECK: query_in_internal.c:[[@LINE+1]]:40: error: __hpvm__getNode is a leaf-node call and cannot appear in internal node 'root'
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  void *a = __hpvm__createNodeND(1, leaf, n + i);
  __hpvm__bindIn(a, 0, 0, 0);
}

int main(void) {
  struct __attribute__((__packed__)) { long n; } args = {2};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
