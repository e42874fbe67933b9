// Two siblings feeding each other.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

typedef struct __attribute__((__packed__)) { long v; } Out;

Out ping(long x) { __hpvm__return(1, x + 1); }
Out pong(long x) { __hpvm__return(1, x * 2); }

void root(long unused) {
  void *a = __hpvm__createNodeND(0, ping);
  void *b = __hpvm__createNodeND(0, pong);
  __hpvm__edge(a, b, 1, 0, 0, 0);
  // CHECK: edge_cycle.c:[[@LINE+1]]:3: error: 'hpvm.edge' op closes a cycle in the child graph of @root: @ping -> @pong -> @ping; the graph must be acyclic
  __hpvm__edge(b, a, 1, 0, 0, 0);
}

int main(void) {
  struct __attribute__((__packed__)) { long unused; } args = {0};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
