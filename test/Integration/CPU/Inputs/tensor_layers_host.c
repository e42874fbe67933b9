/* Host of tensor_layers.mlir: runs the network and compares it with a plain C
 * reference; with an output file, also writes every result bit pattern there so
 * that two compilations (fused, unfused) can be compared exactly. */
#include <hpvm/hpvm_memref.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

HPVM_MEMREF_DEFINE(memref_4d_t, float, 4);

static memref_4d_t view_4d(float *data, int64_t a, int64_t b, int64_t c, int64_t d) {
  memref_4d_t m = {data, data, 0, {a, b, c, d}, {b * c * d, c * d, d, 1}};
  return m;
}

void _mlir_ciface_run(memref_4d_t *x, memref_4d_t *w, memref_4d_t *b, hpvm_memref_f32_2d_t *f,
                      hpvm_memref_f32_2d_t *m, hpvm_memref_f32_2d_t *mb, memref_4d_t *out,
                      hpvm_memref_f32_2d_t *probabilities);

enum { H = 8, W = 8, F = 4, K = 3, P = 4, ROWS = 2, IN = 16, CLASSES = 10 };

static void reference(const float *x, const float *w, const float *b, const float *f,
                      const float *m, const float *mb, float *out, float *probabilities) {
  float act[F][H][W];
  for (int o = 0; o < F; ++o)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j) {
        float s = 0.0f;
        for (int u = 0; u < K; ++u)
          for (int v = 0; v < K; ++v) {
            int y = i + u - 1, z = j + v - 1;
            if (y >= 0 && y < H && z >= 0 && z < W)
              s += x[y * W + z] * w[(o * K + u) * K + v];
          }
        s += b[o];
        act[o][i][j] = s > 0.0f ? s : 0.0f;
      }
  for (int o = 0; o < F; ++o)
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < P; ++j) {
        float best = -INFINITY;
        for (int u = 0; u < 2; ++u)
          for (int v = 0; v < 2; ++v)
            best = fmaxf(best, act[o][2 * i + u][2 * j + v]);
        out[(o * P + i) * P + j] = best;
      }
  for (int r = 0; r < ROWS; ++r) {
    float t[CLASSES], max = -INFINITY, sum = 0.0f;
    for (int c = 0; c < CLASSES; ++c) {
      float s = 0.0f;
      for (int k = 0; k < IN; ++k)
        s += f[r * IN + k] * m[k * CLASSES + c];
      t[c] = tanhf(s + mb[c]);
      max = fmaxf(max, t[c]);
    }
    for (int c = 0; c < CLASSES; ++c)
      sum += t[c] = expf(t[c] - max);
    for (int c = 0; c < CLASSES; ++c)
      probabilities[r * CLASSES + c] = t[c] / sum;
  }
}

static float value(int i, int scale) { return (float)((i * 37 + 11) % 23 - 11) / (float)scale; }

int main(int argc, char **argv) {
  static float x[H * W], w[F * K * K], b[F], f[ROWS * IN], m[IN * CLASSES], mb[CLASSES];
  static float out[F * P * P], probabilities[ROWS * CLASSES];
  static float ref_out[F * P * P], ref_probabilities[ROWS * CLASSES];
  for (int i = 0; i < H * W; ++i) x[i] = value(i, 4);
  for (int i = 0; i < F * K * K; ++i) w[i] = value(i + 5, 8);
  for (int i = 0; i < F; ++i) b[i] = value(i + 3, 16);
  for (int i = 0; i < ROWS * IN; ++i) f[i] = value(i + 7, 8);
  for (int i = 0; i < IN * CLASSES; ++i) m[i] = value(i + 1, 32);
  for (int i = 0; i < CLASSES; ++i) mb[i] = value(i + 9, 16);
  memref_4d_t xv = view_4d(x, 1, 1, H, W), wv = view_4d(w, F, 1, K, K),
              bv = view_4d(b, 1, F, 1, 1), ov = view_4d(out, 1, F, P, P);
  hpvm_memref_f32_2d_t fv = hpvm_memref_f32_2d(f, ROWS, IN),
                       mv = hpvm_memref_f32_2d(m, IN, CLASSES),
                       mbv = hpvm_memref_f32_2d(mb, 1, CLASSES),
                       pv = hpvm_memref_f32_2d(probabilities, ROWS, CLASSES);
  _mlir_ciface_run(&xv, &wv, &bv, &fv, &mv, &mbv, &ov, &pv);
  reference(x, w, b, f, m, mb, ref_out, ref_probabilities);
  int mismatches = 0, positive = 0;
  for (int i = 0; i < F * P * P; ++i) {
    mismatches += fabsf(out[i] - ref_out[i]) > 1e-5f * (1.0f + fabsf(ref_out[i]));
    positive += out[i] > 0.0f;
  }
  for (int i = 0; i < ROWS * CLASSES; ++i)
    mismatches += fabsf(probabilities[i] - ref_probabilities[i]) > 1e-5f;
  printf("tensor layers features_positive=%s mismatches: %d\n",
         positive > 0 && positive < F * P * P ? "some" : "none-or-all", mismatches);
  if (argc > 1) {
    FILE *bits = fopen(argv[1], "w");
    if (!bits)
      return 2;
    for (int i = 0; i < F * P * P; ++i) fprintf(bits, "%a\n", out[i]);
    for (int i = 0; i < ROWS * CLASSES; ++i) fprintf(bits, "%a\n", probabilities[i]);
    fclose(bits);
  }
  return mismatches != 0;
}
