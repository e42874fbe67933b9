/* Host of tensor_batches.mlir: BATCHES (argv[1], default 12) batches of two random 8x8
 * images through the CNN; prints every image's class probabilities (hexadecimal floats, so
 * that outputs compare bit for bit) and how many differ from a plain C reference by more
 * than a relative 1e-4. */
#include <hpvm/hpvm_memref.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

HPVM_MEMREF_DEFINE(memref_4d_t, float, 4);

void _mlir_ciface_run(memref_4d_t *xs, memref_4d_t *w, memref_4d_t *b,
                      hpvm_memref_f32_2d_t *m, hpvm_memref_f32_2d_t *mb,
                      hpvm_memref_f32_2d_t *out, int64_t batches);

static float value(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) % 2001) / 1000.0f - 1.0f;
}

static memref_4d_t memref_4d(float *data, int64_t n, int64_t c, int64_t h, int64_t w) {
  memref_4d_t m = {data, data, 0, {n, c, h, w}, {c * h * w, h * w, w, 1}};
  return m;
}

/* The probabilities of image x (8x8) by the network, in plain C. */
static void reference(const float *x, const float *w, const float *b, const float *m,
                      const float *mb, float *probabilities) {
  float features[64], logits[10], big = -INFINITY, total = 0.0f;
  for (int o = 0; o < 4; ++o)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float pooled = -INFINITY;
        for (int pi = 2 * i; pi < 2 * i + 2; ++pi)
          for (int pj = 2 * j; pj < 2 * j + 2; ++pj) {
            float s = 0.0f;
            for (int di = 0; di < 3; ++di)
              for (int dj = 0; dj < 3; ++dj) {
                int ii = pi + di - 1, jj = pj + dj - 1;
                if (ii >= 0 && ii < 8 && jj >= 0 && jj < 8)
                  s += x[ii * 8 + jj] * w[o * 9 + di * 3 + dj];
              }
            s += b[o];
            pooled = fmaxf(pooled, s > 0.0f ? s : 0.0f);
          }
        features[o * 16 + i * 4 + j] = pooled;
      }
  for (int c = 0; c < 10; ++c) {
    float s = mb[c];
    for (int k = 0; k < 64; ++k)
      s += features[k] * m[k * 10 + c];
    logits[c] = s;
    big = fmaxf(big, s);
  }
  for (int c = 0; c < 10; ++c)
    total += probabilities[c] = expf(logits[c] - big);
  for (int c = 0; c < 10; ++c)
    probabilities[c] /= total;
}

int main(int argc, char **argv) {
  long batches = argc > 1 ? atol(argv[1]) : 12, images = 2 * batches;
  unsigned state = 11;
  float *xs = malloc(sizeof(float) * 64 * images), *out = calloc(10 * images, sizeof(float));
  float w[36], b[4], m[640], mb[10];
  for (long i = 0; i < 64 * images; ++i)
    xs[i] = value(&state);
  for (int i = 0; i < 36; ++i)
    w[i] = value(&state);
  for (int i = 0; i < 4; ++i)
    b[i] = value(&state);
  for (int i = 0; i < 640; ++i)
    m[i] = 0.25f * value(&state);
  for (int i = 0; i < 10; ++i)
    mb[i] = value(&state);
  memref_4d_t x_ref = memref_4d(xs, images, 1, 8, 8), w_ref = memref_4d(w, 4, 1, 3, 3),
              b_ref = memref_4d(b, 1, 4, 1, 1);
  hpvm_memref_f32_2d_t m_ref = hpvm_memref_f32_2d(m, 64, 10),
                       mb_ref = hpvm_memref_f32_2d(mb, 1, 10),
                       out_ref = hpvm_memref_f32_2d(out, images, 10);
  _mlir_ciface_run(&x_ref, &w_ref, &b_ref, &m_ref, &mb_ref, &out_ref, batches);
  long wrong = 0;
  for (long k = 0; k < images; ++k) {
    float expected[10];
    reference(xs + 64 * k, w, b, m, mb, expected);
    printf("image %ld:", k);
    for (int c = 0; c < 10; ++c) {
      printf(" %a", out[10 * k + c]);
      wrong += fabsf(out[10 * k + c] - expected[c]) > 1e-4f * fmaxf(expected[c], 1e-3f);
    }
    printf("\n");
  }
  printf("tensor batches: batches=%ld images=%ld wrong=%ld\n", batches, images, wrong);
  free(xs);
  free(out);
  return wrong != 0;
}
