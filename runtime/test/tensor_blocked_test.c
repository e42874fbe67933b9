/* tensor_blocked_test.c - the blocked layout (NCHW16c: [n][c / 16][h][w][16]) against NCHW:
 * the reorders (round trips, and against plain loops), pools (max, min, mean; 2 x 2 and 3 x 3
 * windows at strides 1 and 2, padding, end padding of ceil_mode, whole-plane windows; NaNs and
 * ties of +-0 in max and min) bit for bit against hpvm_rt_tensor_pool_f32, convolutions bit for
 * bit against hpvm_rt_tensor_conv2d_constant_f32 (depthwise 3 x 3 and 5 x 5 at strides 1 and 2
 * natively, with bias and each activation; the others through the fallback, in every
 * combination of layouts; without scratch memory the plain loops), and inconsistent arguments
 * (channels not whole blocks, NULL operands, unknown layouts): a warning, nothing written, no
 * crash. Every case runs with the CPU's kernels and again with the baseline ones; CTest runs
 * the test again under HPVM_TENSOR_ISA=avx2 and generic. */
#include "tensor/kernels.h"
#include "test_util.h"

#include <math.h>

/* The filters and biases of constant-filter calls: alive until the end (the runtime keeps
 * their packed forms keyed by address). */
static float *kept[8192];
static size_t kept_count;

static float *keep(float *p) {
  CHECK(kept_count < sizeof(kept) / sizeof(kept[0]));
  kept[kept_count++] = p;
  return p;
}

static int64_t cases;

/* Random values in [-1, 1]: about one in eight an exact zero (one in three of those -0), and
 * with `nans` one in 32 a NaN of one of two payloads. */
static float *random_tensor(int64_t count, int nans) {
  float *data = test_random_array(count);
  for (int64_t i = 0; i < count; ++i) {
    uint32_t r = (uint32_t)(test_random_value() * 1000.0f + 1000.0f);
    if (r % 8 == 0)
      data[i] = r % 3 == 0 ? -0.0f : 0.0f;
    else if (nans && r % 32 == 1) {
      uint32_t bits = r % 2 ? 0x7fc00001u : 0xffc12345u;
      memcpy(&data[i], &bits, sizeof(bits));
    }
  }
  return data;
}

static void plain_to_blocked(const float *in, float *out, int64_t n, int64_t c, int64_t hw) {
  for (int64_t image = 0; image < n; ++image)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[((image * (c / 16) + ch / 16) * hw + p) * 16 + ch % 16] =
            in[(image * c + ch) * hw + p];
}

static void plain_from_blocked(const float *in, float *out, int64_t n, int64_t c, int64_t hw) {
  for (int64_t image = 0; image < n; ++image)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[(image * c + ch) * hw + p] =
            in[((image * (c / 16) + ch / 16) * hw + p) * 16 + ch % 16];
}

static void check_same(const float *got, const float *want, int64_t count, const char *what) {
  ++cases;
  if (count == 0 || memcmp(got, want, sizeof(float) * (size_t)count) == 0)
    return;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t g, e;
    memcpy(&g, &got[i], sizeof(g));
    memcpy(&e, &want[i], sizeof(e));
    if (g != e) {
      fprintf(stderr, "%s: element %lld is %.9g (0x%08x), expected %.9g (0x%08x)\n", what,
              (long long)i, (double)got[i], g, (double)want[i], e);
      exit(1);
    }
  }
}

static void check_reorder(int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t count = n * c * h * w;
  float *x = random_tensor(count, 1), *blocked = test_random_array(count);
  float *want = test_random_array(count), *back = test_random_array(count);
  hpvm_rt_tensor_to_blocked_f32(x, blocked, n, c, h, w);
  plain_to_blocked(x, want, n, c, h * w);
  char what[96];
  snprintf(what, sizeof(what), "to_blocked %lldx%lldx%lldx%lld", (long long)n, (long long)c,
           (long long)h, (long long)w);
  check_same(blocked, want, count, what);
  hpvm_rt_tensor_from_blocked_f32(blocked, back, n, c, h, w);
  snprintf(what, sizeof(what), "from_blocked %lldx%lldx%lldx%lld", (long long)n, (long long)c,
           (long long)h, (long long)w);
  check_same(back, x, count, what);
  free(x), free(blocked), free(want), free(back);
}

/* A pool of an image padded by `pad` before and `end` (< window) after each axis. */
static void check_pool(int64_t kind, int64_t n, int64_t c, int64_t h, int64_t w, int64_t window,
                       int64_t stride, int64_t pad, int64_t end) {
  if (h + pad + end < window || w + pad + end < window)
    return;
  int64_t oh = (h + pad + end - window) / stride + 1, ow = (w + pad + end - window) / stride + 1;
  float *x = random_tensor(n * c * h * w, kind != HPVM_RT_TENSOR_POOL_MEAN);
  float *xb = test_random_array(n * c * h * w);
  float *want = test_random_array(n * c * oh * ow), *out = test_random_array(n * c * oh * ow);
  float *got = test_random_array(n * c * oh * ow);
  plain_to_blocked(x, xb, n, c, h * w);
  hpvm_rt_tensor_pool_f32(x, want, kind, n, c, h, w, window, window, stride, stride, pad, pad,
                          oh, ow);
  hpvm_rt_tensor_pool_blocked_f32(xb, out, kind, n, c, h, w, window, window, stride, stride,
                                  pad, pad, oh, ow);
  plain_from_blocked(out, got, n, c, oh * ow);
  char what[160];
  snprintf(what, sizeof(what), "pool kind %lld %lldx%lldx%lldx%lld window %lld stride %lld pad "
           "%lld+%lld",
           (long long)kind, (long long)n, (long long)c, (long long)h, (long long)w,
           (long long)window, (long long)stride, (long long)pad, (long long)end);
  check_same(got, want, n * c * oh * ow, what);
  free(x), free(xb), free(want), free(out), free(got);
}

/* A whole-plane window (global pools: the order of 32 running results from 32 positions). */
static void check_global_pool(int64_t kind, int64_t n, int64_t c, int64_t h, int64_t w) {
  float *x = random_tensor(n * c * h * w, kind != HPVM_RT_TENSOR_POOL_MEAN);
  float *xb = test_random_array(n * c * h * w);
  float *want = test_random_array(n * c), *out = test_random_array(n * c);
  plain_to_blocked(x, xb, n, c, h * w);
  hpvm_rt_tensor_pool_f32(x, want, kind, n, c, h, w, h, w, 1, 1, 0, 0, 1, 1);
  hpvm_rt_tensor_pool_blocked_f32(xb, out, kind, n, c, h, w, h, w, 1, 1, 0, 0, 1, 1);
  char what[96];
  snprintf(what, sizeof(what), "global pool kind %lld %lldx%lldx%lldx%lld", (long long)kind,
           (long long)n, (long long)c, (long long)h, (long long)w);
  check_same(out, want, n * c, what); /* 1 x 1 outputs: blocked is NCHW */
  free(x), free(xb), free(want), free(out);
}

typedef struct conv_case_t {
  int64_t n, c, h, w, f, k, stride, pad, groups, activation, layouts;
  int bias;
} conv_case_t;

/* The NCHW reference: hpvm_rt_tensor_conv2d_constant_f32, or hpvm_rt_tensor_conv2d_f32 for
 * a filter that is not a constant, with memory (its own loops without it sum unfused on
 * x86-64). */
static void reference_conv(conv_case_t t, const float *x, const float *filter, const float *bias,
                           float *want, int64_t oh, int64_t ow) {
  int refused = hpvm_tensor_conv_memory_refused();
  hpvm_tensor_conv_without_memory(0);
  if (t.layouts & HPVM_RT_TENSOR_FILTER_VARIABLE)
    hpvm_rt_tensor_conv2d_f32(x, filter, bias, want, t.n, t.c, t.h, t.w, t.f, t.k, t.k, oh, ow,
                              t.pad, t.pad, t.stride, t.stride, t.groups, t.activation, 0.5);
  else
    hpvm_rt_tensor_conv2d_constant_f32(x, filter, bias, want, t.n, t.c, t.h, t.w, t.f, t.k, t.k,
                                       oh, ow, t.pad, t.pad, t.stride, t.stride, t.groups,
                                       t.activation, 0.5);
  hpvm_tensor_conv_without_memory(refused);
}

/* The blocked call against the NCHW call on the NCHW tensors. */
static void check_conv(conv_case_t t) {
  int64_t oh = (t.h + 2 * t.pad - t.k) / t.stride + 1, ow = (t.w + 2 * t.pad - t.k) / t.stride + 1;
  if (t.h + 2 * t.pad < t.k || t.w + 2 * t.pad < t.k)
    return;
  int64_t in_count = t.n * t.c * t.h * t.w, out_count = t.n * t.f * oh * ow;
  int64_t filter_count = t.f * (t.c / t.groups) * t.k * t.k;
  float *x = random_tensor(in_count, 0), *xb = test_random_array(in_count);
  float *filter = keep(random_tensor(filter_count, 0));
  float *bias = t.bias ? keep(random_tensor(t.f, 0)) : NULL;
  float *want = test_random_array(out_count), *out = test_random_array(out_count);
  float *got = test_random_array(out_count);
  reference_conv(t, x, filter, bias, want, oh, ow);
  int in_blocked = t.layouts & HPVM_RT_TENSOR_INPUT_BLOCKED;
  int out_blocked = t.layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED;
  if (in_blocked)
    plain_to_blocked(x, xb, t.n, t.c, t.h * t.w);
  char what[200];
  snprintf(what, sizeof(what), "conv %lldx%lldx%lldx%lld * %lld %lldx%lld stride %lld pad %lld "
           "groups %lld activation %lld layouts %lld%s%s",
           (long long)t.n, (long long)t.c, (long long)t.h, (long long)t.w, (long long)t.f,
           (long long)t.k, (long long)t.k, (long long)t.stride, (long long)t.pad,
           (long long)t.groups, (long long)t.activation, (long long)t.layouts,
           t.bias ? " bias" : "", hpvm_tensor_conv_memory_refused() ? " no memory" : "");
  /* Twice: the weights packed on the first call, reused on the second; a filter that is not
   * a constant changed in place between the calls (the second call reads its new values). */
  for (int round = 0; round < 2; ++round) {
    if (round == 1 && (t.layouts & HPVM_RT_TENSOR_FILTER_VARIABLE)) {
      float *changed = random_tensor(filter_count, 0);
      memcpy(filter, changed, sizeof(float) * (size_t)filter_count);
      free(changed);
      if (bias)
        bias[0] += 1.0f;
      reference_conv(t, x, filter, bias, want, oh, ow);
    }
    hpvm_rt_tensor_conv2d_blocked_f32(in_blocked ? xb : x, filter, bias, out, t.n, t.c, t.h,
                                      t.w, t.f, t.k, t.k, oh, ow, t.pad, t.pad, t.stride,
                                      t.stride, t.groups, t.activation, 0.5, t.layouts);
    if (out_blocked)
      plain_from_blocked(out, got, t.n, t.f, oh * ow);
    check_same(out_blocked ? got : out, want, out_count, what);
  }
  free(x), free(xb), free(want), free(out), free(got);
}

static void check_reorders(void) {
  int64_t sizes[][2] = {{1, 1}, {1, 3}, {4, 4}, {3, 5}, {7, 7}, {9, 13}, {16, 1}, {17, 17},
                        {56, 57}};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s)
    for (int64_t c = 16; c <= 48; c += 16)
      check_reorder(s % 2 + 1, c, sizes[s][0], sizes[s][1]);
  check_reorder(1, 64, 112, 113); /* several chunks of positions a block */
  check_reorder(0, 16, 5, 5);
}

static void check_pools(void) {
  int64_t sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {7, 7}, {8, 9}, {14, 14}, {15, 13}, {28, 27},
                        {57, 56}};
  for (int64_t kind = 0; kind <= 2; ++kind)
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s)
      for (int64_t window = 2; window <= 3; ++window)
        for (int64_t stride = 1; stride <= 2; ++stride)
          for (int64_t pad = 0; pad < window && pad <= 1; ++pad)
            for (int64_t end = 0; end < window; ++end) {
              int64_t c = 16 * (int64_t)(1 + (s + (size_t)end) % 3);
              check_pool(kind, (int64_t)(s % 2) + 1, c, sizes[s][0], sizes[s][1], window,
                         stride, pad, end);
            }
  for (int64_t kind = 0; kind <= 2; ++kind) {
    check_global_pool(kind, 2, 32, 7, 7);  /* 49 positions: the WHOLE order */
    check_global_pool(kind, 1, 16, 4, 8);  /* 32: WHOLE, no tail */
    check_global_pool(kind, 1, 48, 5, 5);  /* 25: the window order */
    check_global_pool(kind, 1, 16, 14, 14);
    check_pool(kind, 1, 16, 9, 9, 3, 3, 0, 0); /* stride 3 */
    check_pool(kind, 1, 16, 6, 6, 2, 2, 3, 0); /* windows of padding only */
  }
}

static void check_depthwise(void) {
  int64_t sizes[] = {1, 2, 3, 5, 7, 9, 14, 17, 28, 31, 56};
  for (int64_t k = 3; k <= 5; k += 2)
    for (int64_t stride = 1; stride <= 2; ++stride)
      for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s)
        for (int64_t activation = 0; activation <= 5; ++activation) {
          int64_t c = 16 * (int64_t)(1 + (s + (size_t)activation) % 3);
          int64_t pad = (s + (size_t)activation) % 2 ? k / 2 : (k == 3 ? 1 : 2);
          if ((s + (size_t)activation) % 5 == 4)
            pad = 0;
          int64_t h = sizes[s], w = sizes[(s + 3) % (sizeof(sizes) / sizeof(sizes[0]))];
          check_conv((conv_case_t){1 + (int64_t)(s % 2), c, h, w, c, k, stride, pad, c,
                                   activation, 3, (activation + (int64_t)s) % 4 != 3});
        }
  /* Other windows and strides: the loop without constants. */
  check_conv((conv_case_t){1, 32, 15, 16, 32, 1, 1, 0, 32, HPVM_RT_TENSOR_RELU, 3, 1});
  check_conv((conv_case_t){1, 32, 15, 16, 32, 1, 2, 0, 32, HPVM_RT_TENSOR_SILU, 3, 1});
  check_conv((conv_case_t){2, 16, 19, 23, 16, 7, 1, 3, 16, HPVM_RT_TENSOR_CLIPPED_RELU, 3, 1});
  check_conv((conv_case_t){1, 16, 20, 21, 16, 3, 3, 1, 16, HPVM_RT_TENSOR_HARDSWISH, 3, 0});
  check_conv((conv_case_t){1, 16, 11, 12, 16, 4, 2, 1, 16, HPVM_RT_TENSOR_SIGMOID, 3, 1});
  check_conv((conv_case_t){1, 16, 3, 3, 16, 3, 1, 3, 16, HPVM_RT_TENSOR_RELU, 3, 1});
  /* Filters that are not constants, packed on each call. */
  for (int64_t layouts = 1; layouts <= 3; ++layouts)
    check_conv((conv_case_t){2, 32, 9, 10, 32, 3, 1 + layouts % 2, 1, 32, HPVM_RT_TENSOR_RELU,
                             layouts | HPVM_RT_TENSOR_FILTER_VARIABLE, 1});
  /* A depthwise convolution with one side NCHW: the fallback. */
  for (int64_t layouts = 1; layouts <= 2; ++layouts)
    check_conv((conv_case_t){1, 32, 14, 14, 32, 3, 2, 1, 32, HPVM_RT_TENSOR_SILU, layouts, 1});
}

static void check_fallback(void) {
  /* Layouts 0 is the NCHW call itself (without memory, its own plain loops). */
  for (int64_t layouts = hpvm_tensor_conv_memory_refused() ? 1 : 0; layouts <= 3; ++layouts)
    for (int64_t k = 1; k <= 3; k += 2)
      for (int64_t stride = 1; stride <= 2; ++stride) {
        int64_t activation = (layouts + k + stride) % 6;
        check_conv((conv_case_t){2, 32, 13, 14, 48, k, stride, k / 2, 1, activation, layouts,
                                 1});
        check_conv((conv_case_t){1, 16, 7, 7, 32, k, stride, k / 2, 1, activation, layouts, 0});
        check_conv((conv_case_t){1, 64, 9, 8, 32, k, stride, k / 2, 2, activation, layouts, 1});
      }
  /* Filters that are not constants: across filters, 1 x 1 images, and the fallback (layouts
   * 0 the NCHW call, as above). */
  for (int64_t layouts = hpvm_tensor_conv_memory_refused() ? 1 : 0; layouts <= 3; ++layouts)
    for (int64_t k = 1; k <= 3; k += 2) {
      int64_t variable = layouts | HPVM_RT_TENSOR_FILTER_VARIABLE;
      check_conv((conv_case_t){2, 32, 13, 14, 48, k, 1, k / 2, 1, HPVM_RT_TENSOR_RELU, variable,
                               1});
      check_conv((conv_case_t){1, 64, 9, 8, 32, k, 2, k / 2, 2, HPVM_RT_TENSOR_HARDSWISH, variable,
                               1});
      check_conv((conv_case_t){2, 64, 1, 1, 32, 1, 1, 0, 1, HPVM_RT_TENSOR_SIGMOID, variable, 1});
    }
  check_conv((conv_case_t){2, 3, 17, 17, 32, 3, 1, 1, 1, HPVM_RT_TENSOR_RELU,
                           2 | HPVM_RT_TENSOR_FILTER_VARIABLE, 1});
  /* 5 x 5 windows (a kernel of their own across filters). */
  for (int64_t layouts = 1; layouts <= 3; ++layouts) {
    check_conv((conv_case_t){2, 32, 13, 14, 48, 5, 1, 2, 1, HPVM_RT_TENSOR_RELU, layouts, 1});
    check_conv((conv_case_t){1, 64, 9, 8, 32, 5, 2, 1, 1, HPVM_RT_TENSOR_IDENTITY,
                             layouts | HPVM_RT_TENSOR_FILTER_VARIABLE, 0});
  }
  /* The first layer: 3 NCHW channels into a blocked output. */
  check_conv((conv_case_t){1, 3, 33, 32, 16, 3, 2, 1, 1, HPVM_RT_TENSOR_RELU, 2, 1});
  check_conv((conv_case_t){2, 3, 17, 17, 32, 3, 1, 1, 1, HPVM_RT_TENSOR_SILU, 2, 1});
  /* 1 x 1 images (squeeze-excite's), and taps that only read padding (dropped). */
  check_conv((conv_case_t){2, 64, 1, 1, 16, 1, 1, 0, 1, HPVM_RT_TENSOR_SIGMOID, 3, 1});
  check_conv((conv_case_t){1, 32, 1, 1, 32, 3, 1, 1, 1, HPVM_RT_TENSOR_RELU, 3, 1});
}

/* Calls that must compute nothing and warn (in a child: their warnings on its stderr). */
static void bad_calls(void *unused) {
  (void)unused;
  float *x = test_random_array(2 * 48 * 64), *y = test_random_array(2 * 48 * 64);
  float *before = malloc(sizeof(float) * 2 * 48 * 64);
  memcpy(before, y, sizeof(float) * 2 * 48 * 64);
  float *filter = keep(test_random_array(48 * 48 * 9));
  hpvm_rt_tensor_to_blocked_f32(x, y, 2, 24, 8, 8);
  hpvm_rt_tensor_from_blocked_f32(x, y, 2, 24, 8, 8);
  hpvm_rt_tensor_to_blocked_f32(NULL, y, 2, 16, 8, 8);
  hpvm_rt_tensor_from_blocked_f32(x, NULL, 2, 16, 8, 8);
  hpvm_rt_tensor_to_blocked_f32(x, y, -1, 16, 8, 8);
  hpvm_rt_tensor_pool_blocked_f32(x, y, HPVM_RT_TENSOR_POOL_MAX, 2, 24, 8, 8, 2, 2, 2, 2, 0, 0,
                                  4, 4);
  hpvm_rt_tensor_pool_blocked_f32(NULL, y, HPVM_RT_TENSOR_POOL_MAX, 2, 16, 8, 8, 2, 2, 2, 2, 0,
                                  0, 4, 4);
  hpvm_rt_tensor_pool_blocked_f32(x, y, HPVM_RT_TENSOR_POOL_MAX, 2, 16, 8, 8, 2, 2, 2, 2, 0, 0,
                                  5, 4);
  hpvm_rt_tensor_conv2d_blocked_f32(x, filter, NULL, y, 2, 24, 8, 8, 24, 3, 3, 8, 8, 1, 1, 1, 1,
                                    24, 0, 0, 1);
  hpvm_rt_tensor_conv2d_blocked_f32(x, filter, NULL, y, 2, 16, 8, 8, 24, 3, 3, 8, 8, 1, 1, 1, 1,
                                    1, 0, 0, 2);
  hpvm_rt_tensor_conv2d_blocked_f32(NULL, filter, NULL, y, 2, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1,
                                    1, 16, 0, 0, 3);
  hpvm_rt_tensor_conv2d_blocked_f32(x, NULL, NULL, y, 2, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1,
                                    16, 0, 0, 3);
  hpvm_rt_tensor_conv2d_blocked_f32(x, filter, NULL, y, 2, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1,
                                    16, 0, 0, 8);
  hpvm_rt_tensor_conv2d_blocked_f32(x, filter, NULL, y, 2, 16, 8, 8, 16, 3, 3, 7, 8, 1, 1, 1, 1,
                                    16, 0, 0, 3);
  hpvm_rt_tensor_conv2d_blocked_f32(x, filter, NULL, y, 2, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1,
                                    16, 9, 0, 3);
  /* Empty tensors: nothing to do, no warning. */
  hpvm_rt_tensor_to_blocked_f32(NULL, NULL, 0, 16, 8, 8);
  hpvm_rt_tensor_pool_blocked_f32(NULL, NULL, HPVM_RT_TENSOR_POOL_MAX, 0, 16, 8, 8, 2, 2, 2, 2,
                                  0, 0, 4, 4);
  CHECK(memcmp(y, before, sizeof(float) * 2 * 48 * 64) == 0);
  fflush(stderr);
}

/* test_run_child, reading the child's stderr to its end (one warning a write). */
static int run_child(void (*body)(void *), char *text, size_t size) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    body(NULL);
    _exit(42);
  }
  close(fds[1]);
  size_t used = 0;
  for (ssize_t got; used + 1 < size && (got = read(fds[0], text + used, size - 1 - used)) > 0;)
    used += (size_t)got;
  text[used] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_bad_arguments(void) {
  char text[8192];
  int code = run_child(bad_calls, text, sizeof(text));
  if (code != 42) {
    fprintf(stderr, "bad arguments: the child exited with %d:\n%s", code, text);
    exit(1);
  }
  int warnings = 0;
  for (const char *p = text; (p = strstr(p, "hpvm: warning:")) != NULL; ++p)
    ++warnings;
  if (warnings != 15) {
    fprintf(stderr, "bad arguments: %d warnings, expected 15:\n%s", warnings, text);
    exit(1);
  }
  CHECK(strstr(text, "not a multiple of 16") != NULL);
  CHECK(strstr(text, "NULL operand") != NULL);
  CHECK(strstr(text, "unknown layouts 8") != NULL);
}

int main(void) {
  check_bad_arguments();
  for (int generic = 0; generic <= 1; ++generic) {
    hpvm_tensor_use_generic_kernels(generic);
    check_reorders();
    check_pools();
    check_depthwise();
    check_fallback();
  }
  hpvm_tensor_use_generic_kernels(0);
  /* Without scratch memory: the plain loops, the NCHW kernels' bits still. */
  hpvm_tensor_conv_without_memory(1);
  check_depthwise();
  check_fallback();
  hpvm_tensor_conv_without_memory(0);
#if defined(__x86_64__)
  const char *cpu = __builtin_cpu_supports("avx512f") ? " (the CPU has AVX-512F)" : "";
#else
  const char *cpu = "";
#endif
  printf("tensor_blocked_test: %lld cases bit for bit%s\n", (long long)cases, cpu);
  for (size_t i = 0; i < kept_count; ++i)
    free(kept[i]);
  return 0;
}
