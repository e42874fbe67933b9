// One child input fed by two binds.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

void leaf(float *a, size_t bytes) {
  __hpvm__attributes(0, 1, a);
  a[0] = 1.0f;
}

void root(float *a, size_t bytes, float *b, size_t bytes_b) {
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  // CHECK: input_fed_twice.c:[[@LINE+1]]:3: error: 'hpvm.bind_in' op input 0 of @leaf is bound twice by hpvm.bind_in; expected exactly one edge or bind_in
  __hpvm__bindIn(node, 2, 0, 0);
}

int main(void) {
  float a[1], b[1];
  struct __attribute__((__packed__)) { float *a; size_t ba; float *b; size_t bb; } args = {a, 4, b, 4};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
