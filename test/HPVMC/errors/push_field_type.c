// A pushed item whose struct declares an input with another type than the
// root's parameter (int for long).
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

typedef struct __attribute__((__packed__)) { float *a; int n; } Item;
typedef struct __attribute__((__packed__)) { float sum; } Sum;

Sum total(float *a, long n) {
  float s = 0;
  for (long i = 0; i < n; ++i)
    s += a[i];
  __hpvm__return(1, s);
}

Sum root(float *a, long n) {
  void *node = __hpvm__createNodeND(0, total);
  __hpvm__bindIn(node, 0, 0, 1);
  __hpvm__bindIn(node, 1, 1, 1);
  __hpvm__bindOut(node, 0, 0, 1);
}

int main(void) {
  float a[4] = {1, 2, 3, 4};
  Item item = {a, 4};
  void *g = __hpvm__launch(1, root, &item);
  // CHECK: push_field_type.c:[[@LINE+1]]:3: error: __hpvm__push: the argument struct 'Item' has field 1 at byte 8 (4 bytes), but input 1 of 'root' ('i64', 8 bytes) is read at byte 8; the struct's fields must have the types of the root's parameters
  __hpvm__push(g, &item);
  Sum *s = __hpvm__pop(g);
  __hpvm__wait(g);
  return s->sum != 10;
}
