// A streaming root whose items carry a host pointer without its size in bytes: the
// buffer could not travel to another rank, so --distribute=mpi refuses the program.
#include <hpvm/hpvm.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *table;
  float gain;
} Item;

typedef struct __attribute__((__packed__)) {
  float value;
} Out;

Out lookup(float *table, float gain) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, table, 0);
  __hpvm__return(1, table[0] * gain);
}

Out unsized_root(float *table, float gain) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, table, 0);
  void *l = __hpvm__createNodeND(0, lookup);
  __hpvm__bindIn(l, 0, 0, 1);
  __hpvm__bindIn(l, 1, 1, 1);
  __hpvm__bindOut(l, 0, 0, 1);
}

int main(void) {
  float table[1] = {2.0f};
  Item item = {table, 3.0f};
  __hpvm__init();
  void *dfg = __hpvm__launch(1, unsized_root, &item);
  __hpvm__push(dfg, &item);
  Out *out = __hpvm__pop(dfg);
  free(out);
  __hpvm__wait(dfg);
  __hpvm__cleanup();
  return 0;
}
