/* Host of concurrent-siblings.mlir: two flags, both siblings must see each other's. */
#include <hpvm/hpvm_memref.h>
#include <stdio.h>

HPVM_MEMREF_DEFINE(flags_memref_t, int32_t, 1);
int32_t _mlir_ciface_run(flags_memref_t *flags);

int main(void) {
  int32_t flags[2] = {0, 0};
  flags_memref_t f = {flags, flags, 0, {2}, {1}};
  int32_t seen = _mlir_ciface_run(&f);
  printf("both siblings saw each other: %d of 2\n", seen);
  return seen == 2 ? 0 : 1;
}
