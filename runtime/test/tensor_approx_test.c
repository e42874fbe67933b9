/* tensor_approx_test.c - the approximate convolutions (hpvm_rt_tensor_conv2d_approx_f32)
 * against plain loops in double that implement the knobs' semantics: perforated rows and
 * columns (the kept outputs exact, each skipped one the mean of its two final neighbours or a
 * copy of its one neighbour at an edge), filter sampling (every rate-th reduction element
 * skipped, the others scaled by rate / (rate - 1)). Shapes for every path of the driver
 * (vectors across filters, across positions, scalar loops), strides, padding, groups,
 * depthwise, rows narrower than 8 and wider than 16; rates 2, 3 and 4 with every offset,
 * each activation, with and without a bias. KNOB_EXACT must equal hpvm_rt_tensor_conv2d_f32
 * bit for bit, and inconsistent knobs, rates, offsets or shapes compute nothing (the output is
 * untouched) with one warning line. Every case runs with the CPU's kernels (AVX2 where it has
 * it), again with the baseline ones, and again as without memory (the fallback loops). */
#include "tensor/kernels.h"
#include "test_util.h"

#include <math.h>


typedef struct shape_t {
  int64_t n, c, h, w, f, kh, kw, pad_h, pad_w, stride_h, stride_w, groups;
  const char *what;
} shape_t;

static int64_t out_h(const shape_t *s) { return (s->h + 2 * s->pad_h - s->kh) / s->stride_h + 1; }
static int64_t out_w(const shape_t *s) { return (s->w + 2 * s->pad_w - s->kw) / s->stride_w + 1; }

/* The sums of the convolution (no bias, no activation) and the sums of |terms| (for the
 * tolerance): every filter element, or with sample_rate > 0 those with k % sample_rate !=
 * sample_offset, scaled by rate / (rate - 1). */
static void reference_sums(const shape_t *s, const float *input, const float *filter,
                           int64_t sample_rate, int64_t sample_offset, double *sum,
                           double *magnitude) {
  int64_t oh = out_h(s), ow = out_w(s), cg = s->c / s->groups, fg = s->f / s->groups;
  double scale = sample_rate > 0 ? (double)sample_rate / (sample_rate - 1.0) : 1.0;
  for (int64_t img = 0; img < s->n; ++img)
    for (int64_t o = 0; o < s->f; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t at = ((img * s->f + o) * oh + y) * ow + x;
          sum[at] = magnitude[at] = 0.0;
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t i = 0; i < s->kh; ++i)
              for (int64_t j = 0; j < s->kw; ++j) {
                int64_t k = (ch * s->kh + i) * s->kw + j;
                int64_t iy = y * s->stride_h + i - s->pad_h, ix = x * s->stride_w + j - s->pad_w;
                if ((sample_rate > 0 && k % sample_rate == sample_offset) || iy < 0 || iy >= s->h ||
                    ix < 0 || ix >= s->w)
                  continue;
                int64_t in_channel = (o / fg) * cg + ch;
                double term = (double)input[((img * s->c + in_channel) * s->h + iy) * s->w + ix] *
                              (scale * filter[o * cg * s->kh * s->kw + k]);
                sum[at] += term;
                magnitude[at] += fabs(term);
              }
        }
}

/* The epilogue: bias, then identity / relu / relu clipped at 0.5. */
static double activate_ref(double v, int64_t activation) {
  if (activation == HPVM_RT_TENSOR_IDENTITY)
    return v;
  v = v > 0 ? v : 0;
  return activation == HPVM_RT_TENSOR_CLIPPED_RELU && v > 0.5 ? 0.5 : v;
}

static const char *knob_name(int64_t knob) {
  return knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS   ? "rows"
         : knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS ? "cols"
         : knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER  ? "sample"
                                                      : "exact";
}

/* One case: the expected outputs from the sums (perforation: the skipped ones replaced from
 * their neighbours), then the kernel on an output full of NaN (every element must be
 * written), compared within a tolerance of the sum of |terms| (float summation order). */
static void check_case(const shape_t *s, const float *input, const float *filter, const float *bias,
                       const double *sum, const double *magnitude, int64_t knob, int64_t rate,
                       int64_t offset, int64_t activation) {
  int64_t oh = out_h(s), ow = out_w(s), plane = oh * ow, count = s->n * s->f * plane;
  double *want = malloc(sizeof(double) * (size_t)(count + 1));
  double *tolerance = malloc(sizeof(double) * (size_t)(count + 1));
  float *output = malloc(sizeof(float) * (size_t)(count + 1));
  CHECK(want && tolerance && output);
  for (int64_t i = 0; i < count; ++i) {
    want[i] = activate_ref(sum[i] + (bias ? bias[i / plane % s->f] : 0.0), activation);
    tolerance[i] = 1e-5 * (magnitude[i] + 1.0);
    output[i] = NAN;
  }
  for (int64_t p = 0; p < s->n * s->f; ++p) {
    double *v = want + p * plane, *t = tolerance + p * plane;
    if (knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS && oh > 1)
      for (int64_t y = offset; y < oh; y += rate)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t up = (y > 0 ? y - 1 : y + 1) * ow + x,
                  down = (y < oh - 1 ? y + 1 : y - 1) * ow + x;
          v[y * ow + x] = 0.5 * (v[up] + v[down]);
          t[y * ow + x] = fmax(t[up], t[down]);
        }
    if (knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS && ow > 1)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = offset; x < ow; x += rate) {
          int64_t left = y * ow + (x > 0 ? x - 1 : x + 1),
                  right = y * ow + (x < ow - 1 ? x + 1 : x - 1);
          v[y * ow + x] = 0.5 * (v[left] + v[right]);
          t[y * ow + x] = fmax(t[left], t[right]);
        }
  }
  hpvm_rt_tensor_conv2d_approx_f32(input, filter, bias, output, s->n, s->c, s->h, s->w, s->f, s->kh,
                                   s->kw, oh, ow, s->pad_h, s->pad_w, s->stride_h, s->stride_w,
                                   s->groups, activation, 0.5, knob, rate, offset);
  for (int64_t i = 0; i < count; ++i)
    if (!(fabs(output[i] - want[i]) <= tolerance[i])) { /* NaN (never written) fails too */
      int64_t at = i % plane;
      fprintf(stderr,
              "%s: knob %s rate %lld offset %lld activation %lld bias %d: image %lld filter "
              "%lld y %lld x %lld is %.9g, expected %.9g\n",
              s->what, knob_name(knob), (long long)rate, (long long)offset, (long long)activation,
              bias != NULL, (long long)(i / plane / s->f), (long long)(i / plane % s->f),
              (long long)(at / ow), (long long)(at % ow), (double)output[i], want[i]);
      exit(1);
    }
  free(want), free(tolerance), free(output);
}

/* KNOB_EXACT is hpvm_rt_tensor_conv2d_f32 (rate and offset ignored): the same bits. */
static void check_exact(const shape_t *s, const float *input, const float *filter,
                        const float *bias, int64_t activation) {
  int64_t oh = out_h(s), ow = out_w(s), count = s->n * s->f * oh * ow;
  float *want = test_random_array(count), *got = test_random_array(count);
  hpvm_rt_tensor_conv2d_f32(input, filter, bias, want, s->n, s->c, s->h, s->w, s->f, s->kh, s->kw,
                            oh, ow, s->pad_h, s->pad_w, s->stride_h, s->stride_w, s->groups,
                            activation, 0.5);
  hpvm_rt_tensor_conv2d_approx_f32(input, filter, bias, got, s->n, s->c, s->h, s->w, s->f, s->kh,
                                   s->kw, oh, ow, s->pad_h, s->pad_w, s->stride_h, s->stride_w,
                                   s->groups, activation, 0.5, HPVM_RT_TENSOR_KNOB_EXACT, 0, -7);
  if (count > 0 && memcmp(want, got, sizeof(float) * (size_t)count) != 0) {
    fprintf(stderr, "%s: KNOB_EXACT differs from hpvm_rt_tensor_conv2d_f32\n", s->what);
    exit(1);
  }
  free(want), free(got);
}

static const shape_t shapes[] = {
    /* n, c, h, w, f, kh, kw, pad_h, pad_w, stride_h, stride_w, groups */
    {2, 6, 14, 14, 16, 5, 5, 0, 0, 1, 1, 1, "LeNet conv2 (across filters, 10 columns)"},
    {1, 8, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, "3x3 pad 1, 24 filters (a partial filter block)"},
    {1, 3, 6, 40, 40, 3, 3, 1, 1, 1, 1, 1, "40 filters, 40 columns"},
    {2, 3, 9, 21, 6, 3, 3, 1, 1, 1, 1, 1, "6 filters (across positions, columns transposed)"},
    {1, 2, 7, 5, 3, 3, 3, 1, 1, 1, 1, 1, "3 filters, 5 columns"},
    {1, 3, 20, 24, 8, 5, 5, 2, 2, 1, 1, 1, "5x5 pad 2, 8 filters, 24 columns"},
    {1, 3, 9, 20, 7, 3, 3, 1, 1, 1, 1, 1, "7 filters (a block of 6, then one filter)"},
    {64, 2, 20, 6, 5, 3, 3, 1, 1, 1, 1, 1,
     "64 images of 20 rows, 5 filters (tasks of whole planes)"},
    {1, 3, 8, 16, 4, 3, 3, 1, 1, 1, 1, 1, "4 filters, exactly 16 columns"},
    {1, 4, 11, 13, 20, 3, 3, 1, 1, 2, 2, 1, "stride 2, 20 filters"},
    {1, 3, 9, 10, 5, 3, 3, 1, 0, 2, 1, 1, "stride 2 x 1, 5 filters"},
    {1, 3, 9, 10, 5, 3, 3, 0, 1, 1, 2, 1, "stride 1 x 2, 5 filters"},
    {1, 2, 9, 10, 2, 3, 3, 1, 1, 2, 2, 1, "stride 2, 2 filters (scalar loops)"},
    {1, 2, 9, 11, 3, 3, 3, 0, 0, 2, 2, 1, "stride 2, 3 filters, no padding (scalar, in place)"},
    {2, 3, 12, 12, 16, 3, 3, 0, 0, 2, 2, 1, "stride 2, 16 filters, no padding (in place)"},
    {2, 4, 9, 17, 28, 3, 3, 1, 1, 1, 1, 2, "2 groups of 14 filters"},
    {2, 4, 9, 9, 6, 3, 3, 1, 1, 1, 1, 2, "2 groups of 3 filters"},
    {1, 5, 10, 18, 5, 3, 3, 1, 1, 1, 1, 5, "depthwise"},
    {1, 3, 9, 12, 3, 3, 3, 1, 1, 2, 2, 3, "depthwise, stride 2"},
    {1, 16, 6, 6, 32, 1, 1, 0, 0, 1, 1, 1, "pointwise, 6 columns"},
    {1, 2, 3, 20, 13, 3, 3, 0, 1, 1, 1, 1, "one output row"},
    {1, 2, 10, 3, 14, 3, 3, 1, 0, 1, 1, 1, "one output column"},
    {1, 2, 4, 6, 12, 3, 3, 0, 0, 1, 1, 1, "2 x 4 outputs (every skipped one at an edge)"},
    {5, 4, 12, 12, 17, 5, 5, 2, 2, 1, 1, 1, "5 images, 17 filters"},
    {2, 8, 5, 37, 13, 2, 4, 0, 2, 1, 1, 1, "2 x 4 window, 36 columns"},
    {1, 0, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, "no input channel"},
};

static void run_all(void) {
  int64_t cases = 0;
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); ++si) {
    const shape_t *s = &shapes[si];
    int64_t count = s->n * s->f * out_h(s) * out_w(s);
    float *input = test_random_array(s->n * s->c * s->h * s->w);
    float *filter = test_random_array(s->f * (s->c / s->groups) * s->kh * s->kw);
    float *bias = test_random_array(s->f);
    double *sum = malloc(sizeof(double) * (size_t)(count + 1));
    double *magnitude = malloc(sizeof(double) * (size_t)(count + 1));
    CHECK(sum && magnitude);
    for (int64_t activation = 0; activation < 3; ++activation)
      check_exact(s, input, filter, activation ? bias : NULL, activation);
    reference_sums(s, input, filter, 0, 0, sum, magnitude);
    for (int64_t knob = HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS;
         knob <= HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER; ++knob)
      for (int64_t rate = 2; rate <= 4; ++rate)
        for (int64_t offset = 0; offset < rate; ++offset, ++cases) {
          if (knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER)
            reference_sums(s, input, filter, rate, offset, sum, magnitude);
          /* Each activation in turn, a bias two cases out of three. */
          check_case(s, input, filter, cases % 3 != 2 ? bias : NULL, sum, magnitude, knob, rate,
                     offset, cases % 3);
        }
    free(input), free(filter), free(bias), free(sum), free(magnitude);
  }
}

/* Inconsistent arguments: nothing computed. */
typedef struct bad_call_t {
  int64_t oh, stride, groups, activation, knob, rate, offset;
  int null_input;
} bad_call_t;

static int call_untouched(const bad_call_t *b) {
  float in[2 * 6 * 6] = {0}, filter[2 * 2 * 9] = {0}, out[2 * 16];
  for (int i = 0; i < 32; ++i)
    out[i] = 7.0f;
  hpvm_rt_tensor_conv2d_approx_f32(b->null_input ? NULL : in, filter, NULL, out, 1, 2, 6, 6, 2, 3,
                                   3, b->oh, 4, 0, 0, b->stride, 1, b->groups, b->activation, 0,
                                   b->knob, b->rate, b->offset);
  for (int i = 0; i < 32; ++i)
    if (out[i] != 7.0f)
      return 0;
  return 1;
}

/* In a child whose stderr is captured: exit 0 when the output stayed untouched. */
static void bad_call_child(void *arg) { _exit(call_untouched(arg) ? 0 : 3); }

static void check_bad_calls(void) {
  const bad_call_t good = {4, 1, 1, 0, HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS, 2, 0, 0};
  bad_call_t bad[] = {good, good, good, good, good, good, good, good, good, good, good, good};
  bad[0].knob = 4;
  bad[1].knob = -1;
  bad[2].rate = 1;
  bad[3].rate = 0;
  bad[4].rate = -3;
  bad[5].offset = -1;
  bad[6].offset = 2; /* == rate */
  bad[7].knob = HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER, bad[7].rate = 3, bad[7].offset = 5;
  bad[8].oh = 3;     /* inconsistent output height */
  bad[9].groups = 3; /* channels not a multiple of groups */
  bad[10].activation = 9;
  bad[11].knob = HPVM_RT_TENSOR_KNOB_EXACT, bad[11].stride = 0; /* conv2d_f32 refuses it */
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    char text[1024];
    int code = test_run_child(bad_call_child, &bad[i], text, sizeof(text));
    if (code != 0 || strncmp(text, "hpvm: warning: hpvm_rt_tensor_conv2d_", 37) != 0 ||
        strchr(text, '\n') != text + strlen(text) - 1) {
      fprintf(stderr, "bad call %zu: exit %d, stderr \"%s\" (expected one warning line)\n", i, code,
              text);
      exit(1);
    }
  }
  /* NULL operands: nothing computed, silently (as hpvm_rt_tensor_conv2d_f32). */
  bad_call_t null_input = good;
  null_input.null_input = 1;
  CHECK(call_untouched(&null_input));
  /* And the good call computes (the checks above do test the arguments). */
  CHECK(!call_untouched(&good));
}

int main(void) {
  test_seed = 2024;
  check_bad_calls(); /* first: the children fork before the pool's threads start */
  run_all();         /* on the runtime's pool, with the CPU's kernels */
  hpvm_tensor_use_generic_kernels(1);
  run_all(); /* with the baseline ones */
  hpvm_tensor_use_generic_kernels(0);
  hpvm_tensor_approx_without_memory(1);
  run_all(); /* as without memory: the plain loops over the unpacked filters */
  hpvm_tensor_approx_without_memory(0);
  hpvm_rt_shutdown();
  printf("approximate convolutions: all checks passed\n");
  return 0;
}
