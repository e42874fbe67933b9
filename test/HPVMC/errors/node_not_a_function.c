// The node function must be a function named in the call, not a value
// computed at run time.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void left(long n) {}
void right(long n) {}

void root(long n, long which) {
  void (*pick[2])(long) = {left, right};
  // CHECK: node_not_a_function.c:[[@LINE+1]]:13: error: __hpvm__createNodeND expects a node function (the name of a C function) as argument 2, found a value computed at run time
  void *a = __hpvm__createNodeND(0, pick[which & 1]);
  __hpvm__bindIn(a, 0, 0, 0);
}

int main(int argc, char **argv) {
  struct __attribute__((__packed__)) { long n, which; } args = {1, argc};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
