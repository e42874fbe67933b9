// Internal nodes are static graphs: their structure cannot depend on inputs.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long n) {}

void root(long n) {
  void *a = __hpvm__createNodeND(0, leaf);
  // CHECK: graph_depends_on_input.c:[[@LINE+1]]:9: error: the graph described by 'root' depends on a value that is not a compile-time constant
  if (n > 3)
    __hpvm__bindIn(a, 0, 0, 0);
}

int main(void) {
  struct __attribute__((__packed__)) { long n; } args = {5};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
