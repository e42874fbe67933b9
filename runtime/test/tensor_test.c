/* tensor_test.c - the tensor kernels (hpvm_rt_tensor_matmul_f32, hpvm_rt_tensor_conv2d_f32)
 * against plain loops in double: shapes around the micro-kernel's 6 x 16 block and the task
 * blocks, depths past one packed block, padding, strides, groups and depthwise convolutions;
 * biases and activations (fused epilogues); inconsistent arguments compute nothing. Every case
 * runs with the CPU's kernels (AVX2 where it has it) and again with the baseline ones. */
#include "tensor/kernels.h"
#include "test_util.h"

#include <math.h>
#include <pthread.h>


/* The epilogue of the kernels: bias, then identity / relu / clipped relu at 0.5. */
static int64_t activation_for_case;
static double activate_ref(double v) {
  if (activation_for_case == HPVM_RT_TENSOR_IDENTITY)
    return v;
  v = v > 0 ? v : 0;
  return activation_for_case == HPVM_RT_TENSOR_CLIPPED_RELU && v > 0.5 ? 0.5 : v;
}

/* |got - want| within a tolerance of the sum of |terms| (float accumulation order differs). */
static void check_close(const float *got, const double *want, const double *scale,
                        int64_t count, const char *what) {
  for (int64_t i = 0; i < count; ++i) {
    double tolerance = 1e-5 * (scale[i] + 1.0);
    if (fabs(got[i] - want[i]) > tolerance) {
      fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)i,
              (double)got[i], want[i]);
      exit(1);
    }
  }
}

static float *keep(float *p);
static float *copy_of(const float *p, int64_t count);

static void check_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, int with_bias) {
  float *a = test_random_array(batch * m * k), *b = test_random_array(batch * k * n);
  float *bias = with_bias ? test_random_array(n) : NULL;
  float *c = test_random_array(batch * m * n); /* garbage: the kernel must overwrite it */
  double *want = calloc((size_t)(batch * m * n + 1), sizeof(double));
  double *scale = calloc((size_t)(batch * m * n + 1), sizeof(double));
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk) {
          double term = (double)a[(p * m + i) * k + kk] * b[(p * k + kk) * n + j];
          want[(p * m + i) * n + j] += term;
          scale[(p * m + i) * n + j] += fabs(term);
        }
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double *v = &want[(p * m + i) * n + j];
        *v = activate_ref(*v + (bias ? bias[j] : 0.0));
      }
  hpvm_rt_tensor_matmul_f32(a, b, bias, c, batch, m, n, k, activation_for_case, 0.5);
  char what[96];
  snprintf(what, sizeof(what), "matmul %lldx(%lldx%lld * %lldx%lld)", (long long)batch,
           (long long)m, (long long)k, (long long)k, (long long)n);
  check_close(c, want, scale, batch * m * n, what);
  /* The constant-weights entry: b packed on the first call and kept; the same bytes as the
   * plain call, on the first call and from the kept packing (operands kept alive, as the
   * convolutions' below). */
  float *constant_b = keep(copy_of(b, batch * k * n));
  float *constant_bias = bias ? keep(copy_of(bias, n)) : NULL;
  for (int round = 0; round < 2; ++round) {
    float *again = test_random_array(batch * m * n);
    hpvm_rt_tensor_matmul_constant_f32(a, constant_b, constant_bias, again, batch, m, n, k,
                                       activation_for_case, 0.5);
    CHECK(batch * m * n == 0 || memcmp(again, c, sizeof(float) * (size_t)(batch * m * n)) == 0);
    free(again);
  }
  free(a), free(b), free(bias), free(c), free(want), free(scale);
}

/* Operands of the constant-filter calls: alive until the end of the test. */
static float *kept[4096];
static size_t kept_count;

static float *keep(float *p) {
  CHECK(kept_count < sizeof(kept) / sizeof(kept[0]));
  kept[kept_count++] = p;
  return p;
}

static float *copy_of(const float *p, int64_t count) {
  float *c = malloc(sizeof(float) * (size_t)(count + 1));
  CHECK(c != NULL);
  memcpy(c, p, sizeof(float) * (size_t)count);
  return c;
}

static void check_conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh,
                       int64_t kw, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                       int64_t stride_w, int64_t groups, int with_bias) {
  int64_t oh = (h + 2 * pad_h - kh) / stride_h + 1, ow = (w + 2 * pad_w - kw) / stride_w + 1;
  int64_t cg = c / groups, fg = f / groups;
  float *input = test_random_array(n * c * h * w), *filter = test_random_array(f * cg * kh * kw);
  float *bias = with_bias ? test_random_array(f) : NULL;
  int64_t count = n * f * oh * ow;
  float *output = test_random_array(count);
  double *want = calloc((size_t)count + 1, sizeof(double));
  double *scale = calloc((size_t)count + 1, sizeof(double));
  for (int64_t img = 0; img < n; ++img)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t at = ((img * f + o) * oh + y) * ow + x;
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t iy = y * stride_h + i - pad_h, ix = x * stride_w + j - pad_w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                  continue;
                int64_t in_channel = (o / fg) * cg + ch;
                double term = (double)input[((img * c + in_channel) * h + iy) * w + ix] *
                              filter[((o * cg + ch) * kh + i) * kw + j];
                want[at] += term;
                scale[at] += fabs(term);
              }
        }
  for (int64_t img = 0; img < n; ++img)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t at = 0; at < oh * ow; ++at) {
        double *v = &want[(img * f + o) * oh * ow + at];
        *v = activate_ref(*v + (bias ? bias[o] : 0.0));
      }
  hpvm_rt_tensor_conv2d_f32(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                            pad_w, stride_h, stride_w, groups, activation_for_case, 0.5);
  char what[160];
  snprintf(what, sizeof(what), "conv %lldx%lldx%lldx%lld * %lldx%lldx%lldx%lld pad %lld,%lld "
           "stride %lld,%lld groups %lld", (long long)n, (long long)c, (long long)h,
           (long long)w, (long long)f, (long long)cg, (long long)kh, (long long)kw,
           (long long)pad_h, (long long)pad_w, (long long)stride_h, (long long)stride_w,
           (long long)groups);
  check_close(output, want, scale, count, what);
  /* The constant-filter entry: its packed weights made on the first call and kept. The same
   * bytes as the plain call, on the first call and on the second (from the kept packing). Its
   * operands must never change: copies kept to the end of the test (kept[]), never freed while
   * calls can still come, since a freed address reused by other weights would be another
   * constant's. */
  float *constant_filter = keep(copy_of(filter, f * cg * kh * kw));
  float *constant_bias = bias ? keep(copy_of(bias, f)) : NULL;
  for (int round = 0; round < 2; ++round) {
    float *again = test_random_array(count);
    hpvm_rt_tensor_conv2d_constant_f32(input, constant_filter, constant_bias, again, n, c, h, w,
                                       f, kh, kw, oh, ow, pad_h, pad_w, stride_h, stride_w,
                                       groups, activation_for_case, 0.5);
    CHECK(count == 0 || memcmp(again, output, sizeof(float) * (size_t)count) == 0);
    free(again);
  }
  free(input), free(filter), free(bias), free(output), free(want), free(scale);
}

/* A pool padded by ph / pw before the image and eh / ew after it. */
static void check_pool_ends(int64_t kind, int64_t n, int64_t c, int64_t h, int64_t w,
                            int64_t wh, int64_t ww, int64_t sh, int64_t sw, int64_t ph,
                            int64_t pw, int64_t eh, int64_t ew) {
  int64_t oh = (h + ph + eh - wh) / sh + 1, ow = (w + pw + ew - ww) / sw + 1;
  int64_t count = n * c * oh * ow;
  float *input = test_random_array(n * c * h * w), *output = test_random_array(count);
  double *want = calloc((size_t)count + 1, sizeof(double));
  double *scale = calloc((size_t)count + 1, sizeof(double));
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        double acc = kind == HPVM_RT_TENSOR_POOL_MAX ? -INFINITY
                     : kind == HPVM_RT_TENSOR_POOL_MIN ? INFINITY : 0.0;
        for (int64_t i = 0; i < wh; ++i)
          for (int64_t j = 0; j < ww; ++j) {
            int64_t iy = y * sh + i - ph, ix = x * sw + j - pw;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            double v = input[(plane * h + iy) * w + ix];
            acc = kind == HPVM_RT_TENSOR_POOL_MAX ? fmax(acc, v)
                  : kind == HPVM_RT_TENSOR_POOL_MIN ? fmin(acc, v) : acc + v;
          }
        int64_t at = (plane * oh + y) * ow + x;
        want[at] = kind == HPVM_RT_TENSOR_POOL_MEAN ? acc / (double)(wh * ww) : acc;
        scale[at] = 1.0;
      }
  hpvm_rt_tensor_pool_f32(input, output, kind, n, c, h, w, wh, ww, sh, sw, ph, pw, oh, ow);
  char what[96];
  snprintf(what, sizeof(what), "pool kind %lld %lldx%lld window %lldx%lld", (long long)kind,
           (long long)h, (long long)w, (long long)wh, (long long)ww);
  check_close(output, want, scale, count, what);
  free(input), free(output), free(want), free(scale);
}

static void check_pool(int64_t kind, int64_t n, int64_t c, int64_t h, int64_t w, int64_t wh,
                       int64_t ww, int64_t sh, int64_t sw, int64_t ph, int64_t pw) {
  check_pool_ends(kind, n, c, h, w, wh, ww, sh, sw, ph, pw, ph, pw);
}

static void run_all(void) {
  /* Around the 6 x 16 micro-kernel and the 48 x 256 task blocks; k past 256 (two packed
   * depths); k = 0 gives zeros. */
  int64_t sizes[][4] = {{1, 1, 1, 1},   {1, 6, 16, 8},   {1, 7, 17, 3},    {1, 5, 15, 300},
                        {3, 13, 33, 9}, {1, 48, 256, 4}, {1, 49, 257, 257}, {2, 64, 120, 400},
                        {1, 1, 1000, 5}, {1, 100, 1, 7}, {1, 4, 4, 0},     {4, 0, 3, 2},
                        /* one and two rows (unpacked): column blocks of 256 and a tail,
                         * depths past one chunk, a batch */
                        {2, 1, 600, 700}, {1, 2, 257, 513}, {3, 2, 9, 1}, {1, 1, 0, 3}};
  /* Every case once plain, once with a bias and an activation (cycling through them). */
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      activation_for_case = with_bias ? (int64_t)(i % 3) : HPVM_RT_TENSOR_IDENTITY;
      check_matmul(sizes[i][0], sizes[i][1], sizes[i][2], sizes[i][3], with_bias);
    }
  /* n, c, h, w, f, kh, kw, pad_h, pad_w, stride_h, stride_w, groups */
  int64_t convs[][12] = {
      {2, 1, 28, 28, 6, 5, 5, 2, 2, 1, 1, 1},  /* LeNet conv1 (padded) */
      {2, 6, 14, 14, 16, 5, 5, 0, 0, 1, 1, 1}, /* LeNet conv2 */
      {1, 3, 11, 9, 7, 3, 3, 1, 0, 2, 3, 1},   /* strides, uneven padding per dimension */
      {1, 8, 7, 7, 12, 1, 1, 0, 0, 1, 1, 1},   /* pointwise */
      {2, 4, 9, 9, 6, 3, 3, 1, 1, 1, 1, 2},    /* groups */
      {2, 8, 10, 10, 8, 3, 3, 1, 1, 1, 1, 8},  /* depthwise */
      {1, 5, 9, 12, 5, 3, 3, 1, 1, 2, 2, 5},   /* depthwise, strided */
      {1, 4, 6, 6, 8, 3, 3, 2, 2, 1, 1, 4},    /* 2 filters per channel (not depthwise) */
      {1, 2, 3, 3, 3, 3, 3, 4, 4, 1, 1, 1},    /* padding wider than the window */
      {1, 3, 40, 40, 4, 3, 3, 1, 1, 1, 1, 1},  /* more than one 256-column task block */
      /* Depthwise: blocks of 16 and 8 columns, the overlapping last block, edges. */
      {2, 6, 13, 13, 6, 3, 3, 1, 1, 2, 2, 6},   /* stride 2, odd width, pad 1 (7 columns) */
      {1, 3, 9, 37, 3, 3, 3, 1, 1, 2, 2, 3},    /* stride 2, odd width, pad 1 (19 columns) */
      {1, 4, 20, 56, 4, 3, 3, 1, 1, 2, 2, 4},   /* stride 2 as the MobileNet block */
      {1, 2, 7, 40, 2, 3, 3, 0, 0, 2, 2, 2},    /* stride 2, no padding */
      {1, 2, 8, 41, 2, 5, 5, 2, 2, 2, 2, 2},    /* stride 2, 5 x 5, pad 2 */
      {1, 3, 5, 45, 3, 3, 3, 1, 1, 1, 1, 3},    /* stride 1, 45 columns */
      {1, 2, 6, 30, 2, 2, 4, 0, 1, 1, 1, 2},    /* stride 1, 2 x 4 window */
      {1, 2, 9, 30, 2, 3, 3, 1, 1, 3, 3, 2},    /* stride 3 (scalar) */
      {1, 1, 20, 20, 1, 17, 3, 8, 1, 1, 1, 1},  /* a window of 17 rows */
      {1, 2, 12, 14, 2, 9, 9, 4, 4, 1, 1, 2},   /* 81 taps: the scalar depthwise loops */
      {1, 2, 3, 3, 2, 3, 3, 4, 4, 1, 1, 2},     /* depthwise, padding wider than the window */
      {2, 3, 11, 23, 3, 3, 3, 0, 1, 2, 2, 3},   /* depthwise, padding only along x */
      {1, 2, 10, 33, 2, 4, 5, 3, 2, 3, 4, 2},   /* depthwise, strides 3 x 4, 4 x 5 window */
      /* Direct convolutions without padding (narrow rows from a slab; wide ones read in
       * place, the last block of a row from a copy) and pointwise ones (one row per plane,
       * split in column ranges). */
      {3, 5, 6, 30, 7, 3, 3, 0, 0, 1, 1, 1},
      {1, 3, 5, 75, 7, 3, 3, 0, 0, 1, 1, 1},
      {1, 4, 9, 9, 5, 1, 1, 0, 0, 1, 1, 1},
      {2, 4, 9, 20, 6, 3, 3, 0, 0, 1, 1, 2},
      {1, 16, 28, 28, 20, 1, 1, 0, 0, 1, 1, 1},
      {1, 4, 5, 7, 9, 1, 1, 0, 0, 1, 1, 1},
      {2, 6, 4, 4, 15, 1, 1, 0, 0, 1, 1, 3},
      /* Outputs narrower than 16 columns: rows end to end, vectors across filters (12 or more
       * per group: partial filter blocks, groups, blocks of positions spanning rows). */
      {2, 3, 9, 11, 26, 3, 3, 1, 1, 1, 1, 1},
      {1, 4, 6, 6, 24, 3, 3, 1, 1, 1, 1, 2},
      {3, 2, 7, 5, 12, 2, 2, 0, 0, 1, 1, 1},
      {1, 3, 8, 9, 8, 3, 3, 0, 1, 1, 1, 1},   /* 8 filters: the direct kernel, rows end to end */
      /* One image, narrow rows, many filter blocks: tasks split the filter blocks too. */
      {1, 5, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1},
      {1, 3, 5, 9, 50, 3, 3, 1, 1, 1, 1, 1},  /* a partial last block */
      {1, 6, 4, 4, 96, 3, 3, 1, 1, 1, 1, 2},  /* groups */
      /* Small images under wide windows: taps that read only padding are dropped. */
      {1, 8, 1, 1, 16, 3, 3, 1, 1, 1, 1, 1},   /* 1 x 1, 3 x 3 pad 1: the center tap */
      {2, 4, 2, 2, 20, 3, 3, 1, 1, 2, 2, 1},   /* 2 x 2 -> 1 x 1, stride 2: 2 x 2 taps */
      {1, 3, 2, 3, 5, 5, 5, 2, 2, 1, 1, 1},    /* 5 x 5 pad 2 over 2 x 3 */
      {1, 6, 1, 1, 6, 3, 3, 1, 1, 1, 1, 6},    /* depthwise over 1 x 1 */
      {1, 4, 1, 5, 13, 3, 3, 1, 1, 1, 1, 1},   /* rows cropped, columns kept */
      {1, 2, 2, 2, 4, 3, 3, 2, 2, 1, 1, 2},    /* padding wider than the image, groups */
      /* Deep 3 x 3 (AVX-512: the wide kernel across filters over chunks of channels, sums
       * carried between them, a partial last chunk): 7 x 7 outputs in blocks of 7 positions
       * (a partial block of filters; strided, a batch), 11 x 13 in blocks of 12. */
      {1, 75, 7, 7, 56, 3, 3, 1, 1, 1, 1, 1},
      {2, 64, 14, 14, 64, 3, 3, 1, 1, 2, 2, 1},
      {1, 70, 11, 13, 32, 3, 3, 1, 1, 1, 1, 1},
      /* A batch of small images: blocks of positions across two images and within one. */
      {16, 8, 3, 3, 32, 3, 3, 1, 1, 1, 1, 1},
      /* 1 x 1 over at most 64 positions: the wide kernel across filters (AVX-512), chunks of
       * a deep reduction, a partial block of filters, strided (gathered pixels). */
      {1, 600, 7, 7, 32, 1, 1, 0, 0, 1, 1, 1},
      {2, 40, 8, 8, 56, 1, 1, 0, 0, 1, 1, 1},
      {1, 24, 13, 13, 32, 1, 1, 0, 0, 2, 2, 1},
      /* Deep reductions: the wide direct kernel (12 filters) where the CPU has AVX-512. */
      {1, 300, 9, 20, 29, 1, 1, 0, 0, 1, 1, 1},
      {2, 30, 12, 40, 22, 3, 3, 1, 1, 1, 1, 1},
      /* 1 x 1 on 1 x 1 images (squeeze-excite's): a product by the transposed filters, in
       * blocks of 256 filters and 6 images. */
      {1, 40, 1, 1, 300, 1, 1, 0, 0, 1, 1, 1},
      {8, 33, 1, 1, 20, 1, 1, 0, 0, 1, 1, 1},
      /* Strided 1 x 1: the pointwise convolution over the gathered pixels (with padding:
       * zeros gathered; strides per dimension; groups). */
      {2, 12, 15, 17, 20, 1, 1, 0, 0, 2, 2, 1},
      {1, 8, 9, 11, 16, 1, 1, 1, 2, 2, 3, 1},
      {1, 6, 10, 10, 12, 1, 1, 0, 0, 2, 2, 3},
      /* Pointwise over few channels with an output past 1 MiB: a pass over the positions per
       * block of filters (the last one partial), read in place (72 x 60 planes) and through
       * the copied columns (64 x 64 planes, a multiple of 1 KiB). */
      {1, 16, 72, 60, 64, 1, 1, 0, 0, 1, 1, 1},
      {1, 24, 64, 64, 70, 1, 1, 0, 0, 1, 1, 1},
  };
  /* Pools: kind, n, c, h, w, window, strides, padding. */
  for (int64_t kind = HPVM_RT_TENSOR_POOL_MAX; kind <= HPVM_RT_TENSOR_POOL_MEAN; ++kind) {
    check_pool(kind, 2, 3, 8, 8, 2, 2, 2, 2, 0, 0);
    check_pool(kind, 1, 2, 7, 9, 2, 2, 2, 2, 0, 0); /* odd sizes: the last row and column unread */
    check_pool(kind, 1, 2, 6, 41, 2, 2, 2, 2, 0, 0); /* 20 outputs a row: 8 at a time, a tail */
    check_pool(kind, 1, 2, 7, 9, 3, 3, 2, 2, 1, 1);
    check_pool(kind, 1, 1, 5, 6, 3, 2, 1, 2, 1, 0);
    /* Stride 1 (inner outputs 8 at a time, edges and tails one at a time), padded or not. */
    check_pool(kind, 1, 3, 12, 30, 3, 3, 1, 1, 1, 1);
    check_pool(kind, 2, 2, 9, 21, 3, 5, 1, 1, 0, 2);
    /* Stride 2: even columns 8 outputs at a time while a 16th column lies on the row. */
    check_pool(kind, 1, 2, 11, 45, 3, 3, 2, 2, 1, 1);
    check_pool(kind, 1, 3, 8, 40, 2, 3, 2, 2, 0, 1);
    /* Windows over the whole plane (global pools): 32 values a step, a tail; fewer than 32
     * values take the windowed loops. */
    check_pool(kind, 2, 3, 9, 13, 9, 13, 1, 1, 0, 0);
    check_pool(kind, 1, 2, 32, 32, 32, 32, 1, 1, 0, 0);
    check_pool(kind, 1, 2, 5, 6, 5, 6, 1, 1, 0, 0);
    /* ceil_mode: the last windows over the end of the image (squeezenet's 3 x 3 at stride 2
     * over 109 x 109 and 27 x 27; googlenet's after begin padding 0 and 1; 2 x 2 at stride 2
     * over odd sizes, whose half-windows the 2 x 2 kernel cannot take; wide rows in 16-float
     * vectors; a mean, whose divisor is the whole window). */
    check_pool_ends(kind, 1, 3, 109, 109, 3, 3, 2, 2, 0, 0, 1, 1);
    check_pool_ends(kind, 1, 2, 27, 27, 3, 3, 2, 2, 0, 0, 1, 1);
    check_pool_ends(kind, 1, 2, 14, 14, 3, 3, 2, 2, 0, 0, 1, 1);
    check_pool_ends(kind, 1, 2, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1);
    check_pool_ends(kind, 2, 3, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1);
    check_pool_ends(kind, 1, 2, 9, 45, 3, 3, 2, 2, 1, 1, 2, 2);
    check_pool_ends(kind, 1, 2, 10, 37, 3, 2, 2, 2, 1, 0, 0, 1);
    check_pool_ends(kind, 1, 1, 5, 5, 3, 3, 3, 3, 0, 0, 2, 2);
  }
  for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); ++i) {
    int64_t *v = convs[i];
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      activation_for_case = with_bias ? (int64_t)(i % 3) : HPVM_RT_TENSOR_IDENTITY;
      check_conv(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
                 with_bias);
    }
  }
}

/* Blocked operands (hpvm_rt.h's NCHW16c: [n][c / 16][h][w][16]) from and to NCHW: plane
 * `index` (image * c + channel) of hw positions lies at block index / 16, lane index % 16. */
static void blocked_from_nchw(const float *in, float *out, int64_t planes, int64_t hw) {
  for (int64_t i = 0; i < planes; ++i)
    for (int64_t p = 0; p < hw; ++p)
      out[(i & ~15) * hw + p * 16 + (i & 15)] = in[i * hw + p];
}

static void nchw_from_blocked(const float *in, float *out, int64_t planes, int64_t hw) {
  for (int64_t i = 0; i < planes; ++i)
    for (int64_t p = 0; p < hw; ++p)
      out[i * hw + p] = in[(i & ~15) * hw + p * 16 + (i & 15)];
}

/* hpvm_tensor_conv_across_blocked in the four layouts against
 * hpvm_rt_tensor_conv2d_constant_f32 on the NCHW tensors, bit for bit (the same sums in the same
 * order, then the bias and the activation), or refused (0, the output untouched) where it does
 * not handle the case: without the AVX-512 kernels, a blocked operand whose channels per group
 * are not a multiple of 16, or an NCHW output where the fallback is faster.
 * across_without_memory: the blocked calls run as without memory for packing (their plain
 * loops, the kernels' fused multiply-adds; the NCHW reference still from the kernels: the
 * direct convolutions' plain loops round each product). */
static int across_without_memory;
static void check_across_blocked(int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                                 int64_t kh, int64_t kw, int64_t pad_h, int64_t pad_w,
                                 int64_t stride_h, int64_t stride_w, int64_t groups,
                                 int with_bias, int64_t activation) {
  int64_t oh = (h + 2 * pad_h - kh) / stride_h + 1, ow = (w + 2 * pad_w - kw) / stride_w + 1;
  int64_t cg = c / groups, fg = f / groups, in_count = n * c * h * w, count = n * f * oh * ow;
  float *input = test_random_array(in_count), *blocked_input = test_random_array(in_count);
  float *filter = keep(test_random_array(f * cg * kh * kw));
  float *bias = with_bias ? keep(test_random_array(f)) : NULL;
  float *want = test_random_array(count), *got = test_random_array(count);
  float *out = test_random_array(count), *untouched = copy_of(out, count);
  if (c % 16 == 0)
    blocked_from_nchw(input, blocked_input, n * c, h * w);
  hpvm_rt_tensor_conv2d_constant_f32(input, filter, bias, want, n, c, h, w, f, kh, kw, oh, ow,
                                     pad_h, pad_w, stride_h, stride_w, groups, activation, 0.5);
  int avx512 = hpvm_tensor_kernels()->filters_wide != NULL;
  for (int64_t layouts = 0; layouts < 4; ++layouts) {
    int in_blocked = layouts & HPVM_RT_TENSOR_INPUT_BLOCKED;
    int out_blocked = layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED;
    int handled = avx512 && !(in_blocked && cg % 16) && !(out_blocked && fg % 16) &&
                  hpvm_tensor_conv_across_blocked_pays(kh, kw, oh, ow, stride_h, stride_w, fg,
                                                       layouts);
    /* Once with packed weights kept for the filter's address, once with a packing per call. */
    hpvm_tensor_conv_without_memory(across_without_memory);
    int done = hpvm_tensor_conv_across_blocked(
        in_blocked ? blocked_input : input, filter, bias, out, n, c, h, w, f, kh, kw, oh, ow,
        pad_h, pad_w, stride_h, stride_w, groups, activation, 0.5f, (int)(layouts & 1),
        layouts);
    hpvm_tensor_conv_without_memory(0);
    if (!handled || !done) {
      if (done != handled)
        fprintf(stderr, "blocked across %lldx%lldx%lldx%lld * %lldx%lldx%lldx%lld layouts %lld: "
                "returned %d\n", (long long)n, (long long)c, (long long)h, (long long)w,
                (long long)f, (long long)cg, (long long)kh, (long long)kw, (long long)layouts,
                done);
      CHECK_EQ_INT(done, handled);
      CHECK(memcmp(out, untouched, sizeof(float) * (size_t)count) == 0);
      continue;
    }
    if (out_blocked)
      nchw_from_blocked(out, got, n * f, oh * ow);
    else
      memcpy(got, out, sizeof(float) * (size_t)count);
    for (int64_t i = 0; i < count; ++i)
      if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
        fprintf(stderr, "blocked across %lldx%lldx%lldx%lld * %lldx%lldx%lldx%lld pad %lld,%lld "
                "stride %lld,%lld groups %lld bias %d activation %lld layouts %lld: element "
                "%lld is %.9g, expected %.9g\n", (long long)n, (long long)c, (long long)h,
                (long long)w, (long long)f, (long long)cg, (long long)kh, (long long)kw,
                (long long)pad_h, (long long)pad_w, (long long)stride_h, (long long)stride_w,
                (long long)groups, with_bias, (long long)activation, (long long)layouts,
                (long long)i, (double)got[i], (double)want[i]);
        exit(1);
      }
    memcpy(out, untouched, sizeof(float) * (size_t)count);
  }
  free(input), free(blocked_input), free(want), free(got), free(out), free(untouched);
}

static void run_across_blocked(void) {
  /* n, c, h, w, f, kh, kw, pad_h, pad_w, stride_h, stride_w, groups */
  int64_t convs[][12] = {
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1},    /* resnet's 3 x 3 (32 x 12 blocks) */
      {3, 32, 9, 11, 48, 3, 3, 1, 1, 1, 1, 1},     /* batch 3, odd sizes, a half block */
      {1, 64, 15, 15, 128, 3, 3, 1, 1, 2, 2, 1},   /* stride 2, odd size */
      {2, 16, 13, 17, 32, 3, 3, 0, 0, 2, 2, 1},    /* stride 2 without padding */
      {1, 256, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1},     /* deep: chunks of channels, blocks of 7 */
      {1, 256, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1},   /* deep at 14 x 14 */
      {3, 272, 7, 7, 80, 3, 3, 1, 1, 1, 1, 1},     /* deep, batch 3, 17 blocks of channels */
      {1, 640, 7, 7, 32, 1, 1, 0, 0, 1, 1, 1},     /* 1 x 1 deep enough for chunks */
      {1, 32, 9, 9, 64, 5, 5, 2, 2, 1, 1, 1},      /* 5 x 5: chunks of 2 channels */
      {2, 48, 11, 11, 32, 5, 5, 3, 3, 2, 2, 1},    /* 5 x 5, pad 3, stride 2 */
      {1, 16, 13, 13, 32, 7, 7, 3, 3, 1, 1, 1},    /* 7 x 7: chunks of one channel */
      {2, 16, 23, 23, 64, 7, 7, 3, 3, 2, 2, 1},    /* 7 x 7 stride 2, pad 3 */
      {1, 3, 29, 29, 64, 7, 7, 3, 3, 2, 2, 1},     /* a stem: NCHW input only */
      {1, 16, 21, 21, 96, 1, 1, 0, 0, 1, 1, 1},    /* pointwise */
      {3, 144, 9, 9, 32, 1, 1, 0, 0, 1, 1, 1},     /* pointwise, batch 3 */
      {1, 80, 10, 10, 48, 1, 1, 1, 1, 1, 1, 1},    /* pointwise, padded */
      {2, 64, 12, 12, 64, 1, 1, 0, 0, 2, 2, 1},    /* pointwise, stride 2 */
      {1, 64, 9, 9, 64, 3, 3, 1, 1, 1, 1, 4},      /* groups of 16 (blocks of 16 filters) */
      {2, 64, 10, 10, 128, 3, 3, 1, 1, 2, 2, 2},   /* groups of 32 -> 64 */
      {1, 96, 7, 7, 96, 3, 3, 2, 2, 1, 1, 2},      /* groups of 48, pad 2 */
      {1, 32, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1},      /* 24 filters: NCHW output only */
      {1, 40, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1},      /* 40 channels: NCHW input only */
      {1, 48, 9, 9, 48, 3, 3, 1, 1, 1, 1, 6},      /* groups of 8: NCHW only */
      {3, 16, 5, 5, 16, 3, 3, 1, 1, 1, 1, 1},      /* images of 25 positions */
      {40, 16, 3, 3, 32, 3, 3, 1, 1, 1, 1, 1},     /* blocks of positions across images */
      {1, 32, 1, 1, 32, 1, 1, 0, 0, 1, 1, 1},      /* one pixel */
      {1, 16, 6, 7, 32, 2, 4, 1, 2, 3, 2, 1},      /* uneven window, padding, strides */
  };
  static const int64_t activations[] = {HPVM_RT_TENSOR_IDENTITY,     HPVM_RT_TENSOR_RELU,
                                        HPVM_RT_TENSOR_CLIPPED_RELU, HPVM_RT_TENSOR_SIGMOID,
                                        HPVM_RT_TENSOR_SILU,         HPVM_RT_TENSOR_HARDSWISH};
  size_t kinds = sizeof(activations) / sizeof(activations[0]);
  for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); ++i) {
    int64_t *v = convs[i];
    for (int with_bias = 0; with_bias < 2; ++with_bias)
      check_across_blocked(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
                           v[11], with_bias, activations[(2 * i + (size_t)with_bias) % kinds]);
  }
  /* Every activation on one case of each window. */
  for (size_t a = 0; a < kinds; ++a) {
    check_across_blocked(1, 32, 7, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, activations[a]);
    check_across_blocked(2, 16, 9, 9, 48, 1, 1, 0, 0, 1, 1, 1, 1, activations[a]);
  }
}

/* A product of one or two rows (unpacked: the skinny kernel) gives the bits of the same rows
 * in a product of many (packed: the micro-kernel), with a bias and an activation. */
static void check_skinny_bits(void) {
  enum { M = 9, N = 300, K = 600 };
  float *a = test_random_array(M * K), *b = test_random_array(K * N);
  float *bias = test_random_array(N);
  float *all = malloc(sizeof(float) * M * N), *few = malloc(sizeof(float) * 2 * N);
  hpvm_rt_tensor_matmul_f32(a, b, bias, all, 1, M, N, K, HPVM_RT_TENSOR_RELU, 0);
  for (int64_t rows = 1; rows <= 2; ++rows) {
    hpvm_rt_tensor_matmul_f32(a + 3 * K, b, bias, few, 1, rows, N, K, HPVM_RT_TENSOR_RELU, 0);
    CHECK(memcmp(few, all + 3 * N, sizeof(float) * (size_t)(rows * N)) == 0);
  }
  free(a), free(b), free(bias), free(all), free(few);
}

/* NaN propagates through max and min pools (as arith.maximumf / minimumf), in the vector
 * path of 2 x 2 windows (8 outputs at a time) as in its tail: a NaN in any of the four taps
 * of a window, first or last in the order of the reduction. */
static void check_pool_nan(void) {
  enum { W = 36, OW = W / 2 };
  float in[2 * W], out[OW];
  for (int kind = HPVM_RT_TENSOR_POOL_MAX; kind <= HPVM_RT_TENSOR_POOL_MIN; ++kind) {
    for (int i = 0; i < 2 * W; ++i)
      in[i] = (float)(i % 7) - 3.0f;
    int taps[] = {0, 3, 2 * 5 + 1, W + 2 * 9, W + 2 * 17 + 1};
    for (size_t t = 0; t < sizeof taps / sizeof taps[0]; ++t)
      in[taps[t]] = __builtin_nanf("");
    hpvm_rt_tensor_pool_f32(in, out, kind, 1, 1, 2, W, 2, 2, 2, 2, 0, 0, 1, OW);
    for (int x = 0; x < OW; ++x) {
      int nan = x == 0 || x == 1 || x == 5 || x == 9 || x == 17;
      CHECK((out[x] != out[x]) == nan);
    }
  }
}

/* hpvm_tensor_run_sized: a grid of less work than HPVM_TENSOR_SERIAL_WORK runs whole on the
 * calling thread (one range, every instance once); more goes to the pool (every instance
 * once); an empty grid runs nothing. */
typedef struct sized_t {
  pthread_t caller;
  _Atomic int calls, elsewhere;
  _Atomic uint8_t hits[64 * 8];
} sized_t;

static void sized_body(void *context, const hpvm_rt_instance_range_t *range) {
  sized_t *s = context;
  atomic_fetch_add(&s->calls, 1);
  if (!pthread_equal(pthread_self(), s->caller))
    atomic_fetch_add(&s->elsewhere, 1);
  for (int64_t y = range->begin[1]; y < range->end[1]; ++y)
    for (int64_t x = range->begin[0]; x < range->end[0]; ++x)
      atomic_fetch_add(&s->hits[y * 64 + x], 1);
}

static void check_run_sized(void) {
  int64_t extents[2] = {64, 8}, empty[2] = {0, 8};
  for (int large = 0; large <= 1; ++large) {
    sized_t *s = calloc(1, sizeof(*s));
    s->caller = pthread_self();
    hpvm_tensor_run_sized(2, extents, sized_body, s, large ? 1e9 : HPVM_TENSOR_SERIAL_WORK - 1);
    for (int i = 0; i < 64 * 8; ++i)
      CHECK_EQ_INT(atomic_load(&s->hits[i]), 1);
    if (!large)
      CHECK(atomic_load(&s->calls) == 1 && atomic_load(&s->elsewhere) == 0);
    atomic_store(&s->calls, 0);
    hpvm_tensor_run_sized(2, empty, sized_body, s, 0);
    CHECK_EQ_INT(atomic_load(&s->calls), 0);
    free(s);
  }
}

int main(void) {
  check_run_sized();
  run_all(); /* on the runtime's pool, with the CPU's kernels */
  run_across_blocked();
  check_pool_nan();
  check_skinny_bits();
  hpvm_tensor_use_generic_kernels(1);
  run_all(); /* with the baseline ones */
  run_across_blocked(); /* refused: no AVX-512 kernels */
  check_pool_nan();
  check_skinny_bits();
  hpvm_tensor_use_generic_kernels(0);
  across_without_memory = 1;
  run_across_blocked(); /* its plain loops, as without memory for packing */
  across_without_memory = 0;
  hpvm_tensor_conv_without_memory(1);
  run_all(); /* the convolutions' plain loops, as without memory for packing */
  hpvm_tensor_conv_without_memory(0);
  hpvm_rt_shutdown();
  /* Inconsistent arguments: nothing is written, a warning is printed, nothing crashes. */
  float in[16] = {0}, filter[9] = {0}, out[4] = {7, 7, 7, 7};
  hpvm_rt_tensor_conv2d_f32(in, filter, NULL, out, 1, 1, 4, 4, 1, 3, 3, 3, 3, 0, 0, 1, 1, 1, 0,
                            0);
  hpvm_rt_tensor_conv2d_f32(in, filter, NULL, out, 1, 1, 4, 4, 1, 3, 3, 2, 2, 0, 0, 0, 1, 1, 0,
                            0);
  hpvm_rt_tensor_conv2d_f32(in, filter, NULL, out, 1, 3, 4, 4, 1, 3, 3, 2, 2, 0, 0, 1, 1, 2, 0,
                            0);
  hpvm_rt_tensor_conv2d_f32(in, filter, NULL, out, 1, 1, 4, 4, 1, 3, 3, 2, 2, 0, 0, 1, 1, 1, 7,
                            0);
  hpvm_rt_tensor_matmul_f32(in, filter, NULL, out, 1, -2, 2, 2, 0, 0);
  hpvm_rt_tensor_matmul_f32(NULL, filter, NULL, out, 1, 2, 2, 2, 0, 0);
  hpvm_rt_tensor_matmul_f32(in, filter, NULL, out, 1, 2, 2, 2, -1, 0);
  hpvm_rt_tensor_pool_f32(in, out, 3, 1, 1, 4, 4, 2, 2, 2, 2, 0, 0, 2, 2);
  hpvm_rt_tensor_pool_f32(in, out, 0, 1, 1, 4, 4, 2, 2, 2, 2, 0, 0, 3, 2);
  hpvm_rt_tensor_pool_f32(in, out, 0, 1, 1, 4, 4, 2, 2, 0, 2, 0, 0, 2, 2);
  /* An image of no rows padded by one before them: a row of windows over padding only
   * (-inf for max), as the dialect's shapes give. */
  float none[2] = {7.0f, 7.0f};
  hpvm_rt_tensor_pool_f32(in, none, HPVM_RT_TENSOR_POOL_MAX, 1, 1, 0, 3, 2, 2, 1, 1, 1, 0, 1, 2);
  CHECK(none[0] == -INFINITY && none[1] == -INFINITY);
  /* 3 x 3 windows at stride 2 over 4 rows or columns are 1 or 2 (end padding 0 to 2), never
   * 3 or 0. */
  hpvm_rt_tensor_pool_f32(in, out, 0, 1, 1, 4, 4, 3, 3, 2, 2, 0, 0, 3, 1);
  hpvm_rt_tensor_pool_f32(in, out, 0, 1, 1, 4, 4, 3, 3, 2, 2, 0, 0, 1, 0);
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == 7.0f);
  for (size_t i = 0; i < kept_count; ++i)
    free(kept[i]);
  printf("tensor kernels: all checks passed\n");
  return 0;
}
