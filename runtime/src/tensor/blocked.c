/* The blocked activation layout of the CPU in f32 (NCHW16c, hpvm_rt.h: [n][c / 16][h][w][16],
 * the layout the compiler keeps between the convolutions and pools of a graph): the reorders
 * to and from NCHW, pools, and convolutions with blocked operands. Pools and depthwise
 * convolutions run natively (blocked_isa.inc: a vector is the 16 channels of one position, so
 * every tap is a whole vector load and the edges need no masks); the other convolutions
 * convert their blocked operands to NCHW scratch around hpvm_rt_tensor_conv2d_constant_f32.
 * Every result is the NCHW call's, bit for bit (tensor_blocked_test).
 *
 * These calls cannot fail: without scratch memory a convolution runs plain loops over the
 * layouts as they are; without the thread pool the tasks run on the calling thread. */
#include "blocked_kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

#include <math.h>
#include <string.h>

/* The baseline's copy of the loops (blocked_avx512.c has AVX-512's). */
#define SUFFIX _generic
#include "blocked_isa.inc"
#undef SUFFIX

#define ceil_div hpvm_tensor_ceil_div

enum { BLOCK = HPVM_RT_TENSOR_BLOCK };
/* Positions per reorder task: 64 KiB of a block read and written. */
enum { REORDER_CHUNK = 1024 };
/* The first word of the depthwise weights' packed layout (constants.c): unused by conv.c
 * (1, 3, 6), conv_taps.c (2), gemm.c (4) and conv_across.c (5). */
enum { BLOCKED_LAYOUT_DEPTHWISE = 16 };

/* The blocked loops that give the bits of the NCHW kernels dispatch.c chose: AVX-512's where
 * it chose AVX-512's (the same fused multiply-adds), the baseline's for the baseline (the same
 * expression). Where it chose AVX2 (or HPVM_TENSOR_ISA=avx2): the baseline's reorders and
 * pools (exact on any ISA: they multiply nothing but a mean's scale) and no depthwise loop
 * (AVX2's sums are fused, the baseline's are not): those convert. Read per call, as the
 * tests switch the kernels (hpvm_tensor_use_generic_kernels). */
static hpvm_blocked_kernels_t blocked_kernels(void) {
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
#ifdef HPVM_TENSOR_HAVE_AVX512
  if (k->depthwise == hpvm_tensor_depthwise_avx512)
    return (hpvm_blocked_kernels_t){hpvm_blocked_to_avx512, hpvm_blocked_from_avx512,
                                    hpvm_blocked_pool_avx512, hpvm_blocked_depthwise_avx512};
#endif
  hpvm_blocked_kernels_t generic = {hpvm_blocked_to_generic, hpvm_blocked_from_generic,
                                    hpvm_blocked_pool_generic, NULL};
  if (k->depthwise == hpvm_tensor_depthwise_generic)
    generic.depthwise = hpvm_blocked_depthwise_generic;
  return generic;
}

/* Output rows per task for `planes` block planes of `rows` rows: whole planes, halved until
 * the pool has about four tasks per thread. */
static int64_t band_rows(int64_t planes, int64_t rows) {
  int64_t threads = hpvm_rt_thread_count(), band = rows > 0 ? rows : 1;
  while (band > 1 && planes * ceil_div(rows, band) < 4 * threads)
    band = ceil_div(band, 2);
  return band;
}

/* One warning, and 0, where operand i is NULL though it has floats[i] > 0 floats; else 1
 * (an empty tensor may be NULL: there is nothing to read or write). */
static int operands_present(const char *what, int count, const void *const *pointers,
                            const int64_t *floats) {
  for (int i = 0; i < count; ++i)
    if (!pointers[i] && floats[i] > 0) {
      hpvm_warning("%s: NULL operand of %lld floats; nothing computed", what,
                   (long long)floats[i]);
      return 0;
    }
  return 1;
}

/* One warning, and 0, where blocked channels are not whole blocks. */
static int channels_blocked(const char *what, int64_t channels) {
  if (channels % BLOCK == 0)
    return 1;
  hpvm_warning("%s: %lld channels in a blocked operand, not a multiple of %d; nothing "
               "computed",
               what, (long long)channels, BLOCK);
  return 0;
}

/* ---- Reorders ------------------------------------------------------------------------- */

typedef struct reorder_t {
  const float *input;
  float *output;
  int64_t positions; /* h * w */
  hpvm_blocked_to_fn to;     /* NCHW to blocked, or */
  hpvm_blocked_from_fn from; /* blocked to NCHW */
} reorder_t;

/* Tasks (block b = image * c / 16 + channel block, chunk of positions): the block's 16 NCHW
 * planes start at plane 16 b, its vectors at float 16 b * positions. */
static void run_reorder(void *context, const hpvm_rt_instance_range_t *range) {
  const reorder_t *r = context;
  for (int64_t b = range->begin[0]; b < range->end[0]; ++b)
    for (int64_t chunk = range->begin[1]; chunk < range->end[1]; ++chunk) {
      int64_t p = chunk * REORDER_CHUNK;
      int64_t count = r->positions - p < REORDER_CHUNK ? r->positions - p : REORDER_CHUNK;
      int64_t planes = b * BLOCK * r->positions + p, vectors = (b * r->positions + p) * BLOCK;
      if (r->to)
        r->to(r->input + planes, r->positions, r->output + vectors, count);
      else
        r->from(r->input + vectors, r->output + planes, r->positions, count);
    }
}

/* The reorder of checked operands on the pool; copies below 32K floats on the calling thread
 * (the pool's hand-off costs about what they do). */
static void reorder(const float *input, float *output, int64_t n, int64_t c, int64_t positions,
                    int to_blocked) {
  hpvm_blocked_kernels_t k = blocked_kernels();
  reorder_t r = {input, output, positions, to_blocked ? k.to : NULL,
                 to_blocked ? NULL : k.from};
  int64_t extents[2] = {n * (c / BLOCK), ceil_div(positions, REORDER_CHUNK)};
  if (extents[0] > 0 && extents[1] > 0)
    hpvm_tensor_run_sized(2, extents, run_reorder, &r,
                          8.0 * (double)n * (double)c * (double)positions);
}

/* The checks of both reorders; 0 when nothing is to be done. */
static int reorder_valid(const char *what, const float *input, const float *output, int64_t n,
                         int64_t c, int64_t h, int64_t w) {
  int64_t sizes[] = {n, c, h, w};
  if (!hpvm_tensor_sizes_valid(what, 4, sizes) || !channels_blocked(what, c))
    return 0;
  const void *pointers[] = {input, output};
  int64_t floats[] = {n * c * h * w, n * c * h * w};
  return operands_present(what, 2, pointers, floats) && input && output;
}

void hpvm_rt_tensor_to_blocked_f32(const float *input, float *output, int64_t n, int64_t c,
                                   int64_t h, int64_t w) {
  if (reorder_valid("hpvm_rt_tensor_to_blocked_f32", input, output, n, c, h, w))
    reorder(input, output, n, c, h * w, 1);
}

void hpvm_rt_tensor_from_blocked_f32(const float *input, float *output, int64_t n, int64_t c,
                                     int64_t h, int64_t w) {
  if (reorder_valid("hpvm_rt_tensor_from_blocked_f32", input, output, n, c, h, w))
    reorder(input, output, n, c, h * w, 0);
}

/* ---- Pools ---------------------------------------------------------------------------- */

typedef struct pool_job_t {
  hpvm_blocked_pool_t p;
  hpvm_blocked_pool_fn kernel;
  const float *input;
  float *output;
  int64_t band;
} pool_job_t;

/* Tasks (block plane, band of output rows). */
static void run_pool(void *context, const hpvm_rt_instance_range_t *range) {
  const pool_job_t *j = context;
  const hpvm_blocked_pool_t *p = &j->p;
  for (int64_t b = range->begin[0]; b < range->end[0]; ++b)
    for (int64_t band = range->begin[1]; band < range->end[1]; ++band) {
      int64_t y0 = band * j->band, y1 = y0 + j->band < p->oh ? y0 + j->band : p->oh;
      j->kernel(p, j->input + b * p->h * p->w * BLOCK, j->output + b * p->oh * p->ow * BLOCK,
                y0, y1);
    }
}

/* hpvm_rt_tensor_pool_f32's checks, then the blocked channels and the operands. */
static int pool_valid(const char *what, const float *input, const float *output,
                      const hpvm_blocked_pool_t *p, int64_t n, int64_t c) {
  int64_t sizes[] = {n, c, p->h, p->w, p->pad_h, p->pad_w, p->oh, p->ow};
  if (!hpvm_tensor_sizes_valid(what, 8, sizes))
    return 0;
  if (p->kind < HPVM_RT_TENSOR_POOL_MAX || p->kind > HPVM_RT_TENSOR_POOL_MEAN ||
      p->window_h <= 0 || p->window_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
      !hpvm_tensor_pool_extent_valid(p->h, p->window_h, p->stride_h, p->pad_h, p->oh) ||
      !hpvm_tensor_pool_extent_valid(p->w, p->window_w, p->stride_w, p->pad_w, p->ow)) {
    hpvm_warning("%s: inconsistent kind, window, strides or shapes (kind %lld, input "
                 "%lldx%lld, window %lldx%lld, stride %lldx%lld, output %lldx%lld); nothing "
                 "computed",
                 what, (long long)p->kind, (long long)p->h, (long long)p->w,
                 (long long)p->window_h, (long long)p->window_w, (long long)p->stride_h,
                 (long long)p->stride_w, (long long)p->oh, (long long)p->ow);
    return 0;
  }
  const void *pointers[] = {input, output};
  int64_t floats[] = {n * c * p->h * p->w, n * c * p->oh * p->ow};
  return channels_blocked(what, c) && operands_present(what, 2, pointers, floats) && input &&
         output;
}

void hpvm_rt_tensor_pool_blocked_f32(const float *input, float *output, int64_t kind, int64_t n,
                                     int64_t c, int64_t h, int64_t w, int64_t window_h,
                                     int64_t window_w, int64_t stride_h, int64_t stride_w,
                                     int64_t pad_h, int64_t pad_w, int64_t oh, int64_t ow) {
  hpvm_blocked_pool_t p = {kind,     h,     w,     window_h, window_w, stride_h,
                           stride_w, pad_h, pad_w, oh,       ow,       HPVM_BLOCKED_POOL_WINDOWS};
  if (!pool_valid("hpvm_rt_tensor_pool_blocked_f32", input, output, &p, n, c))
    return;
  /* The order of the window the NCHW pool's plane kernel takes (kernels_isa.inc's
   * pool_plane; AVX-512's hands both of these cases to it). */
  if (window_h == 2 && window_w == 2 && stride_h == 2 && stride_w == 2 && pad_h == 0 &&
      pad_w == 0 && 2 * oh <= h && 2 * ow <= w)
    p.order = HPVM_BLOCKED_POOL_PAIRS;
  else if (window_h == h && window_w == w && pad_h == 0 && pad_w == 0 && oh == 1 && ow == 1 &&
           h * w >= 32)
    p.order = HPVM_BLOCKED_POOL_WHOLE;
  int64_t planes = n * (c / BLOCK);
  pool_job_t job = {p, blocked_kernels().pool, input, output, band_rows(planes, oh)};
  int64_t extents[2] = {planes, ceil_div(oh, job.band)};
  if (extents[0] > 0 && extents[1] > 0 && ow > 0)
    hpvm_tensor_run_grid(2, extents, run_pool, &job);
}

/* ---- Convolutions --------------------------------------------------------------------- */

/* hpvm_rt_tensor_conv2d_blocked_f32's arguments. */
typedef struct conv_args_t {
  const float *input, *filter, *bias;
  float *output;
  int64_t n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w, stride_h, stride_w, groups, activation;
  double activation_max;
  int64_t layouts;
} conv_args_t;

/* Whether the filter and bias are constants of the program (packed once and kept). */
static int filter_constant(const conv_args_t *a) {
  return (a->layouts & HPVM_RT_TENSOR_FILTER_VARIABLE) == 0;
}

/* The layouts of the operands alone (without HPVM_RT_TENSOR_FILTER_VARIABLE). */
static int64_t operand_layouts(const conv_args_t *a) {
  return a->layouts & (HPVM_RT_TENSOR_INPUT_BLOCKED | HPVM_RT_TENSOR_OUTPUT_BLOCKED);
}

/* The NCHW convolution: hpvm_rt_tensor_conv2d_constant_f32 for constants, else
 * hpvm_rt_tensor_conv2d_f32 (the same values; only the packing is kept or not). */
static void conv_nchw(const conv_args_t *a, const float *input, float *output) {
  if (filter_constant(a))
    hpvm_rt_tensor_conv2d_constant_f32(input, a->filter, a->bias, output, a->n, a->c, a->h,
                                       a->w, a->f, a->kh, a->kw, a->oh, a->ow, a->pad_h,
                                       a->pad_w, a->stride_h, a->stride_w, a->groups,
                                       a->activation, a->activation_max);
  else
    hpvm_rt_tensor_conv2d_f32(input, a->filter, a->bias, output, a->n, a->c, a->h, a->w, a->f,
                              a->kh, a->kw, a->oh, a->ow, a->pad_h, a->pad_w, a->stride_h,
                              a->stride_w, a->groups, a->activation, a->activation_max);
}

/* hpvm_tensor_conv_args_valid's checks, the layouts, the blocked channels, and a warning for
 * NULL operands (which it leaves silent). */
static int conv_valid(const char *what, const conv_args_t *a) {
  if (a->layouts < 0 || a->layouts > (HPVM_RT_TENSOR_INPUT_BLOCKED |
                                       HPVM_RT_TENSOR_OUTPUT_BLOCKED |
                                       HPVM_RT_TENSOR_FILTER_VARIABLE)) {
    hpvm_warning("%s: unknown layouts %lld (expected a mask of 1: input blocked, 2: output "
                 "blocked, 4: filter not a constant); nothing computed",
                 what, (long long)a->layouts);
    return 0;
  }
  int64_t sizes[] = {a->n, a->c, a->h, a->w, a->f, a->kh, a->kw, a->oh, a->ow};
  if (!hpvm_tensor_sizes_valid(what, 9, sizes))
    return 0;
  if ((a->layouts & HPVM_RT_TENSOR_INPUT_BLOCKED) && !channels_blocked(what, a->c))
    return 0;
  if ((a->layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED) && !channels_blocked(what, a->f))
    return 0;
  const void *pointers[] = {a->input, a->filter, a->output};
  int64_t per_group_c = a->groups > 0 ? a->c / a->groups : a->c;
  int64_t floats[] = {a->n * a->c * a->h * a->w, a->f * per_group_c * a->kh * a->kw,
                      a->n * a->f * a->oh * a->ow};
  if (!operands_present(what, 3, pointers, floats))
    return 0;
  return hpvm_tensor_conv_args_valid(what, a->input, a->filter, a->output, a->n, a->c, a->h,
                                     a->w, a->f, a->kh, a->kw, a->oh, a->ow, a->pad_h, a->pad_w,
                                     a->stride_h, a->stride_w, a->groups, a->activation);
}

typedef struct depthwise_job_t {
  hpvm_blocked_depthwise_t d;
  hpvm_blocked_depthwise_fn kernel;
  const float *input, *weights, *bias;
  float *output;
  int64_t blocks, band;
} depthwise_job_t;

/* The filter ([c][1][kh][kw]) as the blocks' taps: [c / 16][kh][kw][16]. */
static void pack_depthwise(void *context, float *out) {
  const conv_args_t *a = context;
  int64_t taps = a->kh * a->kw;
  for (int64_t cb = 0; cb < a->c / BLOCK; ++cb)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t l = 0; l < BLOCK; ++l)
        *out++ = a->filter[(cb * BLOCK + l) * taps + t];
}

/* Tasks (image and channel block, band of output rows). */
static void run_depthwise(void *context, const hpvm_rt_instance_range_t *range) {
  const depthwise_job_t *j = context;
  const hpvm_blocked_depthwise_t *d = &j->d;
  for (int64_t b = range->begin[0]; b < range->end[0]; ++b) {
    int64_t cb = b % j->blocks;
    for (int64_t band = range->begin[1]; band < range->end[1]; ++band) {
      int64_t y0 = band * j->band, y1 = y0 + j->band < d->oh ? y0 + j->band : d->oh;
      j->kernel(d, j->input + b * d->h * d->w * BLOCK, j->weights + cb * d->kh * d->kw * BLOCK,
                j->bias ? j->bias + cb * BLOCK : NULL,
                j->output + b * d->oh * d->ow * BLOCK, y0, y1);
    }
  }
}

/* A depthwise convolution on blocked input and output, natively: the weights packed once
 * (a constant; on each call otherwise), tasks of (image, channel block, band of rows). The
 * logistic activations over each finished row (the kernels' `activate`, as the NCHW path over
 * its finished planes). 0 when not done: no blocked loop for the chosen kernels, or no memory
 * for the weights. */
static int depthwise_native(const conv_args_t *a, hpvm_blocked_depthwise_fn kernel) {
  if (!kernel || hpvm_tensor_conv_memory_refused())
    return 0;
  size_t floats = (size_t)(a->c * a->kh * a->kw);
  int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {BLOCKED_LAYOUT_DEPTHWISE, a->c, a->kh, a->kw,
                                              0, 0, 0, 0};
  const float *weights = filter_constant(a)
                             ? hpvm_tensor_packed_constant(a->filter, NULL, layout, floats,
                                                           pack_depthwise, (void *)a)
                             : NULL;
  float *own = NULL;
  if (!weights) {
    own = hpvm_scratch_alloc(sizeof(float) * (floats ? floats : 1));
    if (!own)
      return 0;
    pack_depthwise((void *)a, own);
    weights = own;
  }
  int late = hpvm_tensor_activation_late(a->activation);
  float max = (float)a->activation_max;
  hpvm_blocked_depthwise_t d = {a->h,        a->w,        a->kh,    a->kw,   a->oh,
                                a->ow,       a->pad_h,    a->pad_w, a->stride_h,
                                a->stride_w, late ? HPVM_RT_TENSOR_IDENTITY : a->activation,
                                max,         late ? hpvm_tensor_kernels()->activate : NULL,
                                a->activation};
  int64_t blocks = a->c / BLOCK, planes = a->n * blocks;
  depthwise_job_t job = {d, kernel, a->input, weights, a->bias, a->output, blocks,
                         band_rows(planes, a->oh)};
  int64_t extents[2] = {planes, ceil_div(a->oh, job.band)};
  if (extents[0] > 0 && extents[1] > 0 && a->ow > 0)
    hpvm_tensor_run_grid(2, extents, run_depthwise, &job);
  hpvm_scratch_free(own);
  return 1;
}

/* ---- Native kernels of other convolutions ----------------------------------------------
 * A convolution on blocked operands by a kernel of its own: the kernels across filters
 * (conv_across.c, hpvm_tensor_conv_across_blocked) compute 16 or 32 consecutive filters of
 * one position per vector, which is a blocked output's vector, and read a blocked input's
 * channels in place; they refuse what they do not pay for (an NCHW output of 1 x 1 windows
 * over large images, without AVX-512). Return 1 when done, 0 when not handled (then the
 * fallback below converts). Whatever runs here gives hpvm_rt_tensor_conv2d_constant_f32's
 * bits on the NCHW tensors (tensor_blocked_test, tensor_test). */
static int conv_blocked_native(const conv_args_t *a) {
  /* A 1 x 1 image in blocks is the same bytes as in NCHW, and the NCHW call has its product
   * for 1 x 1 convolutions of 1 x 1 images (squeeze-excite's). Not without memory: the NCHW
   * call's plain loops then round each product where the generic kernels do (the blocked
   * path's own plain loops follow the kernels). */
  if (a->h * a->w == 1 && a->oh * a->ow == 1 && !hpvm_tensor_conv_memory_refused()) {
    conv_nchw(a, a->input, a->output);
    return 1;
  }
  return hpvm_tensor_conv_across_blocked(
      a->input, a->filter, a->bias, a->output, a->n, a->c, a->h, a->w, a->f, a->kh, a->kw,
      a->oh, a->ow, a->pad_h, a->pad_w, a->stride_h, a->stride_w, a->groups, a->activation,
      (float)a->activation_max, filter_constant(a), operand_layouts(a));
}

/* ---- The fallback ---------------------------------------------------------------------- */

/* The offset of (image, channel, y, x) in a tensor of `channels` planes of height x width,
 * blocked or NCHW. */
static inline int64_t offset_of(int blocked, int64_t image, int64_t channels, int64_t channel,
                                int64_t height, int64_t width, int64_t y, int64_t x) {
  if (blocked)
    return (((image * (channels / BLOCK) + channel / BLOCK) * height + y) * width + x) * BLOCK +
           channel % BLOCK;
  return ((image * channels + channel) * height + y) * width + x;
}

typedef struct plain_job_t {
  const conv_args_t *a;
  int fused;
} plain_job_t;

/* One task per output plane (image, filter): each sum over (channel, i, j) in order from +0,
 * the taps on padding skipped, one fused multiply-add a tap where the chosen kernels fuse
 * them (their order: mostly their bits too), then + bias and the activation. */
static void run_plain(void *context, const hpvm_rt_instance_range_t *range) {
  const plain_job_t *job = context;
  const conv_args_t *a = job->a;
  int in_blocked = (a->layouts & HPVM_RT_TENSOR_INPUT_BLOCKED) != 0;
  int out_blocked = (a->layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED) != 0;
  int64_t per_group_c = a->c / a->groups, per_group_f = a->f / a->groups;
  float max = (float)a->activation_max;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane) {
    int64_t image = plane / a->f, o = plane % a->f, group = o / per_group_f;
    for (int64_t y = 0; y < a->oh; ++y)
      for (int64_t x = 0; x < a->ow; ++x) {
        float sum = 0.0f;
        for (int64_t ch = 0; ch < per_group_c; ++ch)
          for (int64_t i = 0; i < a->kh; ++i)
            for (int64_t j = 0; j < a->kw; ++j) {
              int64_t iy = y * a->stride_h + i - a->pad_h, ix = x * a->stride_w + j - a->pad_w;
              if (iy < 0 || iy >= a->h || ix < 0 || ix >= a->w)
                continue;
              float wv = a->filter[((o * per_group_c + ch) * a->kh + i) * a->kw + j];
              float xv = a->input[offset_of(in_blocked, image, a->c, group * per_group_c + ch,
                                            a->h, a->w, iy, ix)];
              sum = job->fused ? fmaf(wv, xv, sum) : sum + wv * xv;
            }
        a->output[offset_of(out_blocked, image, a->f, o, a->oh, a->ow, y, x)] =
            hpvm_tensor_activate(sum + (a->bias ? a->bias[o] : 0.0f), a->activation, max);
      }
  }
}

/* Blocked operands converted to NCHW scratch around hpvm_rt_tensor_conv2d_constant_f32: its
 * bits by construction. Without scratch memory, the plain loops over the operands as they
 * lie. */
static void conv_fallback(const conv_args_t *a) {
  int in_blocked = (a->layouts & HPVM_RT_TENSOR_INPUT_BLOCKED) != 0;
  int out_blocked = (a->layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED) != 0;
  int64_t in_floats = a->n * a->c * a->h * a->w, out_floats = a->n * a->f * a->oh * a->ow;
  int refused = hpvm_tensor_conv_memory_refused();
  float *in = in_blocked && !refused
                  ? hpvm_scratch_alloc(sizeof(float) * (size_t)(in_floats ? in_floats : 1))
                  : NULL;
  float *out = out_blocked && !refused
                   ? hpvm_scratch_alloc(sizeof(float) * (size_t)(out_floats ? out_floats : 1))
                   : NULL;
  if ((in_blocked && !in) || (out_blocked && !out)) {
    hpvm_scratch_free(in);
    hpvm_scratch_free(out);
    plain_job_t job = {a, hpvm_tensor_kernels()->depthwise != hpvm_tensor_depthwise_generic};
    int64_t extents[2] = {a->n * a->f, 1};
    if (extents[0] > 0)
      hpvm_tensor_run_grid(1, extents, run_plain, &job);
    return;
  }
  if (in_blocked)
    reorder(a->input, in, a->n, a->c, a->h * a->w, 0);
  conv_nchw(a, in_blocked ? in : a->input, out_blocked ? out : a->output);
  if (out_blocked)
    reorder(out, a->output, a->n, a->f, a->oh * a->ow, 1);
  hpvm_scratch_free(in);
  hpvm_scratch_free(out);
}

void hpvm_rt_tensor_conv2d_blocked_f32(const float *input, const float *filter,
                                       const float *bias, float *output, int64_t n, int64_t c,
                                       int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw,
                                       int64_t oh, int64_t ow, int64_t pad_h, int64_t pad_w,
                                       int64_t stride_h, int64_t stride_w, int64_t groups,
                                       int64_t activation, double activation_max,
                                       int64_t layouts) {
  conv_args_t a = {input, filter, bias,     output,   n,      c,          h,
                   w,     f,      kh,       kw,       oh,     ow,         pad_h,
                   pad_w, stride_h, stride_w, groups, activation, activation_max, layouts};
  if (!conv_valid("hpvm_rt_tensor_conv2d_blocked_f32", &a))
    return;
  if (operand_layouts(&a) == 0) {
    conv_nchw(&a, input, output);
    return;
  }
  if (n * f * oh * ow == 0)
    return;
  int both =
      operand_layouts(&a) == (HPVM_RT_TENSOR_INPUT_BLOCKED | HPVM_RT_TENSOR_OUTPUT_BLOCKED);
  if (both && groups == c && f == c && depthwise_native(&a, blocked_kernels().depthwise))
    return;
  if (conv_blocked_native(&a))
    return;
  conv_fallback(&a);
}
