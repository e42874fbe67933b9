// Host calls belong to host code.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stddef.h>

void leaf(float *a, size_t bytes) {
  __hpvm__attributes(0, 1, a);
  // CHECK: host_call_in_leaf.c:[[@LINE+1]]:3: error: llvm_hpvm_track_mem is a host call and cannot appear in leaf node 'leaf'
  llvm_hpvm_track_mem(a, bytes);
  a[0] = 1.0f;
}

void root(float *a, size_t bytes) {
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
