/* Host of graph-semantics.mlir: runs the graph on n elements and checks the results; with a
 * second argument "twice" it tracks a buffer twice, which the runtime must refuse. */
#include <hpvm/hpvm_memref.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

HPVM_MEMREF_DEFINE(memref_1xf32_t, float, 1);
int64_t _mlir_ciface_run(hpvm_memref_f32_1d_t *data, hpvm_memref_f32_1d_t *out, int64_t n,
                         memref_1xf32_t *sum, bool track_twice);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  bool twice = argc > 2 && strcmp(argv[2], "twice") == 0;
  float *data = calloc(n, sizeof(float)), *out = calloc(n, sizeof(float)), sum_value = 0;
  hpvm_memref_f32_1d_t d = hpvm_memref_f32_1d(data, n), o = hpvm_memref_f32_1d(out, n);
  memref_1xf32_t s = {&sum_value, &sum_value, 0, {1}, {1}};
  int64_t count = _mlir_ciface_run(&d, &o, n, &s, twice);
  bool data_ok = true, out_ok = true;
  double expected_sum = (double)n * (double)(n - 1) / 2.0;
  for (long i = 0; i < n; ++i) {
    data_ok &= data[i] == (float)i;
    out_ok &= out[i] == (float)i + (float)expected_sum;
  }
  printf("n=%ld launches=2 count=%ld sum=%.0f data=%s out=%s\n", n, (long)count, sum_value,
         data_ok ? "ok" : "WRONG", out_ok ? "ok" : "WRONG");
  free(data), free(out);
  return data_ok && out_ok && sum_value == (float)expected_sum ? 0 : 1;
}
