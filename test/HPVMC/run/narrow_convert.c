/* Floats converted to small integers in a leaf run as vector lanes: the
 * shape of the release's hpvm-cava tone map (`uint8_t x = input[i] * 255;
 * result[i] = tone_map[x]`), whose inputs exceed 1.0, so that the conversion
 * does not fit 8 bits. C leaves that undefined, and the lanes once saturated
 * (255 or 0) where the scalar code wrapped: the last image of hpvm-cava
 * changed with lanes. Leaves now convert through a wider integer and keep its
 * low bits (docs/HPVM-C.md), in every version: main's reference spells that
 * out. Also int8_t, uint16_t, int16_t and uint32_t results, negative inputs,
 * and a row count that leaves a masked tail of lanes. */
#include <hpvm/hpvm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  size_t bytes_out;
} MapOut;

MapOut tone_map(float *in, size_t bytes_in, float *table, size_t bytes_table, float *out,
                size_t bytes_out, uint32_t *wide, size_t bytes_wide, long cols) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, table, 2, out, wide);
  long row = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  for (long col = 0; col < cols; ++col) {
    long i = row * cols + col;
    uint8_t x = in[i] * 255;
    int8_t s = in[i] * 100;
    uint16_t h = in[i] * 20000;
    int16_t g = in[i] * 9000;
    out[i] = table[x] + (float)s + (float)h * 0.5f + (float)g * 0.25f;
    wide[i] = (uint32_t)(in[i] * 1.0e9f);
  }
  __hpvm__return(1, bytes_out);
}

void root(float *in, size_t bytes_in, float *table, size_t bytes_table, float *out,
          size_t bytes_out, uint32_t *wide, size_t bytes_wide, long cols, long rows) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, table, 2, out, wide);
  void *node = __hpvm__createNodeND(1, tone_map, rows);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

int main(void) {
  const long rows = 37, cols = 29, n = rows * cols;
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  float *table = malloc(256 * sizeof(float));
  uint32_t *wide = malloc(n * sizeof(uint32_t));
  for (long i = 0; i < 256; ++i)
    table[i] = (float)((i * 7) % 256) / 256.0f;
  /* From -3 to about 12: most values do not fit uint8_t once scaled by 255. */
  for (long i = 0; i < n; ++i)
    in[i] = (float)((i * 37) % 1500) / 100.0f - 3.0f;
  struct __attribute__((__packed__)) {
    float *in;
    size_t bytes_in;
    float *table;
    size_t bytes_table;
    float *out;
    size_t bytes_out;
    uint32_t *wide;
    size_t bytes_wide;
    long cols;
    long rows;
  } args = {in, n * sizeof(float), table, 256 * sizeof(float), out, n * sizeof(float),
            wide, n * sizeof(uint32_t), cols, rows};
  llvm_hpvm_track_mem(in, args.bytes_in);
  llvm_hpvm_track_mem(table, args.bytes_table);
  llvm_hpvm_track_mem(out, args.bytes_out);
  llvm_hpvm_track_mem(wide, args.bytes_wide);
  void *dfg = __hpvm__launch(0, root, &args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, args.bytes_out);
  llvm_hpvm_request_mem(wide, args.bytes_wide);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(table);
  llvm_hpvm_untrack_mem(out);
  llvm_hpvm_untrack_mem(wide);
  long wrong = 0;
  double sum = 0;
  unsigned long long wide_sum = 0;
  for (long i = 0; i < n; ++i) {
    uint8_t x = (uint8_t)(int32_t)(in[i] * 255);
    int8_t s = (int8_t)(int32_t)(in[i] * 100);
    uint16_t h = (uint16_t)(int32_t)(in[i] * 20000);
    int16_t g = (int16_t)(int32_t)(in[i] * 9000);
    float expect = table[x] + (float)s + (float)h * 0.5f + (float)g * 0.25f;
    uint32_t w = (uint32_t)(int64_t)(in[i] * 1.0e9f);
    wrong += out[i] != expect || wide[i] != w;
    sum += out[i];
    wide_sum += wide[i];
  }
  printf("narrow_convert: %ldx%ld sum=%.4f wide=%llu wrong=%ld\n", rows, cols, sum, wide_sum,
         wrong);
  free(in), free(out), free(table), free(wide);
  return wrong != 0;
}
