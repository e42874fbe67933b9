// An internal node keeps a node handle in memory (a volatile local), which
// the compile-time evaluation of the graph cannot follow.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long *a) {
  a[__hpvm__getNodeInstanceID_x(__hpvm__getNode())] = 1;
}

void root(long *a, long n) {
  // CHECK: node_handle_stored.c:[[@LINE+1]]:18: error: internal node 'root' stores a node handle of __hpvm__createNodeND in memory; node handles may only be passed (directly, as values) to __hpvm__bindIn, __hpvm__bindOut and __hpvm__edge
  void *volatile node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
}

int main(void) {
  long a[8];
  struct __attribute__((__packed__)) { long *a; long n; } args = {a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
