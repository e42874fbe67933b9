/* tensor_activation_test.c - the late activations of the tensor kernels' epilogues
 * (HPVM_RT_TENSOR_SIGMOID, HPVM_RT_TENSOR_SILU, HPVM_RT_TENSOR_HARDSWISH: the map's operations
 * one at a time) give, bit for bit, a scalar reference that
 * follows the compiled code's expansion of hpvm.tensor.sigmoid step by step (MLIR's polynomial
 * exp: clamps, fmaf with log2(e), floor, the two-step reduction, the polynomial, 2^n from its
 * bits, 1 / (1 + e)), applied to the same call's result without activation; in every
 * convolution strategy (direct wide rows, narrow rows across filters, pointwise, strided tap
 * lists, strided few filters through the im2col product, depthwise 3 x 3 and 5 x 5 at strides
 * 1 and 2, windows too large for the vector path), in products (packed and one row), and on
 * special values (zeros, huge, tiny, NaN, the clamps' edges). Each ISA (the default: AVX-512
 * where the CPU has it; avx2; generic) runs in a child process of its own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hpvm/hpvm_rt.h"
#include "test_util.h"

/* The expansion hpvm-opt --convert-hpvm-tensor-to-linalg prints for hpvm.tensor.sigmoid,
 * written out independently of the runtime's own copy. */
static float reference_sigmoid(float in) {
  float x = -in;
  if (!(x >= -87.8f) && x == x)
    x = -87.8f;
  if (!(x <= 88.8f) && x == x)
    x = 88.8f;
  float t = fmaf(x, 1.44269502f, 0.5f);
  float n = floorf(t);
  if (n < -127.0f)
    n = -127.0f;
  if (n > 127.0f)
    n = 127.0f;
  float r = fmaf(-0.693359375f, n, x);
  r = fmaf(2.12194442e-4f, n, r);
  float p = fmaf(r, 1.98756912e-4f, 0.00139819994f);
  p = fmaf(p, r, 0.00833345205f);
  p = fmaf(p, r, 0.0416657962f);
  p = fmaf(p, r, 0.166666657f);
  p = fmaf(p, r, 0.5f);
  float rr = r * r;
  float y = fmaf(p, rr, r);
  float y1 = y + 1.0f;
  if (n != n)
    return n; /* NaN in, NaN out */
  int32_t i = (int32_t)n + 127;
  uint32_t bits = (uint32_t)i << 23;
  float scale;
  memcpy(&scale, &bits, sizeof(scale));
  float e = y1 * scale;
  float d = e + 1.0f;
  return 1.0f / d;
}

/* The importer's hpvm.tensor.map for ONNX HardSwish, an operation at a time: mulf by 1/6,
 * addf 0.5, minimumf 1, maximumf 0 (both keeping a NaN), mulf by the input. */
static float reference_hardswish(float x) {
  float t = x * 0.166666672f;
  t = t + 0.5f;
  if (t == t && !(t < 1.0f))
    t = 1.0f;
  if (t == t && !(t > 0.0f))
    t = 0.0f;
  return x * t;
}

static float reference(float v, int64_t activation) {
  if (activation == HPVM_RT_TENSOR_HARDSWISH)
    return reference_hardswish(v);
  float s = reference_sigmoid(v);
  return activation == HPVM_RT_TENSOR_SILU ? v * s : s;
}

static int64_t mismatches;

/* out[i] must be reference(pre[i]) bit for bit (NaN: any NaN). */
static void expect(const char *what, const float *pre, const float *out, int64_t count,
                   int64_t activation) {
  for (int64_t i = 0; i < count; ++i) {
    float want = reference(pre[i], activation);
    if (want != want && out[i] != out[i])
      continue;
    if (memcmp(&want, &out[i], sizeof(float)) != 0) {
      if (mismatches++ < 10)
        fprintf(stderr, "%s (activation %lld) [%lld]: %a -> %a, expected %a\n", what,
                (long long)activation, (long long)i, (double)pre[i], (double)out[i],
                (double)want);
    }
  }
}

typedef struct {
  int64_t n, c, h, w, f, kh, kw, pad, stride, groups;
} conv_t;

static void check_conv(const conv_t *k, int constant) {
  int64_t oh = (k->h + 2 * k->pad - k->kh) / k->stride + 1;
  int64_t ow = (k->w + 2 * k->pad - k->kw) / k->stride + 1;
  int64_t outs = k->n * k->f * oh * ow;
  float *input = test_random_array(k->n * k->c * k->h * k->w);
  float *filter = test_random_array(k->f * (k->c / k->groups) * k->kh * k->kw);
  float *bias = test_random_array(k->f);
  /* Larger sums reach the clamps and the tails of the curve too. */
  for (int64_t i = 0; i < k->f * (k->c / k->groups) * k->kh * k->kw; ++i)
    filter[i] *= 4.0f;
  float *pre = malloc(sizeof(float) * (size_t)outs);
  float *out = malloc(sizeof(float) * (size_t)outs);
  void (*conv)(const float *, const float *, const float *, float *, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, double) =
      constant ? hpvm_rt_tensor_conv2d_constant_f32 : hpvm_rt_tensor_conv2d_f32;
  conv(input, filter, bias, pre, k->n, k->c, k->h, k->w, k->f, k->kh, k->kw, oh, ow, k->pad,
       k->pad, k->stride, k->stride, k->groups, HPVM_RT_TENSOR_IDENTITY, 0.0);
  for (int64_t a = HPVM_RT_TENSOR_SIGMOID; a <= HPVM_RT_TENSOR_HARDSWISH; ++a) {
    memset(out, 0xff, sizeof(float) * (size_t)outs);
    conv(input, filter, bias, out, k->n, k->c, k->h, k->w, k->f, k->kh, k->kw, oh, ow, k->pad,
         k->pad, k->stride, k->stride, k->groups, a, 0.0);
    char what[128];
    snprintf(what, sizeof what, "conv %lldx%lldx%lldx%lld * %lldx%lldx%lld s%lld g%lld%s",
             (long long)k->n, (long long)k->c, (long long)k->h, (long long)k->w,
             (long long)k->f, (long long)k->kh, (long long)k->kw, (long long)k->stride,
             (long long)k->groups, constant ? " constant" : "");
    expect(what, pre, out, outs, a);
  }
  free(input);
  if (!constant) { /* constants stay: their packed forms are keyed by address */
    free(filter);
    free(bias);
  }
  free(pre);
  free(out);
}

static void check_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                         const float *b, const float *bias) {
  int64_t outs = batch * m * n;
  float *pre = malloc(sizeof(float) * (size_t)outs);
  float *out = malloc(sizeof(float) * (size_t)outs);
  hpvm_rt_tensor_matmul_f32(a, b, bias, pre, batch, m, n, k, HPVM_RT_TENSOR_IDENTITY, 0.0);
  for (int64_t act = HPVM_RT_TENSOR_SIGMOID; act <= HPVM_RT_TENSOR_HARDSWISH; ++act) {
    memset(out, 0xff, sizeof(float) * (size_t)outs);
    hpvm_rt_tensor_matmul_f32(a, b, bias, out, batch, m, n, k, act, 0.0);
    expect("matmul", pre, out, outs, act);
  }
  free(pre);
  free(out);
}

/* Special values as the results of a product by 1 (exact), through the product's epilogue,
 * and as a pointwise convolution's (weight 1, exact), through the convolution's. */
static void check_special(void) {
  enum { kCount = 4096 };
  float *values = malloc(sizeof(float) * kCount);
  const float fixed[] = {0.0f, -0.0f, 1.0f, -1.0f, 87.8f, -87.8f, 88.8f, -88.8f, 87.79f,
                         88.81f, 100.0f, -100.0f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN,
                         1e-40f, -1e-40f, 1e-7f, 0.5f, -0.5f, 16.0f, -16.0f, 88.0f, -88.0f,
                         0.34657359f, -0.34657359f, 0.693359375f, 3.4028235e38f};
  int64_t fixed_count = (int64_t)(sizeof fixed / sizeof fixed[0]);
  for (int64_t i = 0; i < kCount; ++i)
    values[i] = i < fixed_count ? fixed[i] : test_random_value() * (float)(i % 200);
  float one = 1.0f;
  /* One row (the skinny kernel) and 64 rows (packed): values as a column of A times 1 x 1. */
  check_matmul(1, kCount, 1, 1, values, &one, NULL);
  check_matmul(1, 1, kCount, 1, &one, values, NULL);
  float *ones = malloc(sizeof(float) * 64);
  for (int i = 0; i < 64; ++i)
    ones[i] = 1.0f;
  check_matmul(1, 64, kCount / 64, 1, ones, values, NULL);
  /* A pointwise convolution of one channel: the image passes through the direct kernel. */
  float *out = malloc(sizeof(float) * kCount);
  for (int64_t a = HPVM_RT_TENSOR_SIGMOID; a <= HPVM_RT_TENSOR_HARDSWISH; ++a) {
    hpvm_rt_tensor_conv2d_f32(values, &one, NULL, out, 1, 1, 64, 64, 1, 1, 1, 64, 64, 0, 0, 1,
                              1, 1, a, 0.0);
    /* 0 + 1 * -0 is +0: the sum starts from zero. */
    float *pre = malloc(sizeof(float) * kCount);
    for (int64_t i = 0; i < kCount; ++i)
      pre[i] = values[i] == 0.0f ? 0.0f : values[i];
    expect("pointwise special", pre, out, kCount, a);
    free(pre);
  }
  free(out);
  free(ones);
  free(values);
}

static void body(void) {
  test_seed = 777;
  check_special();
  const conv_t convs[] = {
      {2, 19, 5, 5, 37, 3, 3, 1, 1, 1},   /* narrow rows: across filters */
      {2, 7, 30, 41, 13, 3, 3, 1, 1, 1},  /* wide rows: the direct kernel */
      {1, 24, 14, 14, 40, 1, 1, 0, 1, 1}, /* pointwise */
      {2, 9, 15, 17, 29, 3, 3, 1, 2, 1},  /* strided: tap lists */
      {2, 5, 23, 29, 3, 3, 3, 1, 2, 1},   /* strided, 3 filters: the im2col product */
      {2, 16, 19, 21, 16, 3, 3, 1, 1, 16}, /* depthwise 3 x 3 */
      {1, 8, 20, 23, 8, 3, 3, 1, 2, 8},   /* depthwise strided */
      {1, 6, 17, 17, 6, 5, 5, 2, 1, 6},   /* depthwise 5 x 5 */
      {1, 3, 12, 12, 3, 9, 9, 4, 1, 3},   /* depthwise, too many taps: scalar loops */
      {1, 8, 9, 10, 12, 3, 3, 1, 1, 2},   /* grouped */
      /* an output past 2^20 floats: the logistic activations on each block of the direct
       * kernel as it leaves it (smaller ones: over the finished planes) */
      {1, 6, 128, 128, 70, 1, 1, 0, 1, 1},
      {1, 40, 1, 1, 300, 1, 1, 0, 1, 1},  /* 1 x 1 image: the product by the transposed filters */
  };
  for (size_t i = 0; i < sizeof convs / sizeof convs[0]; ++i) {
    check_conv(&convs[i], 0);
    check_conv(&convs[i], 1);
  }
  int64_t batch = 2, m = 37, n = 53, k = 67;
  float *a = test_random_array(batch * m * k), *b = test_random_array(batch * k * n);
  float *bias = test_random_array(n);
  check_matmul(batch, m, n, k, a, b, bias);
  check_matmul(1, 1, n, k, a, b, bias);
  check_matmul(1, 2, n, k, a, b, NULL);
  free(a);
  free(b);
  free(bias);
}

/* The checks with HPVM_TENSOR_ISA=isa (NULL: the default) in a child process; its mismatches. */
static int run_isa(const char *isa) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (isa)
      setenv("HPVM_TENSOR_ISA", isa, 1);
    body();
    _exit(mismatches ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "tensor_activation_test: mismatches with HPVM_TENSOR_ISA=%s\n",
            isa ? isa : "(default)");
    return 1;
  }
  return 0;
}

int main(void) {
  int failed = run_isa(NULL) + run_isa("avx2") + run_isa("generic");
  CHECK_EQ_INT(failed, 0);
  /* An unknown activation computes nothing (one warning). */
  float a = 1.0f, c = 42.0f;
  hpvm_rt_tensor_matmul_f32(&a, &a, NULL, &c, 1, 1, 1, 1, HPVM_RT_TENSOR_HARDSWISH + 1, 0.0);
  CHECK(c == 42.0f);
  printf("tensor_activation_test: sigmoid, silu and hardswish epilogues equal the reference bit "
         "for bit\n");
  return 0;
}
