/* 2-D convolutions of the CPU in f32 (hpvm.tensor.conv2d, called by the code
 * convert-hpvm-tensor-to-linalg makes). Depthwise convolutions (one input channel per group)
 * run a kernel per plane; stride-1 convolutions a direct kernel over blocks of filters x
 * consecutive positions, or, for outputs narrower than a block, across filters; strided ones
 * the tap lists of conv_taps.c with nothing skipped; the rest as products (gemm.c). Taps that
 * only read padding are dropped first. Constant filters are packed once (constants.c).
 *
 * These calls cannot fail: without memory a task computes its block unpacked, and without the
 * thread pool the tasks run on the calling thread. */
#include "kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

#include <stdlib.h>
#include <string.h>

#define ceil_div hpvm_tensor_ceil_div

typedef struct depthwise_t {
  const float *input, *filter, *bias;
  float *output;
  int64_t activation;
  float activation_max;
  int64_t images, channels, height, width, kernel_h, kernel_w, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w;
  /* The grid's instances are groups of 16 planes (the kernel of 16 planes at once), not
   * planes: the pool's ranges may be shorter than 16. */
  int lanes;
} depthwise_t;

/* Planes [plane, plane + 16) through the kernel of 16 planes at once. */
static void depthwise_lanes(const depthwise_t *d, const hpvm_tensor_kernels_t *kernels,
                            int64_t plane, int logistic, float *scratch) {
  int32_t offset[16], taps[16];
  float bias[16];
  int64_t window = d->kernel_h * d->kernel_w;
  for (int l = 0; l < 16; ++l) {
    int64_t c = (plane + l) % d->channels;
    offset[l] = (int32_t)(l * d->height * d->width);
    taps[l] = (int32_t)(c * window);
    bias[l] = d->bias ? d->bias[c] : 0.0f;
  }
  float *out = d->output + plane * d->out_h * d->out_w;
  kernels->depthwise_lanes(d->input + plane * d->height * d->width, offset, d->height, d->width,
                           d->filter, taps, bias, d->kernel_h, d->kernel_w, out, d->out_h,
                           d->out_w, d->pad_h, d->pad_w, d->stride_h, d->stride_w,
                           logistic ? HPVM_RT_TENSOR_IDENTITY : d->activation,
                           d->activation_max, scratch);
  if (logistic)
    kernels->activate(out, 16 * d->out_h * d->out_w, d->activation, d->activation_max);
}

static void run_depthwise(void *context, const hpvm_rt_instance_range_t *range) {
  const depthwise_t *d = context;
  const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
  hpvm_tensor_depthwise_fn kernel = kernels->depthwise;
  /* The logistic activations over each finished plane (in the cache), with the widest
   * vectors the CPU has: the depthwise kernel's own are 8 floats wide. */
  int logistic = hpvm_tensor_activation_late(d->activation);
  int64_t floats = hpvm_tensor_depthwise_scratch(d->width, d->kernel_h, d->kernel_w, d->out_h,
                                                 d->out_w, d->pad_w, d->stride_h, d->stride_w);
  /* Zeroed once: every plane writes the same positions (the padding stays zero). Without
   * memory, or for a window too large, the kernel runs its scalar loops. */
  float *scratch = floats ? hpvm_scratch_alloc(sizeof(float) * (size_t)floats) : NULL;
  if (scratch)
    memset(scratch, 0, sizeof(float) * (size_t)floats);
  int64_t plane = range->begin[0], end = range->end[0];
  if (d->lanes) {
    int64_t padded = hpvm_tensor_depthwise_lanes_scratch(d->height, d->width, d->pad_h,
                                                         d->pad_w, d->stride_h, d->stride_w,
                                                         d->kernel_h, d->kernel_w, d->out_h,
                                                         d->out_w);
    float *lanes = hpvm_scratch_alloc(sizeof(float) * (size_t)padded);
    int64_t total = d->images * d->channels;
    plane *= 16;
    end = end * 16 < total ? end * 16 : total;
    for (; lanes && plane + 16 <= end; plane += 16)
      depthwise_lanes(d, kernels, plane, logistic, lanes);
    hpvm_scratch_free(lanes);
  }
  for (; plane < end; ++plane) {
    int64_t c = plane % d->channels;
    kernel(d->input + plane * d->height * d->width, d->height, d->width,
           d->filter + c * d->kernel_h * d->kernel_w, d->kernel_h, d->kernel_w,
           d->output + plane * d->out_h * d->out_w, d->out_h, d->out_w, d->pad_h, d->pad_w,
           d->stride_h, d->stride_w, d->bias ? d->bias[c] : 0.0f,
           logistic ? HPVM_RT_TENSOR_IDENTITY : d->activation, d->activation_max, scratch);
    if (logistic)
      kernels->activate(d->output + plane * d->out_h * d->out_w, d->out_h * d->out_w,
                        d->activation, d->activation_max);
  }
  hpvm_scratch_free(scratch);
}

/* Stride-1 convolutions run directly over blocks of MR filters x NR output columns, the
 * filters packed once per call. Without padding (and on rows of 4 blocks or more) the kernel
 * reads the image itself (the last block of a row, which would read past it, from a small
 * zero-filled copy); otherwise each task first pads the rows of the image it needs (all
 * channels of a group) into a slab. No im2col matrix is made: for the small filter counts of
 * early layers, packing it cost more than the products. A task is (image, group, rows, a range
 * of whole NR-column blocks). */
typedef struct direct_t {
  const float *input, *weights, *bias;
  /* The filters packed as [group][filter block][channel][kh][kw][mr] (NULL without memory),
   * mr the block of filters of `kernel` (the kernels' direct or direct_wide). */
  const float *packed;
  hpvm_tensor_conv_direct_fn kernel;
  int64_t mr;
  float *output;
  /* The kernels' activation; `late`: a logistic one (or identity), applied to each block as it
   * leaves the kernel, while it is in the cache. */
  int64_t activation, late;
  float activation_max;
  int64_t channels, height, width, filters, kernel_h, kernel_w, out_h, out_w, pad_h, pad_w;
  int64_t groups, per_group_c, per_group_f, filter_blocks, rows_per_task, row_blocks, plane_w;
  int64_t cols_per_task, col_blocks;
  /* The group's filters in filter_tasks ranges of filters_per_task (a multiple of MR). */
  int64_t filters_per_task, filter_tasks;
} direct_t;

/* Plain loops for one task's block when a slab cannot be allocated. */
static void direct_unpacked(const direct_t *d, int64_t image, int64_t group, int64_t y0,
                            int64_t rows, int64_t x_begin, int64_t x_end, int64_t o_begin,
                            int64_t o_end) {
  for (int64_t o = group * d->per_group_f + o_begin; o < group * d->per_group_f + o_end; ++o)
    for (int64_t y = y0; y < y0 + rows; ++y)
      for (int64_t x = x_begin; x < x_end; ++x) {
        float sum = 0.0f;
        for (int64_t ch = 0; ch < d->per_group_c; ++ch)
          for (int64_t i = 0; i < d->kernel_h; ++i)
            for (int64_t j = 0; j < d->kernel_w; ++j) {
              int64_t iy = y + i - d->pad_h, ix = x + j - d->pad_w;
              if (iy >= 0 && iy < d->height && ix >= 0 && ix < d->width)
                sum += d->input[((image * d->channels + group * d->per_group_c + ch) *
                                     d->height + iy) * d->width + ix] *
                       d->weights[((o * d->per_group_c + ch) * d->kernel_h + i) *
                                      d->kernel_w + j];
            }
        d->output[((image * d->filters + o) * d->out_h + y) * d->out_w + x] =
            hpvm_tensor_activate(sum + (d->bias ? d->bias[o] : 0.0f),
                                 d->late != HPVM_RT_TENSOR_IDENTITY ? d->late : d->activation,
                                 d->activation_max);
      }
}

/* Filters f0 .. f1 - 1 of the group (f0 a multiple of MR) at one block of `cols` (<= NR)
 * positions, from `src` laid out as the kernel wants it (its row src_y and column src_x being
 * the window's origin). `out` is the block's first output of the group's first filter; filter
 * r's is out[r * out_plane]. */
static void direct_filters(const direct_t *d, hpvm_tensor_conv_direct_fn kernel,
                           const float *src, int64_t plane_h, int64_t plane_w, int64_t src_y,
                           int64_t src_x, float *out, int64_t out_plane, int64_t group,
                           int64_t cols, int64_t f0, int64_t f1) {
  int64_t window = d->kernel_h * d->kernel_w;
  kernel(src, d->per_group_c, plane_h, plane_w,
         d->packed + (group * d->filter_blocks + f0 / d->mr) * d->per_group_c * window *
                         d->mr,
         d->kernel_h, d->kernel_w, out + f0 * out_plane, out_plane, src_y, src_x, f1 - f0, cols,
         d->bias ? d->bias + group * d->per_group_f + f0 : NULL, d->activation,
         d->activation_max);
  if (d->late != HPVM_RT_TENSOR_IDENTITY) {
    hpvm_tensor_activate_fn activate = hpvm_tensor_kernels()->activate;
    for (int64_t r = f0; r < f1; ++r)
      activate(out + r * out_plane, cols, d->late, d->activation_max);
  }
}

/* How many filters the direct kernel takes per pass over a task's positions: their packed
 * weights stay in the cache (about 512 KiB) through the pass, instead of all the group's
 * weights streaming from memory for each block of positions. A multiple of MR.
 *
 * Pointwise layers of at most 32 channels whose output outgrows the second-level cache (more
 * than 1 MiB an image) take one block of filters per pass: a few multiply-adds per output,
 * they are bound by the stores, and a block of positions written to every filter's plane at
 * once is as many streams of cold lines as filters, more than the prefetchers follow; a pass
 * per block writes MR planes along their rows. One thread, a fresh output each call: 16 ->
 * 96 filters at 112 x 112 1.49 -> 0.74 ms, 24 -> 144 at 56 x 56 0.36 -> 0.21 (64 channels
 * and more lose: their input block, read again per pass, costs more than the stores). */
static int64_t filters_per_pass(const direct_t *d) {
  int64_t window = d->kernel_h * d->kernel_w;
  int64_t output_bytes = d->filters * d->out_h * d->out_w * (int64_t)sizeof(float);
  if (window == 1 && d->per_group_c <= 32 && output_bytes > (1 << 20))
    return d->mr;
  int64_t bytes = d->per_group_c * window * (int64_t)sizeof(float);
  int64_t fit = (512 * 1024 / (bytes > 0 ? bytes : 1)) / d->mr * d->mr;
  return fit > d->mr ? fit : d->mr;
}

/* Rows narrower than a block, with too few filters for the kernel across filters
 * (conv_across.c): the task's padded rows lie end to end in the slab (row width
 * plane_w), and the direct kernel runs over blocks of NR consecutive slab positions, spanning
 * rows, the positions past out_w on a row computed and dropped. Each block goes through a
 * tile. */
static void direct_flat(const direct_t *d, const float *slab, int64_t slab_h, int64_t plane_w,
                        float *out, int64_t rows, int64_t group) {
  float tile[HPVM_TENSOR_DIRECT_MR_WIDE * HPVM_TENSOR_NR];
  int64_t out_plane = d->out_h * d->out_w, window = d->kernel_h * d->kernel_w;
  int64_t end = (rows - 1) * plane_w + d->out_w; /* one past the last position used */
  for (int64_t p = 0; p < end; p += HPVM_TENSOR_NR)
    for (int64_t fb = 0; fb < d->filter_blocks; ++fb) {
      int64_t live = d->per_group_f - fb * d->mr;
      if (live > d->mr)
        live = d->mr;
      const float *bias = d->bias ? d->bias + group * d->per_group_f + fb * d->mr
                                  : NULL;
      d->kernel(slab, d->per_group_c, slab_h, plane_w,
                d->packed + (group * d->filter_blocks + fb) * d->per_group_c * window *
                                d->mr,
                d->kernel_h, d->kernel_w, tile, HPVM_TENSOR_NR, 0, p, live, HPVM_TENSOR_NR,
                bias, d->activation, d->activation_max);
      if (d->late != HPVM_RT_TENSOR_IDENTITY)
        hpvm_tensor_kernels()->activate(tile, live * HPVM_TENSOR_NR, d->late,
                                        d->activation_max);
      float *filters = out + fb * d->mr * out_plane;
      for (int64_t pos = p; pos < p + HPVM_TENSOR_NR && pos < end;) {
        int64_t y = pos / plane_w, x = pos % plane_w;
        int64_t run = plane_w - x < p + HPVM_TENSOR_NR - pos ? plane_w - x
                                                              : p + HPVM_TENSOR_NR - pos;
        int64_t valid = x < d->out_w ? (d->out_w - x < run ? d->out_w - x : run) : 0;
        for (int64_t r = 0; r < live && valid > 0; ++r)
          memcpy(filters + r * out_plane + y * d->out_w + x, tile + r * HPVM_TENSOR_NR + pos - p,
                 sizeof(float) * (size_t)valid);
        pos += run;
      }
    }
}

/* rows x `width` floats from src (rows `stride` apart) end to end into dst, the first `live`
 * of each row, zeros after them. Inline copies of whole rows: a call to memcpy per channel
 * cost a quarter of the products of mobilenet's shallow pointwise layers. The rows' next
 * `width` floats are prefetched (the next block's copy). */
static void copy_columns(float *dst, int64_t width, const float *src, int64_t stride,
                         int64_t live, int64_t rows) {
  if (live == width && width % 8 == 0) {
    for (int64_t r = 0; r < rows; ++r, dst += width, src += stride) {
      /* The run the next block of the row copies, asked for now: it arrives while the kernel
       * works on this one (one thread, loaded machine, alternated: mobilenet_v2's 144 -> 24
       * at 56 x 56 0.52-0.62 -> 0.43 ms, resnet50's 256 -> 64 2.3-2.7 -> 1.25 ms). */
      __builtin_prefetch(src + width);
      __builtin_prefetch(src + width + 16);
      __builtin_prefetch(src + 2 * width - 1);
      for (int64_t x = 0; x < width; x += 8) {
        float chunk[8];
        memcpy(chunk, src + x, sizeof(chunk));
        memcpy(dst + x, chunk, sizeof(chunk));
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r, dst += width, src += stride) {
    memcpy(dst, src, sizeof(float) * (size_t)live);
    memset(dst + live, 0, sizeof(float) * (size_t)(width - live));
  }
}

static void run_direct(void *context, const hpvm_rt_instance_range_t *range) {
  const direct_t *d = context;
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  hpvm_tensor_conv_direct_fn kernel = d->kernel;
  int64_t out_plane = d->out_h * d->out_w;
  /* In place only where most blocks of a row are (narrow rows: copying each block's window
   * would cost more than the slab); rows narrower than a block lie end to end. Wide rows go
   * in blocks of the kernel's widest (direct_nr), flat ones in blocks of NR. */
  int flat = d->out_w < HPVM_TENSOR_NR;
  int64_t nr = flat ? HPVM_TENSOR_NR : k->direct_nr;
  int64_t tail_w = nr + d->kernel_w - 1;
  int padded = flat || d->pad_h > 0 || d->pad_w > 0 || d->width < 4 * tail_w;
  int64_t flat_w = d->width + 2 * d->pad_w;
  /* Pointwise layers read their input in place, each block's next columns prefetched, except
   * where the columns' copy is shared by many filters (more than 192), where a block's columns
   * of every channel outgrow the first-level cache (more than 384 channels: the copy streams,
   * scattered lines do not; 512 -> 128 at 28 x 28 ran 5-10% slower in place), or where input
   * and output planes would alias in the cache's 4 KiB pages (planes of a multiple of 1 KiB:
   * a load waits for the previous filters' stores to the same page offset; 112 x 112 planes,
   * 16 -> 96 filters, ran 1.5x slower in place). One thread: 144 -> 24 filters at 56 x 56
   * 88 -> 123 GFLOP/s, 120 -> 40 at 28 x 28 102 -> 124, 384 -> 64 at 14 x 14 132 -> 138-161. */
  int in_place = d->kernel_h == 1 && d->kernel_w == 1 && d->per_group_f <= 192 &&
                 d->per_group_c <= 384 &&
                 d->height * d->width * (int64_t)sizeof(float) % 1024 != 0;
  for (int64_t task = range->begin[0]; task < range->end[0]; ++task) {
    int64_t f_begin = task % d->filter_tasks * d->filters_per_task;
    int64_t f_end = d->per_group_f - f_begin < d->filters_per_task ? d->per_group_f
                                                                   : f_begin + d->filters_per_task;
    int64_t chunk = task / d->filter_tasks % d->col_blocks;
    int64_t rest = task / d->filter_tasks / d->col_blocks;
    int64_t block = rest % d->row_blocks, problem = rest / d->row_blocks;
    int64_t image = problem / d->groups, group = problem % d->groups;
    int64_t y0 = block * d->rows_per_task;
    int64_t rows = d->out_h - y0 < d->rows_per_task ? d->out_h - y0 : d->rows_per_task;
    int64_t x_begin = chunk * d->cols_per_task;
    int64_t x_end = d->out_w - x_begin < d->cols_per_task ? d->out_w : x_begin + d->cols_per_task;
    /* Flat slabs: the rows the windows read, then zero rows for the last block's reach. */
    int64_t slab_h = flat      ? rows + d->kernel_h - 1 + (tail_w + flat_w - 1) / flat_w
                     : padded ? rows + d->kernel_h - 1
                              : d->kernel_h;
    int64_t slab_w = flat ? flat_w : padded ? d->plane_w : tail_w;
    float *slab =
        d->packed ? hpvm_scratch_alloc(sizeof(float) * (size_t)(d->per_group_c * slab_h * slab_w))
                  : NULL;
    if (!slab) {
      direct_unpacked(d, image, group, y0, rows, x_begin, x_end, f_begin, f_end);
      continue;
    }
    const float *planes =
        d->input + (image * d->channels + group * d->per_group_c) * d->height * d->width;
    /* The output of the group's first filter at row y0. */
    float *out = d->output + (image * d->filters + group * d->per_group_f) * out_plane +
                 y0 * d->out_w;
    if (padded) {
      for (int64_t ch = 0; ch < d->per_group_c; ++ch) {
        const float *plane = planes + ch * d->height * d->width;
        for (int64_t sy = 0; sy < slab_h; ++sy) {
          float *row = slab + (ch * slab_h + sy) * slab_w;
          int64_t iy = y0 + sy - d->pad_h;
          memset(row, 0, sizeof(float) * (size_t)slab_w);
          if (iy >= 0 && iy < d->height && sy < rows + d->kernel_h - 1)
            memcpy(row + d->pad_w, plane + iy * d->width, sizeof(float) * (size_t)d->width);
        }
      }
    }
    if (flat) {
      direct_flat(d, slab, slab_h, slab_w, out, rows, group);
      hpvm_scratch_free(slab);
      continue;
    }
    int64_t pass = filters_per_pass(d);
    for (int64_t f0 = f_begin; f0 < f_end; f0 += pass) {
      int64_t f1 = f_end - f0 < pass ? f_end : f0 + pass;
      for (int64_t y = y0; y < y0 + rows; ++y)
        for (int64_t x0 = x_begin; x0 < x_end; x0 += nr) {
          /* A last partial block moves back to end at x_end where the range holds a whole one
           * (its first columns computed twice, the same values): whole blocks keep the kernel's
           * accumulators in registers. */
          if (x_end - x0 < nr && x_end - x_begin >= nr)
            x0 = x_end - nr;
          int64_t cols = x_end - x0 < nr ? x_end - x0 : nr;
          float *block_out = out + (y - y0) * d->out_w + x0;
          if (padded) {
            direct_filters(d, kernel, slab, slab_h, d->plane_w, y - y0, x0, block_out,
                           out_plane, group, cols, f0, f1);
          } else if (d->kernel_h == 1 && d->kernel_w == 1 && !in_place) {
            /* Pointwise: the block's columns of every channel copied end to end first. Read
             * in place, each channel's run is a plane away from the last (12 KiB at 56 x 56):
             * a stride the prefetchers miss, and each load waited on the cache levels below
             * (resnet50's 1 x 1 layers ran at a third of their rate alone). */
            copy_columns(slab, tail_w, planes + y * d->width + x0, d->height * d->width,
                         d->width - x0 < tail_w ? d->width - x0 : tail_w, d->per_group_c);
            direct_filters(d, kernel, slab, 1, tail_w, 0, 0, block_out, out_plane, group, cols,
                           f0, f1);
          } else if (x0 + tail_w <= d->width) {
            /* The image itself: every column read lies on the row. */
            for (int64_t ch = 0; in_place && ch < d->per_group_c; ++ch) {
              const float *next = planes + ch * d->height * d->width + x0 + nr;
              __builtin_prefetch(next);
              __builtin_prefetch(next + 16);
            }
            direct_filters(d, kernel, planes, d->height, d->width, y, x0, block_out, out_plane,
                           group, cols, f0, f1);
          } else {
            /* The last block of a row: its window rows copied, zero-filled past the row. */
            int64_t live = d->width - x0;
            for (int64_t ch = 0; ch < d->per_group_c; ++ch)
              for (int64_t i = 0; i < d->kernel_h; ++i) {
                float *row = slab + (ch * slab_h + i) * tail_w;
                memcpy(row, planes + (ch * d->height + y + i) * d->width + x0,
                       sizeof(float) * (size_t)live);
                memset(row + live, 0, sizeof(float) * (size_t)(tail_w - live));
              }
            direct_filters(d, kernel, slab, slab_h, tail_w, 0, 0, block_out, out_plane, group,
                           cols, f0, f1);
          }
        }
    }
    hpvm_scratch_free(slab);
  }
}

/* The filters of a direct job in its kernel's layout (blocks of mr). */
static void pack_direct(void *context, float *out) {
  const direct_t *d = context;
  hpvm_tensor_pack_filter_blocks(d->weights, d->groups, d->per_group_f, d->per_group_c,
                                 d->kernel_h * d->kernel_w, d->mr, out);
}

/* `constant`: the filter is a constant of the program, packed once (constants.c). */
static void conv_direct(const float *input, const float *filter, const float *bias,
                        float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                        int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                        int64_t pad_w, int64_t groups, int64_t activation, float max,
                        int constant) {
  direct_t job;
  direct_t *d = &job;
  /* The wide block (24 accumulators: resnet50's 1 x 1 layers 10-25% faster, mobilenet's the
   * same or faster) where a group's blocks of 12 filters are at least 3/4 full (regnet's
   * groups of 16 filters fill 2 blocks of 6 better than 2 of 12). */
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  int64_t per_group = f / groups;
  int wide = k->direct_wide &&
             4 * per_group >= 3 * ceil_div(per_group, HPVM_TENSOR_DIRECT_MR_WIDE) *
                                  HPVM_TENSOR_DIRECT_MR_WIDE;
  int64_t block = wide ? HPVM_TENSOR_DIRECT_MR_WIDE : HPVM_TENSOR_MR;
  /* The logistic activations after each block, not in the kernels: their registers hold the
   * accumulators (the sigmoid inlined there made every convolution 1.5-2x slower). */
  int64_t late = hpvm_tensor_activation_late(activation) ? activation : HPVM_RT_TENSOR_IDENTITY;
  *d = (direct_t){input, filter, bias, NULL, wide ? k->direct_wide : k->direct, block,
                  output, late == HPVM_RT_TENSOR_IDENTITY ? activation : HPVM_RT_TENSOR_IDENTITY,
                  late, max,
                  c, h, w, f, kh, kw, oh, ow, pad_h, pad_w, groups,
                  c / groups, f / groups, ceil_div(f / groups, block), oh, 1,
                  ow + kw + HPVM_TENSOR_NR_WIDE, ceil_div(ow, HPVM_TENSOR_NR) * HPVM_TENSOR_NR, 1,
                  0, 1};
  int64_t weight_floats = groups * d->filter_blocks * d->per_group_c * kh * kw * block;
  float *own = NULL;
  if (constant && !hpvm_tensor_conv_memory_refused()) {
    int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {1, c, f, kh, kw, groups, block, 0};
    job.packed = hpvm_tensor_packed_constant(filter, NULL, layout, (size_t)weight_floats,
                                             pack_direct, d);
  }
  if (!job.packed && !hpvm_tensor_conv_memory_refused()) {
    own = hpvm_scratch_alloc(sizeof(float) * (size_t)weight_floats);
    if (own)
      pack_direct(d, own);
    job.packed = own;
  }
  int64_t threads = hpvm_rt_thread_count();
  /* Enough tasks for the pool: fewer rows per task, then column ranges down to the kernel's
   * widest block, then ranges of filters (rows of flat jobs are end to end: not for them),
   * then narrower columns. Below its widest block the kernel has half the accumulators
   * (mobilenet's 7 x 7 pointwise layers ran at 60 GFLOP/s in 16-column tasks). */
  while (d->rows_per_task > 1 && n * groups * ceil_div(oh, d->rows_per_task) < 4 * threads)
    d->rows_per_task = ceil_div(d->rows_per_task, 2);
  d->row_blocks = ceil_div(oh, d->rows_per_task);
  int64_t widest = hpvm_tensor_kernels()->direct_nr, tasks = n * groups * d->row_blocks;
  while (d->cols_per_task > widest &&
         ceil_div(d->cols_per_task / HPVM_TENSOR_NR, 2) * HPVM_TENSOR_NR >= widest &&
         tasks * ceil_div(ow, d->cols_per_task) < 4 * threads)
    d->cols_per_task = ceil_div(d->cols_per_task / HPVM_TENSOR_NR, 2) * HPVM_TENSOR_NR;
  tasks *= ceil_div(ow, d->cols_per_task);
  d->filters_per_task = d->filter_blocks * block;
  while (ow >= HPVM_TENSOR_NR && d->filters_per_task > block &&
         tasks * ceil_div(d->per_group_f, d->filters_per_task) < 4 * threads)
    d->filters_per_task = ceil_div(d->filters_per_task / block, 2) * block;
  d->filter_tasks = ceil_div(d->per_group_f, d->filters_per_task);
  tasks = n * groups * d->row_blocks * d->filter_tasks;
  while (d->cols_per_task > HPVM_TENSOR_NR && tasks * ceil_div(ow, d->cols_per_task) < 4 * threads)
    d->cols_per_task = ceil_div(d->cols_per_task / HPVM_TENSOR_NR, 2) * HPVM_TENSOR_NR;
  d->col_blocks = ceil_div(ow, d->cols_per_task);
  int64_t extents[2] = {tasks * d->col_blocks, 1};
  hpvm_tensor_run_grid(1, extents, run_direct, &job);
  hpvm_scratch_free(own);
}

int hpvm_tensor_conv_args_valid(const char *what, const float *input, const float *filter,
                                const float *output, int64_t n, int64_t c, int64_t h,
                                int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
                                int64_t ow, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                int64_t stride_w, int64_t groups, int64_t activation) {
  int64_t sizes[] = {n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w};
  if (!hpvm_tensor_sizes_valid(what, 11, sizes) || !input || !filter || !output ||
      !hpvm_tensor_activation_valid(what, activation))
    return 0;
  if (stride_h <= 0 || stride_w <= 0 || groups <= 0 || c % groups || f % groups ||
      oh != (h + 2 * pad_h - kh) / stride_h + 1 || ow != (w + 2 * pad_w - kw) / stride_w + 1) {
    hpvm_warning("%s: inconsistent shapes or parameters (input %lldx%lld"
                 "x%lldx%lld, %lld filters %lldx%lld, output %lldx%lld, stride %lldx%lld, %lld "
                 "groups); nothing computed",
                 what, (long long)n, (long long)c, (long long)h, (long long)w, (long long)f,
                 (long long)kh, (long long)kw, (long long)oh, (long long)ow,
                 (long long)stride_h, (long long)stride_w, (long long)groups);
    return 0;
  }
  return 1;
}

/* A filter's taps [i0, i0 + kh) x [j0, j0 + kw) of a window of src_kh x src_kw. */
typedef struct crop_t {
  const float *filter;
  int64_t planes, src_kh, src_kw, i0, j0, kh, kw; /* planes: filters x channels per group */
} crop_t;

static void crop_filter(void *context, float *out) {
  const crop_t *c = context;
  for (int64_t p = 0; p < c->planes; ++p)
    for (int64_t i = 0; i < c->kh; ++i)
      memcpy(out + (p * c->kh + i) * c->kw,
             c->filter + (p * c->src_kh + c->i0 + i) * c->src_kw + c->j0,
             sizeof(float) * (size_t)c->kw);
}

/* The taps of one axis that read the image for some output: [*first, *last]. */
static void live_taps(int64_t size, int64_t window, int64_t pad, int64_t stride, int64_t out,
                      int64_t *first, int64_t *last) {
  int64_t lo = pad - (out - 1) * stride, hi = pad + size - 1;
  *first = lo > 0 ? lo : 0;
  *last = hi < window - 1 ? hi : window - 1;
}

static void conv2d(const char *what, const float *input, const float *filter,
                   const float *bias, float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                   int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                   int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                   int64_t activation, double activation_max, int constant);

/* The pixels a strided 1 x 1 convolution reads, plane by plane (zero where they are padding). */
typedef struct pick_t {
  const float *input;
  float *picked;
  int64_t h, w, oh, ow, pad_h, pad_w, stride_h, stride_w;
} pick_t;

/* out[x] = row[x * stride] for x in [0, count): stride 2 on its own, so that the compiler
 * makes the even columns with shuffles. */
static void pick_columns(float *out, const float *row, int64_t count, int64_t stride) {
  if (stride == 2)
    for (int64_t x = 0; x < count; ++x)
      out[x] = row[2 * x];
  else
    for (int64_t x = 0; x < count; ++x)
      out[x] = row[x * stride];
}

static void run_pick(void *context, const hpvm_rt_instance_range_t *range) {
  const pick_t *p = context;
  /* The output columns [x0, x1) read the image; the others its padding. */
  int64_t x0 = (p->pad_w + p->stride_w - 1) / p->stride_w;
  int64_t x1 = p->w - 1 + p->pad_w >= 0 ? (p->w - 1 + p->pad_w) / p->stride_w + 1 : 0;
  x1 = x1 < p->ow ? x1 : p->ow;
  x0 = x0 < x1 ? x0 : x1;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane) {
    const float *in = p->input + plane * p->h * p->w;
    float *out = p->picked + plane * p->oh * p->ow;
    for (int64_t y = 0; y < p->oh; ++y, out += p->ow) {
      int64_t iy = y * p->stride_h - p->pad_h;
      if (iy < 0 || iy >= p->h) {
        memset(out, 0, sizeof(float) * (size_t)p->ow);
        continue;
      }
      memset(out, 0, sizeof(float) * (size_t)x0);
      pick_columns(out + x0, in + iy * p->w + x0 * p->stride_w - p->pad_w, x1 - x0,
                   p->stride_w);
      memset(out + x1, 0, sizeof(float) * (size_t)(p->ow - x1));
    }
  }
}

/* A strided 1 x 1 convolution (resnet's downsampling) as the pointwise one over the pixels it
 * reads, gathered first: the same sums, where the strided kernels ran it at a third of the
 * pointwise rate (resnet50's 1024 -> 2048 at 14 x 14: 9.0 -> 2.3 ms, one thread). 0 without
 * memory for the gathered pixels (nothing done). */
static int pointwise_picked(const char *what, const float *input, const float *filter,
                            const float *bias, float *output, int64_t n, int64_t c, int64_t h,
                            int64_t w, int64_t f, int64_t oh, int64_t ow, int64_t pad_h,
                            int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                            int64_t activation, double activation_max, int constant) {
  float *picked = hpvm_tensor_conv_memory_refused()
                      ? NULL
                      : hpvm_scratch_alloc(sizeof(float) * (size_t)(n * c * oh * ow));
  if (!picked)
    return 0;
  pick_t pick = {input, picked, h, w, oh, ow, pad_h, pad_w, stride_h, stride_w};
  int64_t extents[2] = {n * c, 1};
  hpvm_tensor_run_grid(1, extents, run_pick, &pick);
  conv2d(what, picked, filter, bias, output, n, c, oh, ow, f, 1, 1, oh, ow, 0, 0, 1, 1, groups,
         activation, activation_max, constant);
  hpvm_scratch_free(picked);
  return 1;
}

/* A 1 x 1 convolution of 1 x 1 images (squeeze-excite's): out[image][f] = the product of the
 * image's c values by the filter's, as a product of few rows by the filters transposed
 * ([c][f], packed once for a constant filter), run by the skinny kernel over the whole depth at
 * once: each sum the fused multiply-adds over the channels in order from zero, as the other
 * strategies', then + bias and the activation. The kernels across filters computed 12
 * positions for the one (576 -> 144: 31 -> 6 us, one thread). 0 without memory for the
 * transposed filters (nothing done). */
typedef struct vector_job_t {
  const float *input, *filter, *transposed, *bias;
  float *output;
  int64_t n, c, f, activation;
  float max;
} vector_job_t;

static void transpose_filter(void *context, float *out) {
  const vector_job_t *v = context;
  for (int64_t o = 0; o < v->f; ++o)
    for (int64_t ch = 0; ch < v->c; ++ch)
      out[ch * v->f + o] = v->filter[o * v->c + ch];
}

static void run_vector(void *context, const hpvm_rt_instance_range_t *range) {
  const vector_job_t *v = context;
  hpvm_tensor_skinny_fn skinny = hpvm_tensor_kernels()->skinny;
  for (int64_t block = range->begin[0]; block < range->end[0]; ++block) {
    int64_t j0 = block * HPVM_TENSOR_SKINNY_COLS;
    int64_t cols = v->f - j0 < HPVM_TENSOR_SKINNY_COLS ? v->f - j0 : HPVM_TENSOR_SKINNY_COLS;
    for (int64_t r0 = 0; r0 < v->n; r0 += HPVM_TENSOR_MR) {
      int64_t rows = v->n - r0 < HPVM_TENSOR_MR ? v->n - r0 : HPVM_TENSOR_MR;
      float *out = v->output + r0 * v->f + j0;
      skinny(rows, v->c, v->c, v->input + r0 * v->c, v->c, v->transposed + j0, v->f, out, v->f,
             cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
          out[r * v->f + j] = hpvm_tensor_activate(
              out[r * v->f + j] + (v->bias ? v->bias[j0 + j] : 0.0f), v->activation, v->max);
    }
  }
}

static int conv_vector(const float *input, const float *filter, const float *bias, float *output,
                       int64_t n, int64_t c, int64_t f, int64_t activation, float max,
                       int constant) {
  if (hpvm_tensor_conv_memory_refused() || c <= 0)
    return 0;
  vector_job_t job = {input, filter, NULL, bias, output, n, c, f, activation, max};
  const float *transposed = NULL;
  float *own = NULL;
  if (constant) {
    int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {6, c, f, 1, 1, 1, 0, 0};
    transposed = hpvm_tensor_packed_constant(filter, NULL, layout, (size_t)(c * f),
                                             transpose_filter, &job);
  }
  if (!transposed) {
    own = hpvm_scratch_alloc(sizeof(float) * (size_t)(c * f));
    if (!own)
      return 0;
    transpose_filter(&job, own);
    transposed = own;
  }
  job.transposed = transposed;
  int64_t extents[2] = {ceil_div(f, HPVM_TENSOR_SKINNY_COLS), 1};
  hpvm_tensor_run_grid(1, extents, run_vector, &job);
  hpvm_scratch_free(own);
  return 1;
}

static void conv2d(const char *what, const float *input, const float *filter,
                   const float *bias, float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                   int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                   int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                   int64_t activation, double activation_max, int constant) {
  if (!hpvm_tensor_conv_args_valid(what, input, filter, output, n, c, h, w, f, kh, kw, oh, ow,
                                   pad_h, pad_w, stride_h, stride_w, groups, activation))
    return;
  /* Taps that only ever read padding (a small image under a wide window: a 3 x 3 window
   * padded by 1 over a 1 x 1 image reads its center only) are dropped when the rest is a
   * convolution of symmetric padding: the same sums without the products by zero (resnet18
   * on 32 x 32 images: its last 3 x 3 convolutions read 1/9 of their weights). */
  int64_t i0, i1, j0, j1;
  live_taps(h, kh, pad_h, stride_h, oh, &i0, &i1);
  live_taps(w, kw, pad_w, stride_w, ow, &j0, &j1);
  if ((i0 > 0 || i1 < kh - 1 || j0 > 0 || j1 < kw - 1) && i0 <= i1 && j0 <= j1) {
    int64_t ckh = i1 - i0 + 1, ckw = j1 - j0 + 1, cpad_h = pad_h - i0, cpad_w = pad_w - j0;
    if (cpad_h >= 0 && cpad_w >= 0 && (h + 2 * cpad_h - ckh) / stride_h + 1 == oh &&
        (w + 2 * cpad_w - ckw) / stride_w + 1 == ow) {
      crop_t crop = {filter, f * (c / groups), kh, kw, i0, j0, ckh, ckw};
      size_t floats = (size_t)(f * (c / groups) * ckh * ckw);
      const float *cropped = NULL;
      float *own = NULL;
      if (constant) {
        /* The crop of a constant is a constant: made once, its address stable. */
        int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {3, f, c / groups, kh, kw, i0, j0,
                                                    ckh * kw + ckw};
        cropped = hpvm_tensor_packed_constant(filter, NULL, layout, floats, crop_filter, &crop);
      }
      if (!cropped) {
        own = hpvm_scratch_alloc(sizeof(float) * floats);
        if (own)
          crop_filter(&crop, own);
        cropped = own;
      }
      if (cropped) {
        conv2d(what, input, cropped, bias, output, n, c, h, w, f, ckh, ckw, oh, ow, cpad_h,
               cpad_w, stride_h, stride_w, groups, activation, activation_max, constant && !own);
        hpvm_scratch_free(own);
        return;
      }
    }
  }
  if (kh == 1 && kw == 1 && (stride_h > 1 || stride_w > 1) &&
      pointwise_picked(what, input, filter, bias, output, n, c, h, w, f, oh, ow, pad_h, pad_w,
                       stride_h, stride_w, groups, activation, activation_max, constant))
    return;
  float max = (float)activation_max;
  if (groups == c && f == c) {
    /* Narrow planes 16 at once, one per vector lane (AVX-512): a row of 7 fills a vector of
     * its own half, and a plane's fixed costs outweighed its sums (one thread: 960 planes of
     * 7 x 7, 3 x 3 0.060 -> 0.039 ms, 1152 with 5 x 5 and SiLU 0.198 -> 0.095; rows of 14
     * fill the plane kernel's vectors well: 10-25% slower this way). */
    int lanes = hpvm_tensor_kernels()->depthwise_lanes && ow <= 8;
    depthwise_t d = {input, filter, bias, output, activation, max, n, c, h, w, kh, kw, oh, ow,
                     pad_h, pad_w, stride_h, stride_w, lanes};
    int64_t extents[2] = {lanes ? ceil_div(n * c, 16) : n * c, 1};
    hpvm_tensor_run_grid(1, extents, run_depthwise, &d);
    return;
  }
  if (kh == 1 && kw == 1 && pad_h == 0 && pad_w == 0 && stride_h == 1 && stride_w == 1) {
    /* Pointwise: every image plane is one row of h * w columns. */
    w *= h, ow *= oh;
    h = oh = 1;
  }
  int stride1 = stride_h == 1 && stride_w == 1;
  /* Across filters: outputs narrower than a block of positions with enough filters per group;
   * with the wide AVX-512 kernel (32 filters x 12 positions, about 1.3-1.5x the direct
   * kernel's and 2-4x the tap lists' rate on resnet's 3 x 3 layers) every window of more than
   * one tap, at any stride, where its blocks of filters are at least 3/4 full (regnet's groups
   * of 16 filters ran 25-35% slower in half-empty blocks); and 1 x 1 windows over at most 64
   * positions (the 7 x 7 images of deep layers, whose rows of 49 fill the direct kernel's
   * vectors badly: 1.1-1.7x, one thread; over 14 x 14 it won and lost by turns, over 28 x 28
   * it lost 1.5x). */
  int64_t per_group_f = f / groups;
  int wide = hpvm_tensor_kernels()->filters_wide && (kh * kw > 1 || oh * ow <= 64) &&
             4 * per_group_f >=
                 3 * ceil_div(per_group_f, HPVM_TENSOR_FB_WIDE) * HPVM_TENSOR_FB_WIDE;
  int across = oh > 0 && ow > 0 && per_group_f >= 12 && (wide || (stride1 && ow < HPVM_TENSOR_NR));
  if (across || (stride1 && oh > 0 && ow > 0)) {
    /* Logistic activations are applied to each tile across filters, and to each block of the
     * direct kernel where the output outgrows the cache (efficientnet's 96 x 112 x 112 SiLU:
     * 1.43 -> 1.06 ms; on small outputs a pass over the finished planes is faster), the same
     * bits either way. */
    if (kh == 1 && kw == 1 && h * w == 1 && groups == 1 &&
        conv_vector(input, filter, bias, output, n, c, f, activation, max, constant))
      return;
    int planes_after =
        !across && hpvm_tensor_activation_late(activation) && n * f * oh * ow < (1 << 20);
    int64_t own = planes_after ? HPVM_RT_TENSOR_IDENTITY : activation;
    if (across)
      hpvm_tensor_conv_across(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                              pad_w, stride_h, stride_w, groups, own, max, constant, wide);
    else
      conv_direct(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w,
                  groups, own, max, constant);
    if (planes_after)
      hpvm_tensor_activate_planes(output, n * f, oh * ow, activation, max);
    return;
  }
  if (f / groups >= 4) {
    /* Strided: the approximate convolutions' tap lists with nothing skipped, 16 filters x 6
     * positions at any offsets; about 3x faster than packing im2col blocks for the product
     * below. */
    hpvm_tensor_conv_taps(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, activation, max,
                          HPVM_RT_TENSOR_KNOB_EXACT, 0, 0, constant);
    return;
  }
  hpvm_tensor_conv_im2col(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, activation, max);
}

void hpvm_rt_tensor_conv2d_f32(const float *input, const float *filter, const float *bias,
                               float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                               int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
                               int64_t groups, int64_t activation, double activation_max) {
  conv2d("hpvm_rt_tensor_conv2d_f32", input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow,
         pad_h, pad_w, stride_h, stride_w, groups, activation, activation_max, 0);
}

void hpvm_rt_tensor_conv2d_constant_f32(const float *input, const float *filter,
                                        const float *bias, float *output, int64_t n, int64_t c,
                                        int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw,
                                        int64_t oh, int64_t ow, int64_t pad_h, int64_t pad_w,
                                        int64_t stride_h, int64_t stride_w, int64_t groups,
                                        int64_t activation, double activation_max) {
  conv2d("hpvm_rt_tensor_conv2d_constant_f32", input, filter, bias, output, n, c, h, w, f, kh,
         kw, oh, ow, pad_h, pad_w, stride_h, stride_w, groups, activation, activation_max, 1);
}
