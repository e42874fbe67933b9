/* Outputs of the small C types that variadic __hpvm__return promotes (char,
 * short, bool, float, unsigned char) come back with their declared types, and
 * an unpacked root output struct is filled at the offsets C gave its fields.
 * A bool input (i1 in LLVM IR) reaches the leaf too, also as a kernel's. */
#include <hpvm.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct __attribute__((__packed__)) {
  char c;
  short s;
  bool b;
  float f;
  unsigned char u;
} Small;

/* Not packed: the fields have padding between them. */
typedef struct {
  char c;
  short s;
  bool b;
  float f;
  unsigned char u;
} SmallUnpacked;

Small leaf(long x, bool big) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__return(5, (char)(x - 100), (short)(x * 300), big, (float)x / 3.0f,
                 (unsigned char)(x + 200));
}

SmallUnpacked root(long x, bool big) {
  __hpvm__hint(CPU_TARGET);
  void *node = __hpvm__createNodeND(0, leaf);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindOut(node, i, i, 0);
}

typedef struct __attribute__((__packed__)) {
  long x;
  bool big;
  SmallUnpacked out;
} RootIn;

int main(void) {
  int wrong = 0;
  for (long x = 1; x <= 7; x += 6) {
    RootIn args = {x, x > 3, {0}};
    void *graph = __hpvm__launch(0, root, &args);
    __hpvm__wait(graph);
    SmallUnpacked o = args.out;
    wrong += o.c != (char)(x - 100) || o.s != (short)(x * 300) || o.b != (x > 3) ||
             o.f != (float)x / 3.0f || o.u != (unsigned char)(x + 200);
    printf("small_types: x=%ld c=%d s=%d b=%d f=%.6f u=%u\n", x, o.c, o.s, o.b, o.f, o.u);
  }
  printf("small_types: wrong=%d\n", wrong);
  return wrong != 0;
}
