/* Extents computed from the inputs with ?: and min: clang turns
 * `n < 16 ? n : 16` into llvm.intr.smin and `n < 16 ? 1 : (n + 15) / 16`
 * into a select, both kept in the internal nodes. int and unsigned extents,
 * a two-level grid whose leaf covers n elements. */
#include <hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  int *y;
  size_t bytes_y;
  int n;
  unsigned m;
} Args;

void fill(int *y, size_t bytes_y, int n, unsigned m) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, y, 1, y);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getParentNode(self)) *
               __hpvm__getNumNodeInstances_x(self) +
           __hpvm__getNodeInstanceID_x(self);
  if (i < n)
    y[i] += (int)(i % m) + 1;
}

void tile(int *y, size_t bytes_y, int n, unsigned m) {
  void *leaf = __hpvm__createNodeND(1, fill, n < 16 ? n : 16);
  for (int p = 0; p < 4; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

void root(int *y, size_t bytes_y, int n, unsigned m) {
  void *tiles = __hpvm__createNodeND(1, tile, n < 16 ? 1 : (n + 15) / 16);
  for (int p = 0; p < 4; ++p)
    __hpvm__bindIn(tiles, p, p, 0);
}

int main(void) {
  int wrong = 0;
  long total = 0;
  for (int n = 1; n <= 50; n += 7) {
    int *y = calloc(n, sizeof(int));
    Args args = {y, n * sizeof(int), n, 5};
    __hpvm__wait(__hpvm__launch(0, root, &args));
    for (int i = 0; i < n; ++i) {
      wrong += y[i] != i % 5 + 1;
      total += y[i];
    }
    free(y);
  }
  printf("extent_select: total=%ld wrong=%d\n", total, wrong);
  return wrong != 0;
}
