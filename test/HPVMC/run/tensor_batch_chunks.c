// Two layers over a batch of 20 images, as the release's DNN programs run
// them: each leaf's convolution writes 5 MiB, which hpvm-tile-tensor-batch
// splits into chunks of 5 images so that the ops after it (the
// normalization, the pool) read the chunk back from the cache.
//
//   conv (3 -> 64, 3x3) -> add (bias) -> batchnorm -> relu
//   conv (64 -> 64, 1x1) -> add (bias) -> relu -> pool_max 2x2
//
// main compares the result with a plain C reference (relative 1e-4) and
// prints a rounded checksum, which scripts/differential.py compares with the
// build that runs each op over the whole batch.
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 20, C = 3, F = 64, S = 32, P = S / 2 };

void norm_block(void *x, size_t x_bytes, void *w, size_t w_bytes, void *b, size_t b_bytes,
                void *gamma, size_t gamma_bytes, void *beta, size_t beta_bytes, void *mean,
                size_t mean_bytes, void *var, size_t var_bytes) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(7, x, w, b, gamma, beta, mean, var, 0);
  __hpvm__tensor_shape(x, 4, N, C, S, S);
  __hpvm__tensor_shape(w, 4, F, C, 3, 3);
  __hpvm__tensor_shape(b, 4, 1, F, 1, 1);
  __hpvm__tensor_shape(gamma, 1, F);
  __hpvm__tensor_shape(beta, 1, F);
  __hpvm__tensor_shape(mean, 1, F);
  __hpvm__tensor_shape(var, 1, F);
  void *c = __hpvm__tensor_convolution(x, w, 1, 1, 1, 1);
  void *a = __hpvm__tensor_add(c, b);
  void *n = __hpvm__tensor_batchnorm(a, gamma, beta, mean, var, 0.001);
  void *r = __hpvm__tensor_relu(n);
  __hpvm__return(2, r, (size_t)0);
}

void pool_block(void *x, size_t x_bytes, void *w, size_t w_bytes, void *b, size_t b_bytes) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(3, x, w, b, 0);
  __hpvm__tensor_shape(x, 4, N, F, S, S);
  __hpvm__tensor_shape(w, 4, F, F, 1, 1);
  __hpvm__tensor_shape(b, 4, 1, F, 1, 1);
  void *c = __hpvm__tensor_convolution(x, w, 0, 0, 1, 1);
  void *a = __hpvm__tensor_add(c, b);
  void *r = __hpvm__tensor_relu(a);
  void *p = __hpvm__tensor_pool_max(r, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, p, (size_t)0);
}

void root(void *x, size_t x_bytes, void *w1, size_t w1_bytes, void *b1, size_t b1_bytes,
          void *gamma, size_t gamma_bytes, void *beta, size_t beta_bytes, void *mean,
          size_t mean_bytes, void *var, size_t var_bytes, void *w2, size_t w2_bytes, void *b2,
          size_t b2_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(9, x, w1, b1, gamma, beta, mean, var, w2, b2, 0);
  void *first = __hpvm__createNodeND(0, norm_block);
  void *second = __hpvm__createNodeND(0, pool_block);
  for (int i = 0; i < 14; ++i)
    __hpvm__bindIn(first, i, i, 0);
  __hpvm__edge(first, second, 1, 0, 0, 0);
  __hpvm__edge(first, second, 1, 1, 1, 0);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(second, 14 + i, 2 + i, 0);
  __hpvm__bindOut(second, 0, 0, 0);
  __hpvm__bindOut(second, 1, 1, 0);
}

typedef struct __attribute__((__packed__)) {
  void *x;
  size_t x_bytes;
  void *w1;
  size_t w1_bytes;
  void *b1;
  size_t b1_bytes;
  void *gamma;
  size_t gamma_bytes;
  void *beta;
  size_t beta_bytes;
  void *mean;
  size_t mean_bytes;
  void *var;
  size_t var_bytes;
  void *w2;
  size_t w2_bytes;
  void *b2;
  size_t b2_bytes;
  void *out;
  size_t out_bytes;
} RootIn;

static float x[N][C][S][S], w1[F][C][3][3], b1[F], gamma_[F], beta_[F], mean_[F], var_[F];
static float w2[F][F], b2[F], hidden[N][F][S][S], want[N][F][P][P];

static float value(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) % 2001) / 1000.0f - 1.0f;
}

// A k x k convolution (padded by k / 2) of image n at (f, i, j), plus the bias.
static float conv(int channels, int k, const float *in, const float *w, float bias, int n,
                  int f, int i, int j) {
  float s = 0.0f;
  for (int c = 0; c < channels; ++c)
    for (int di = 0; di < k; ++di)
      for (int dj = 0; dj < k; ++dj) {
        int ii = i + di - k / 2, jj = j + dj - k / 2;
        if (ii >= 0 && ii < S && jj >= 0 && jj < S)
          s += in[((n * channels + c) * S + ii) * S + jj] * w[((f * channels + c) * k + di) * k + dj];
      }
  return s + bias;
}

static void reference(void) {
  for (int n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f)
      for (int i = 0; i < S; ++i)
        for (int j = 0; j < S; ++j) {
          float v = conv(C, 3, &x[0][0][0][0], &w1[0][0][0][0], b1[f], n, f, i, j);
          v = gamma_[f] * ((v - mean_[f]) / sqrtf(var_[f] + 0.001f)) + beta_[f];
          hidden[n][f][i][j] = v > 0.0f ? v : 0.0f;
        }
  for (int n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f)
      for (int i = 0; i < P; ++i)
        for (int j = 0; j < P; ++j) {
          float best = 0.0f; // after a ReLU
          for (int d = 0; d < 4; ++d)
            best = fmaxf(best, conv(F, 1, &hidden[0][0][0][0], &w2[0][0], b2[f], n, f,
                                    2 * i + d / 2, 2 * j + d % 2));
          want[n][f][i][j] = best;
        }
}

int main(void) {
  unsigned state = 11;
  float *all[] = {&x[0][0][0][0], &w1[0][0][0][0], b1, gamma_, beta_, mean_, var_,
                  &w2[0][0], b2};
  int sizes[] = {N * C * S * S, F * C * 9, F, F, F, F, F, F * F, F};
  for (int k = 0; k < 9; ++k)
    for (int i = 0; i < sizes[k]; ++i)
      all[k][i] = value(&state);
  for (int f = 0; f < F; ++f)
    var_[f] = 0.25f + fabsf(var_[f]);
  reference();

  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  *args = (RootIn){x,     sizeof x,     w1,   sizeof w1,   b1,    sizeof b1,    gamma_,
                   sizeof gamma_, beta_, sizeof beta_, mean_, sizeof mean_, var_, sizeof var_,
                   w2,    sizeof w2,    b2,   sizeof b2,   NULL,  0};
  __hpvm__init();
  void *dfg = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(dfg);
  const float *got = (const float *)args->out;
  int wrong = 0;
  double sum = 0.0;
  for (int i = 0; i < N * F * P * P; ++i) {
    float w = (&want[0][0][0][0])[i];
    if (fabsf(got[i] - w) > 1e-4f * fmaxf(1.0f, fabsf(w)) && wrong++ < 10)
      printf("out[%d] = %f, expected %f\n", i, got[i], w);
    sum += got[i];
  }
  // Rounded: a device's kernels sum in other orders (scripts/device-programs.py
  // compares this line across targets).
  printf("tensor_batch_chunks: sum=%.1f first=%.4f last=%.4f bytes=%zu\n", sum, got[0],
         got[N * F * P * P - 1], args->out_bytes);
  printf("tensor_batch_chunks: wrong=%d\n", wrong);
  __hpvm__cleanup();
  free(args->out); // a graph output of a plain-pointer program is the program's to free
  free(args);
  return wrong != 0;
}
