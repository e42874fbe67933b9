// C host code with a constructor, a destructor (llvm.mlir.global_dtors) and an
// atexit handler around a launch.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
static int ready;
__attribute__((constructor)) static void start(void) { ready = 42; }
__attribute__((destructor)) static void stop(void) { printf("destructor: ran\n"); }
static void bye(void) { printf("atexit: ran\n"); }
typedef struct __attribute__((__packed__)) { size_t b; } Out;
Out leaf(int *a, size_t bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  a[__hpvm__getNodeInstanceID_x(__hpvm__getNode())] += 1;
  __hpvm__return(1, bytes);
}
void root(int *a, size_t bytes, long n) {
  void *node = __hpvm__createNodeND(1, leaf, n);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
}
int main(void) {
  atexit(bye);
  int a[4] = {0};
  struct __attribute__((__packed__)) { int *a; size_t bytes; long n; } args = {a, sizeof a, 4};
  __hpvm__wait(__hpvm__launch(0, root, &args));
  printf("structors: ready=%d a=%d%d%d%d\n", ready, a[0], a[1], a[2], a[3]);
  return 0;
}
