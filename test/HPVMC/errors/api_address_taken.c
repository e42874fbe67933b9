// An HPVM-C function called through a cast function pointer (here with a
// missing argument) is not a call the frontend can raise.
// RUN: %expect-exit 1 hpvm-cc %s -o %t 2>&1 | FileCheck %s
#include <hpvm.h>

void leaf(long *a) {
  // CHECK: api_address_taken.c:[[@LINE+1]]:5: error: the address of HPVM-C function '__hpvm__getNodeInstanceID_x' is taken (a call through a pointer or a cast?); HPVM-C functions may only be called directly, with the arguments hpvm.h declares
  a[((long (*)(void))__hpvm__getNodeInstanceID_x)()] = 1;
}

void root(long *a, long n) {
  void *node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
}

int main(void) {
  long a[8];
  struct __attribute__((__packed__)) { long *a; long n; } args = {a, 8};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  return 0;
}
