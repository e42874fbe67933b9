/* Host of a `wide` graph of benchmarks/scaling/gen_graph.py: leaf i adds i to every element of
 * the buffer; prints the buffer's sum. */
#include <stdint.h>
#include <stdio.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, size, stride;
} memref_f32_1d_t;

void _mlir_ciface_run(memref_f32_1d_t *a, int64_t n);

int main(void) {
  float a[64];
  for (int i = 0; i < 64; ++i)
    a[i] = 0.25f * (float)i;
  memref_f32_1d_t buffer = {a, a, 0, 64, 1};
  _mlir_ciface_run(&buffer, 64);
  double sum = 0;
  for (int i = 0; i < 64; ++i)
    sum += a[i];
  printf("sum %.2f\n", sum);
  return 0;
}
