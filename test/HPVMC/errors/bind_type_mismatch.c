// A bind of a long input to a pointer input of the child.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

void leaf(float *a, size_t bytes) {
  __hpvm__attributes(0, 1, a);
  a[0] = 1.0f;
}

void root(float *a, size_t bytes, long n) {
  void *node = __hpvm__createNodeND(0, leaf);
  // CHECK: bind_type_mismatch.c:[[@LINE+1]]:3: error: 'hpvm.bind_in' op type mismatch: input 2 of @root is 'i64' but input 0 of @leaf is '!llvm.ptr'
  __hpvm__bindIn(node, 2, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
}

int main(void) {
  float a[1];
  struct __attribute__((__packed__)) { float *a; size_t bytes; long n; } args = {a, sizeof a, 1};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
