// A graph function that creates itself.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void root(long n) {
  // CHECK: hierarchy_cycle.c:[[@LINE+1]]:13: error: node function 'root' contains itself: the node hierarchy has a cycle
  void *a = __hpvm__createNodeND(0, root);
  __hpvm__bindIn(a, 0, 0, 0);
}

int main(void) {
  struct __attribute__((__packed__)) { long n; } args = {0};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
