// An instance query in a (not inlined) function that a leaf calls.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

__attribute__((noinline)) long global_id(void) {
  // CHECK: query_in_helper.c:[[@LINE+1]]:38: error: __hpvm__getNode is only valid inside a leaf node function, not in 'global_id', a function that a node calls; HPVM-C calls must be in the node function itself (make 'global_id' static inline, or pass it the values)
  return __hpvm__getNodeInstanceID_x(__hpvm__getNode());
}

void leaf(long *a) { a[global_id()] = 1; }

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
