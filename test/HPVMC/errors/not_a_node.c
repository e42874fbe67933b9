// A function written as a node (it calls __hpvm__hint) that no graph uses.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long *a) {
  a[__hpvm__getNodeInstanceID_x(__hpvm__getNode())] = 1;
}

void old_leaf(long *a) {
  // CHECK: not_a_node.c:[[@LINE+1]]:3: error: __hpvm__hint is only valid inside a node function, not in host function 'old_leaf' (no __hpvm__createNodeND or __hpvm__launch names it as a node)
  __hpvm__hint(CPU_TARGET);
  a[0] = 2;
}

void root(long *a, long n) {
  void *node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
}

int main(void) {
  long a[8];
  struct __attribute__((__packed__)) { long *a; long n; } args = {a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
