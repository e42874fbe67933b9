// A leaf with outputs that reaches its end without __hpvm__return on one
// path (clang merges both paths into one return).
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

typedef struct __attribute__((__packed__)) { float x; float y; } Pair;

Pair leaf(float *a, long n) {
  if (n > 3)
    __hpvm__return(2, a[0], a[1]);
  // CHECK: return_missing_path.c:[[@LINE+1]]:1: error: leaf node 'leaf' has 2 outputs but reaches its end here without __hpvm__return on some path (every path must end with __hpvm__return)
}

Pair root(float *a, long n) {
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindOut(node, 0, 0, 0);
  __hpvm__bindOut(node, 1, 1, 0);
}

int main(void) {
  float a[2] = {1, 2};
  struct __attribute__((__packed__)) { float *a; long n; Pair out; } args = {a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
