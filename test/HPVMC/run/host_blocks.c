// Host code with two blocks that differ only in which local array they use:
// the lowering must leave host code it does not own as C wrote it (the
// blocks merged, llvm.lifetime.start would end up on a block argument).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct __attribute__((__packed__)) {
  float *a; size_t bytes; long n;
} RootIn;

void scale(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  if (i < n) a[i] = a[i] * 2.0f + 1.0f;
}

void root(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *node = __hpvm__createNodeND(1, scale, n);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindIn(node, 2, 2, 0);
}

__attribute__((noinline)) static void describe(char *buffer, size_t size, const char *what, int v) {
  snprintf(buffer, size, "%s %d", what, v);
}

int main(int argc, char **argv) {
  int c = argc > 1;
  if (c) { char a[64]; describe(a, sizeof a, "left", argc); puts(a); }
  else { char b[64]; describe(b, sizeof b, "right", argc); puts(b); }
  __hpvm__init();
  long n = 100;
  float *data = malloc(n * sizeof(float));
  for (long i = 0; i < n; ++i) data[i] = i;
  llvm_hpvm_track_mem(data, n * sizeof(float));
  RootIn *args = malloc(sizeof(RootIn));
  args->a = data; args->bytes = n * sizeof(float); args->n = n;
  void *g = __hpvm__launch(0, root, args);
  __hpvm__wait(g);
  llvm_hpvm_request_mem(data, n * sizeof(float));
  double sum = 0; for (long i = 0; i < n; ++i) sum += data[i];
  printf("host_blocks: sum=%.1f wrong=%d\n", sum, sum != 10000.0);
  llvm_hpvm_untrack_mem(data);
  free(data); free(args);
  __hpvm__cleanup();
  return sum != 10000.0;
}
