// A function written as a node (it calls __hpvm__hint) that no graph uses: an
// unused node (an alternative root kept around) compiles with a warning; the
// same function called from host code is an error there (at its __hpvm__hint,
// inlined into main or not).
// RUN: hpvm-cc %s -o %t 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: %t | FileCheck %s --check-prefix=OUTPUT
// RUN: %expect-exit 1 hpvm-cc -DCALLED %s -o %t.called 2>&1 | FileCheck %s --check-prefix=CALLED
#include <hpvm.h>
#include <stdio.h>

void leaf(long *a) {
  a[__hpvm__getNodeInstanceID_x(__hpvm__getNode())] = 1;
}

// UNUSED: not_a_node.c:[[@LINE+1]]:0: warning: node function 'old_leaf' is never used: no __hpvm__launch or __hpvm__createNodeND names it (it is compiled as an unused node)
void old_leaf(long *a) {
  // CALLED: not_a_node.c:[[@LINE+1]]:3: error: __hpvm__hint is only valid inside a node function, not in host function '{{old_leaf|main}}' (no __hpvm__createNodeND or __hpvm__launch names it as a node)
  __hpvm__hint(CPU_TARGET);
  a[0] = 2;
}

void root(long *a, long n) {
  void *node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
}

int main(void) {
  long a[8] = {0};
  struct __attribute__((__packed__)) { long *a; long n; } args = {a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
#ifdef CALLED
  old_leaf(a);
#endif
  // OUTPUT: not_a_node: a[0]=1 a[7]=1
  printf("not_a_node: a[0]=%ld a[7]=%ld\n", a[0], a[7]);
  return 0;
}
