// An int variable returned for a long output: C passes it to the variadic
// __hpvm__return as an int, whose signedness the frontend cannot know.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

typedef struct __attribute__((__packed__)) { long count; } Count;

Count leaf(int *a, int n) {
  int count = 0;
  for (int i = 0; i < n; ++i)
    count += a[i] > 0;
  // CHECK: return_needs_cast.c:[[@LINE+1]]:3: error: __hpvm__return: output 0 is a 'i32' but the node function's return struct declares field 0 as 'i64'; cast the value to the field's C type
  __hpvm__return(1, count);
}

Count root(int *a, int n) {
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindOut(node, 0, 0, 0);
}

int main(void) {
  int a[3] = {1, -2, 3};
  struct __attribute__((__packed__)) { int *a; int n; Count out; } args = {a, 3};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
