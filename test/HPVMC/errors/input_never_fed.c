// A child input nobody feeds.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

void leaf(float *a, size_t bytes, float scale) {
  __hpvm__attributes(0, 1, a);
  a[0] = scale;
}

void root(float *a, size_t bytes) {
  // CHECK: input_never_fed.c:[[@LINE+1]]:16: error: 'hpvm.create_node' op input 2 ('f32') of @leaf is never fed: expected one hpvm.edge or hpvm.bind_in to it
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
}

int main(void) {
  float a[1];
  struct __attribute__((__packed__)) { float *a; size_t bytes; } args = {a, sizeof a};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
