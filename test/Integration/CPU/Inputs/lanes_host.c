/* Host of Inputs/lanes.mlir: fills the inputs, runs @mix over n instances, compares every
 * output element bit for bit with mix_reference (the leaf written in C) and prints the count of
 * mismatches and a hash of the outputs, which vectorize-tiles.test pins. */
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

/* @mix_leaf of lanes.mlir for every instance i, one operation per statement, as the MLIR
 * does it (no contraction into fused multiply-adds). */
static void mix_reference(const float *in, const int32_t *idx, float *out, float *scattered,
                          uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    float first = in[0], v = in[i], r;
    if (i % 3 == 0) {
      int64_t k = idx[i]; /* index_cast i32 -> index sign-extends */
      r = in[k];
      r = r + first;
    } else {
      uint64_t m5 = i % 5;
      uint64_t q = m5 == 0 ? 7 : n / m5;
      float qf = (float)(int32_t)q; /* index_cast to i32 truncates, then sitofp */
      r = qf * v;
    }
    uint64_t trips = n % 7;
    float acc = r;
    for (uint64_t j = 0; j < trips; ++j) {
      if (j % 3 == 0)
        acc = acc * 0.5f;
      else
        acc = acc + v;
    }
    out[i] = acc;
    scattered[(i * 7) % n] = v;
  }
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
  float *ref_out = malloc(sizeof(float) * n), *ref_scattered = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i)
    ref_out[i] = ref_scattered[i] = -1.0f;
  mix_reference(in, idx, ref_out, ref_scattered, (uint64_t)n);
  long long mismatches = 0;
  for (int64_t i = 0; i < n; ++i)
    mismatches += memcmp(&out[i], &ref_out[i], sizeof(float)) != 0;
  for (int64_t i = 0; i < n; ++i)
    mismatches += memcmp(&scattered[i], &ref_scattered[i], sizeof(float)) != 0;
  uint64_t hash = 1469598103934665603ull;
  for (int64_t i = 0; i < 2 * n; ++i) {
    float value = i < n ? out[i] : scattered[i - n];
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  }
  printf("lanes n=%lld hash=%016llx mismatches=%lld\n", (long long)n, (unsigned long long)hash,
         mismatches);
  free(in), free(out), free(scattered), free(idx), free(ref_out), free(ref_scattered);
  return mismatches != 0;
}
