/* Host of Inputs/lanes.mlir: fills the inputs, runs @mix over n instances, and prints every
 * output element's bits (hashed) so that two builds can be compared bit for bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} memref_1d_t;

void _mlir_ciface_mix(memref_1d_t *in, memref_1d_t *idx, memref_1d_t *out, memref_1d_t *scattered);

static memref_1d_t view(void *data, int64_t n) {
  memref_1d_t m = {data, data, 0, {n}, {1}};
  return m;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
  float *in = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * n),
        *scattered = malloc(sizeof(float) * n);
  int32_t *idx = malloc(sizeof(int32_t) * n);
  for (int64_t i = 0; i < n; ++i) {
    in[i] = (float)(i % 17) * 0.25f - 1.0f;
    idx[i] = (int32_t)((i * 13 + 5) % n);
    out[i] = scattered[i] = -1.0f;
  }
  memref_1d_t a = view(in, n), b = view(idx, n), c = view(out, n), d = view(scattered, n);
  _mlir_ciface_mix(&a, &b, &c, &d);
  uint64_t hash = 1469598103934665603ull;
  for (int64_t i = 0; i < 2 * n; ++i) {
    float value = i < n ? out[i] : scattered[i - n];
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  }
  printf("lanes n=%lld hash=%016llx\n", (long long)n, (unsigned long long)hash);
  free(in), free(out), free(scattered), free(idx);
  return 0;
}
