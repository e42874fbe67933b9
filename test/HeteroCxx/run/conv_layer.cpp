// A tensor program in Hetero-C++: a LeNet-style layer (a padded 3x3
// convolution of a 1x8x8 image into 4 channels, bias, ReLU, 2x2 max pool, then
// a dense layer of 10 outputs and a softmax) as a section of three parallel
// loops over the output elements, chained by their buffers. main compares
// every output with a plain C reference computed in the same order (exact).
#include <heterocc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { C = 4, H = 8, W = 8, K = 3, P = 1, OH = 4, OW = 4, N = 10 };

void layer(const float *image, size_t image_bytes, const float *filter, size_t filter_bytes,
           const float *bias, size_t bias_bytes, float *features, size_t features_bytes,
           float *pooled, size_t pooled_bytes, const float *weights, size_t weights_bytes,
           float *scores, size_t scores_bytes) {
  void *section = __hetero_section_begin();
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        __hetero_parallel_loop(3, 4, image, image_bytes, filter, filter_bytes, bias,
                               bias_bytes, features, features_bytes, 1, features,
                               features_bytes, "conv_bias_relu");
        __hetero_hint(DEVICE);
        float sum = 0.0f;
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx) {
            int iy = y + ky - P, ix = x + kx - P;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              sum += image[iy * W + ix] * filter[(c * K + ky) * K + kx];
          }
        sum += bias[c];
        features[(c * H + y) * W + x] = sum > 0.0f ? sum : 0.0f;
      }
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < OH; ++y)
      for (int x = 0; x < OW; ++x) {
        __hetero_parallel_loop(3, 2, features, features_bytes, pooled, pooled_bytes, 1, pooled,
                               pooled_bytes, "pool_max");
        __hetero_hint(DEVICE);
        float m = features[(c * H + 2 * y) * W + 2 * x];
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx)
            m = fmaxf(m, features[(c * H + 2 * y + dy) * W + 2 * x + dx]);
        pooled[(c * OH + y) * OW + x] = m;
      }
  void *dense = __hetero_task_begin(3, pooled, pooled_bytes, weights, weights_bytes, scores,
                                    scores_bytes, 1, scores, scores_bytes, "dense_softmax");
  float largest = -INFINITY;
  for (int n = 0; n < N; ++n) {
    float s = 0.0f;
    for (int i = 0; i < C * OH * OW; ++i)
      s += pooled[i] * weights[n * C * OH * OW + i];
    scores[n] = s;
    largest = fmaxf(largest, s);
  }
  float total = 0.0f;
  for (int n = 0; n < N; ++n) {
    scores[n] = expf(scores[n] - largest);
    total += scores[n];
  }
  for (int n = 0; n < N; ++n)
    scores[n] /= total;
  __hetero_task_end(dense);
  __hetero_section_end(section);
}

int main() {
  float image[H * W], filter[C * K * K], bias[C], weights[N * C * OH * OW];
  float features[C * H * W], pooled[C * OH * OW], scores[N];
  float r_features[C * H * W], r_pooled[C * OH * OW], r_scores[N];
  for (int i = 0; i < H * W; ++i)
    image[i] = (float)((i * 13) % 17) / 8.0f - 1.0f;
  for (int i = 0; i < C * K * K; ++i)
    filter[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  for (int i = 0; i < C; ++i)
    bias[i] = 0.25f * (float)i - 0.5f;
  for (int i = 0; i < N * C * OH * OW; ++i)
    weights[i] = (float)((i * 5) % 23) / 11.0f - 1.0f;
  void *graph = __hetero_launch(
      (void *)layer, 7, image, sizeof image, filter, sizeof filter, bias, sizeof bias,
      features, sizeof features, pooled, sizeof pooled, weights, sizeof weights, scores,
      sizeof scores, 1, scores, sizeof scores);
  __hetero_wait(graph);
  // The reference: the same loops, sequentially.
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        float sum = 0.0f;
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx) {
            int iy = y + ky - P, ix = x + kx - P;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              sum += image[iy * W + ix] * filter[(c * K + ky) * K + kx];
          }
        sum += bias[c];
        r_features[(c * H + y) * W + x] = sum > 0.0f ? sum : 0.0f;
      }
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < OH; ++y)
      for (int x = 0; x < OW; ++x) {
        float m = r_features[(c * H + 2 * y) * W + 2 * x];
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx)
            m = fmaxf(m, r_features[(c * H + 2 * y + dy) * W + 2 * x + dx]);
        r_pooled[(c * OH + y) * OW + x] = m;
      }
  float largest = -INFINITY, total = 0.0f;
  for (int n = 0; n < N; ++n) {
    float s = 0.0f;
    for (int i = 0; i < C * OH * OW; ++i)
      s += r_pooled[i] * weights[n * C * OH * OW + i];
    r_scores[n] = s;
    largest = fmaxf(largest, s);
  }
  for (int n = 0; n < N; ++n) {
    r_scores[n] = expf(r_scores[n] - largest);
    total += r_scores[n];
  }
  for (int n = 0; n < N; ++n)
    r_scores[n] /= total;
  long wrong = 0;
  int best = 0;
  for (int i = 0; i < C * H * W; ++i)
    wrong += features[i] != r_features[i];
  for (int i = 0; i < C * OH * OW; ++i)
    wrong += pooled[i] != r_pooled[i];
  for (int n = 0; n < N; ++n) {
    wrong += scores[n] != r_scores[n];
    best = scores[n] > scores[best] ? n : best;
  }
  printf("conv_layer: class=%d p=%.6f wrong=%ld\n", best, scores[best], wrong);
  return wrong != 0;
}
