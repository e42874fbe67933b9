// The argument struct of __hpvm__launch without __attribute__((__packed__)):
// padding puts `m` at byte 16, but the inputs are read packed (byte 12), so
// the root would silently get a wrong value.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>
#include <stdlib.h>

typedef struct { int *a; int n; long m; } RootIn;

void leaf(int *a, int n, long m) { a[0] = n + (int)m; }

void root(int *a, int n, long m) {
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindIn(node, 2, 2, 0);
}

int main(void) {
  int a[1];
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){a, 5, 7};
  // CHECK: args_not_packed.c:[[@LINE+1]]:13: error: __hpvm__launch: the argument struct 'RootIn' has field 2 at byte 16 (8 bytes), but input 2 of 'root' ('i64', 8 bytes) is read at byte 12; HPVM-C reads the inputs packed: declare the struct __attribute__((__packed__))
  void *g = __hpvm__launch(0, root, args);
  __hpvm__wait(g);
  return a[0] != 12;
}
