/* Convolutions across filters: each vector holds one output position of FB consecutive filters
 * (16, or 32 in two AVX-512 registers: the wide kernel), a block is PB positions x FB
 * filters, and each step broadcasts one input value per position against one vector of weights
 * per tap. With 32 filters x 12 positions the AVX-512 kernel keeps 24 accumulators and loads
 * 14 values per 24 multiply-adds, where the direct kernel (vectors of positions, conv.c) loads
 * 8 per 12 and reaches about half the multiply-add peak on 3 x 3 layers.
 *
 * Any stride: a position's window is found by its offset into the input, zero-padded once for
 * every task (the input itself without padding), so strided convolutions run here too. A
 * task is (chunk of images, group, block of output rows, range of filter blocks); it runs each
 * block of filters over every block of positions of the chunk, so that the block's packed
 * weights are read from the cache for all of them; where they outgrow the L1 cache (deep
 * layers), over chunks of ~8 KiB of them at a time, each block of positions carrying its sums
 * from chunk to chunk, while the next chunk's weights are prefetched a stripe per block (the
 * weights of a deep layer at batch 1 stream from memory). Every output is the sum the kernel
 * makes for it alone, in the order (channel, kernel row, kernel column), the order of every
 * other strategy: what a task, block or chunk holds changes no result.
 *
 * Blocked operands (hpvm_tensor_conv_across_blocked; hpvm_rt.h's NCHW16c, [n][c / 16][h][w][16])
 * run natively: a blocked input is zero-padded in its own layout, [n][c / 16][padded_h]
 * [padded_w][16], and the kernels' blocked instantiations read channel c of tap (i, j) at
 * (c / 16) * block plane + c % 16 + i * row + j * 16 from the position's offset (the 16 channels
 * of a pixel in one cache line, where NCHW reads each a plane away); a blocked output takes each
 * finished block as whole vectors of 16 filters, one store per position and vector, which the
 * kernel makes from its registers (through the tile only for the late activations and a last
 * block of 32 filters half full), where NCHW gathers each filter's positions out of the tile.
 * The same sums, so the same bits as the NCHW convolution, whatever the layouts. Only the
 * AVX-512 kernels have the blocked instantiations: elsewhere hpvm_tensor_conv_across_blocked
 * refuses (its caller reorders the operands around the NCHW convolution). */
#include "kernels.h"

#include "hpvm/hpvm_rt.h"

#include <stdlib.h>
#include <string.h>

#define ceil_div hpvm_tensor_ceil_div

typedef struct across_t {
  const float *input, *weights, *bias;
  /* The filters packed as [group][filter block][channel][kh][kw][fb] (zero past a group's
   * last filter), then the bias as [group][filter block][fb] (packed_bias; NULL: none). */
  const float *packed, *packed_bias;
  /* The filters each group's blocks hold when packed: filter_blocks * fb, or per_group_f with a
   * tail_kernel (its last block of 16). */
  int64_t packed_f;
  /* The input zero-padded, [image][channel][padded_h][padded_w] (blocked input:
   * [image][channel / 16][padded_h][padded_w][16]; the input itself without padding; NULL
   * without memory: the plain loops). */
  const float *padded;
  int64_t padded_h, padded_w;
  float *output;
  /* Floats from one position of a plane to the next in the input and in the output: 1 for NCHW,
   * 16 for blocked operands (HPVM_RT_TENSOR_BLOCK channels at each position). */
  int64_t in_step, out_step;
  /* The kernel's activation; `late`: a logistic one (or identity), applied to each tile before
   * it is scattered (the sigmoid in the kernel's registers made it 1.5-2x slower). */
  int64_t activation, late;
  float activation_max;
  int64_t channels, height, width, filters, kernel_h, kernel_w, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, groups, per_group_c, per_group_f;
  /* The kernel (16 filters) or wide_kernel (32, AVX-512), its block of filters and of
   * positions. */
  hpvm_tensor_conv_filters_fn kernel;
  hpvm_tensor_conv_filters_part_fn wide_kernel;
  /* hpvm_tensor_conv_across_blocked's kernel instead (NULL: wide_kernel or kernel), which also
   * stores a blocked output's vectors itself; tail_kernel (NULL: none), its kernel of 16
   * filters for a group's last block where that holds 16 (80 filters: 32 + 32 + 16, packed so,
   * where a last block of 32 half empty cost 1 x 1 layers 10-15%). */
  hpvm_tensor_conv_filters_out_fn out_kernel, tail_kernel;
  int64_t fb, pb, filter_blocks;
  /* The wide kernel's channels per call (per_group_c: all): deep layers go over the channels in
   * chunks, each block of positions carrying its sums from one chunk to the next, so that a
   * chunk's weights, read from memory for the first block of positions, are in the cache for
   * the others (not a whole block of filters, too large for it). */
  int64_t chunk;
  /* Tasks: `images` in chunks of images_per_task images, each of row_blocks blocks of
   * rows_per_task output rows, each of filter_tasks ranges of blocks_per_task filter blocks. */
  int64_t images, images_per_task, rows_per_task, row_blocks, blocks_per_task, filter_tasks;
} across_t;

/* The kernel of fb filters x pb positions for blocked operands (`blocked`: on blocked input),
 * or NULL: only the AVX-512 kernels have them (hpvm_tensor_conv_across_blocked refuses the
 * others, whose filters_wide is NULL). */
static hpvm_tensor_conv_filters_out_fn filters_kind(int blocked, int64_t fb, int64_t pb) {
#if defined(HPVM_TENSOR_HAVE_AVX512)
  return hpvm_tensor_conv_filters_kind_avx512(blocked, fb, pb);
#else
  (void)blocked, (void)fb, (void)pb;
  return NULL;
#endif
}

/* The filters in the kernels' layout, then the bias (see across_t). */
static void pack_across(void *context, float *out) {
  const across_t *a = context;
  int64_t fb = a->fb, window = a->kernel_h * a->kernel_w, cg = a->per_group_c, fg = a->per_group_f;
  float *dst = out;
  if (!a->tail_kernel)
    dst = hpvm_tensor_pack_filter_blocks(a->weights, a->groups, fg, cg, window, fb, out);
  for (int64_t g = 0; a->tail_kernel && g < a->groups; ++g) {
    const float *group = a->weights + g * fg * cg * window;
    dst = hpvm_tensor_pack_filter_blocks(group, 1, fg - 16, cg, window, fb, dst);
    dst = hpvm_tensor_pack_filter_blocks(group + (fg - 16) * cg * window, 1, 16, cg, window,
                                         16, dst);
  }
  for (int64_t i = 0; a->bias && i < a->groups * a->packed_f; ++i) {
    int64_t g = i / a->packed_f, o = i % a->packed_f;
    *dst++ = o < fg ? a->bias[g * fg + o] : 0.0f;
  }
}

/* Where the value of position `at` of plane `index` (image * planes + channel) lies in a tensor
 * of planes of `plane` positions: NCHW (step 1), or blocked (step 16: the index's block of 16
 * planes, then the position's 16 lanes; an image's planes come in whole blocks). */
static int64_t layout_at(int64_t step, int64_t index, int64_t plane, int64_t at) {
  return step == 1 ? index * plane + at : (index & ~15) * plane + at * 16 + (index & 15);
}

/* Output (image, filter o, y, x) by plain loops: the fallback without memory for the padded
 * input or the packed filters. The same sum in the same order as the kernels'. */
static float across_output(const across_t *a, int64_t image, int64_t o, int64_t y, int64_t x) {
  int64_t group = o / a->per_group_f;
  float sum = 0.0f;
  for (int64_t ch = 0; ch < a->per_group_c; ++ch)
    for (int64_t i = 0; i < a->kernel_h; ++i)
      for (int64_t j = 0; j < a->kernel_w; ++j) {
        int64_t iy = y * a->stride_h + i - a->pad_h, ix = x * a->stride_w + j - a->pad_w;
        float v = iy >= 0 && iy < a->height && ix >= 0 && ix < a->width
                      ? a->input[layout_at(a->in_step,
                                           image * a->channels + group * a->per_group_c + ch,
                                           a->height * a->width, iy * a->width + ix)]
                      : 0.0f;
        sum = __builtin_fmaf(v, a->weights[((o * a->per_group_c + ch) * a->kernel_h + i) *
                                               a->kernel_w + j],
                             sum);
      }
  return hpvm_tensor_activate(sum + (a->bias ? a->bias[o] : 0.0f),
                              a->late != HPVM_RT_TENSOR_IDENTITY ? a->late : a->activation,
                              a->activation_max);
}

/* One task's part of the output, by plain loops. */
static void across_unpacked(const across_t *a, int64_t first, int64_t images, int64_t group,
                            int64_t y0, int64_t rows, int64_t o_begin, int64_t o_end) {
  int64_t out_plane = a->out_h * a->out_w;
  for (int64_t i = first; i < first + images; ++i)
    for (int64_t o = group * a->per_group_f + o_begin; o < group * a->per_group_f + o_end; ++o)
      for (int64_t y = y0; y < y0 + rows; ++y)
        for (int64_t x = 0; x < a->out_w; ++x)
          a->output[layout_at(a->out_step, i * a->filters + o, out_plane, y * a->out_w + x)] =
              across_output(a, i, o, y, x);
}

/* The input's planes zero-padded into `out` (a task per plane; blocked input: per block of 16
 * planes, each position 16 floats). */
typedef struct pad_job_t {
  const across_t *a;
  float *out;
} pad_job_t;

static void pad_planes(void *context, const hpvm_rt_instance_range_t *range) {
  const pad_job_t *job = context;
  const across_t *a = job->a;
  int64_t s = a->in_step, width = a->width * s, pad_w = a->pad_w * s, padded_w = a->padded_w * s;
  for (int64_t p = range->begin[0]; p < range->end[0]; ++p) {
    const float *plane = a->input + p * a->height * width;
    float *out = job->out + p * a->padded_h * padded_w;
    memset(out, 0, sizeof(float) * (size_t)(a->pad_h * padded_w));
    for (int64_t y = 0; y < a->height; ++y) {
      float *row = out + (a->pad_h + y) * padded_w;
      memset(row, 0, sizeof(float) * (size_t)pad_w);
      memcpy(row + pad_w, plane + y * width, sizeof(float) * (size_t)width);
      memset(row + pad_w + width, 0, sizeof(float) * (size_t)pad_w);
    }
    memset(out + (a->pad_h + a->height) * padded_w, 0,
           sizeof(float) * (size_t)((a->padded_h - a->pad_h - a->height) * padded_w));
  }
}

/* Where each of the chunk's `count` positions (image, y, x), y in [y0, y0 + rows), reads its
 * window in the padded input (offset[], from the chunk's first image and the group's first
 * channel) and writes its output in a filter's plane (out[], from the chunk's first image; a
 * blocked output's from the block of 16 filters);
 * past count up to a whole block of positions, the last block's first position again
 * (computed and dropped). Worked out once per task, not per block of filters:
 * their divisions cost as much as a shallow layer's products. */
static void across_positions(const across_t *a, int64_t images, int64_t y0, int64_t rows,
                             int64_t *offset, int64_t *out) {
  int64_t count = 0, out_plane = a->out_h * a->out_w, s = a->in_step;
  int64_t image = a->channels * a->padded_h * a->padded_w;
  for (int64_t i = 0; i < images; ++i)
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < a->out_w; ++x, ++count) {
        offset[count] =
            i * image + ((y0 + y) * a->stride_h * a->padded_w + x * a->stride_w) * s;
        out[count] = i * a->filters * out_plane + ((y0 + y) * a->out_w + x) * a->out_step;
      }
  for (int64_t q = count; q % a->pb; ++q) {
    offset[q] = offset[count - 1 - (count - 1) % a->pb];
    out[q] = out[count - 1 - (count - 1) % a->pb];
  }
}

/* The tile ([position][fb]) of finished sums of block p of positions: the late activation,
 * then each position's filters to their planes (a blocked output's: each vector of 16 filters
 * of the tile to its block's plane whole; `live` then a multiple of 16). */
static void across_scatter(const across_t *a, float *tile, int64_t fb, float *filters,
                           const int64_t *out_at, int64_t p, int64_t count, int64_t live) {
  int64_t out_plane = a->out_h * a->out_w, pb = a->pb;
  int64_t live_q = count - p < pb ? count - p : pb;
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  if (a->late != HPVM_RT_TENSOR_IDENTITY)
    k->activate(tile, pb * fb, a->late, a->activation_max);
  if (a->out_step == 16) {
    for (int64_t q = 0; q < live_q; ++q)
      for (int64_t r = 0; r < live; r += 16)
        memcpy(filters + r * out_plane + out_at[p + q], tile + q * fb + r, 16 * sizeof(float));
    return;
  }
  /* Positions of one image are consecutive in its planes (out_at only grows). */
  if (k->scatter_tile && out_at[p + live_q - 1] - out_at[p] == live_q - 1) {
    k->scatter_tile(tile, fb, live_q, live, filters + out_at[p], out_plane);
    return;
  }
  for (int64_t q = 0; q < live_q; ++q) {
    float *position = filters + out_at[p + q];
    for (int64_t r = 0; r < live; ++r)
      position[r * out_plane] = tile[q * fb + r];
  }
}

/* Filter blocks [fb0, fb1) of the group over the task's `count` positions, from `src`: the
 * padded input at the task's first image and the group's first channel, `channel` floats from
 * one channel's plane to the next (blocked input: one block's; plane_w a row's floats).
 * `partial`: room for the sums of every block of positions (wide kernel in chunks of
 * channels). */
static void across_blocks(const across_t *a, const float *src, const int64_t *offset,
                          const int64_t *out_at, float *partial, int64_t count, int64_t first,
                          int64_t group, int64_t channel, int64_t plane_w, int64_t fb0,
                          int64_t fb1) {
  float tile[HPVM_TENSOR_FB_WIDE * HPVM_TENSOR_PB_WIDE];
  int64_t out_plane = a->out_h * a->out_w, window = a->kernel_h * a->kernel_w;
  int64_t fb = a->fb, pb = a->pb, channels = a->per_group_c;
  for (int64_t b = fb0; b < fb1; ++b) {
    int tail = a->tail_kernel && b == a->filter_blocks - 1;
    hpvm_tensor_conv_filters_out_fn out_kernel = tail ? a->tail_kernel : a->out_kernel;
    fb = tail ? 16 : a->fb;
    int64_t live = a->per_group_f - b * a->fb < fb ? a->per_group_f - b * a->fb : fb;
    int64_t at = group * a->packed_f + b * a->fb;
    const float *weights = a->packed + at * channels * window;
    const float *bias = a->packed_bias ? a->packed_bias + at : NULL;
    float *filters =
        a->output + (first * a->filters + group * a->per_group_f + b * a->fb) * out_plane;
    /* A blocked output's whole blocks of filters stored by the kernel itself (the late
     * activations want the tile). */
    int direct = out_kernel && a->out_step == 16 && live == fb &&
                 a->late == HPVM_RT_TENSOR_IDENTITY;
    if (!a->wide_kernel && !a->out_kernel) {
      for (int64_t p = 0; p < count; p += pb) {
        a->kernel(src, offset + p, channels, channel, plane_w, weights, a->kernel_h,
                  a->kernel_w, bias, a->activation, a->activation_max, tile);
        across_scatter(a, tile, fb, filters, out_at, p, count, live);
      }
      continue;
    }
    int64_t blocks = ceil_div(count, pb);
    for (int64_t c0 = 0; c0 < channels; c0 += a->chunk) {
      int64_t cc = channels - c0 < a->chunk ? channels - c0 : a->chunk;
      int64_t finish = c0 + cc == channels;
      /* The weights read next (the next chunk, or the next block's first), prefetched a
       * stripe per block of positions, so that memory streams them all the time. */
      const float *next = weights + (c0 + cc) * window * fb;
      int64_t next_taps = finish && b + 1 == fb1 ? 0 : a->chunk * window;
      int64_t stripe = ceil_div(next_taps, blocks);
      for (int64_t p = 0; p < count; p += pb) {
        float *sums = partial + p * fb;
        int64_t k = p / pb, taps = next_taps - k * stripe < stripe ? next_taps - k * stripe
                                                                     : stripe;
        /* One call over all the channels prefetches the weights ahead of its own. */
        int whole = a->chunk == channels;
        const float *ahead = whole ? weights + HPVM_TENSOR_WEIGHTS_AHEAD : next + k * stripe * fb;
        int64_t ahead_taps = whole ? channels * window : taps > 0 ? taps : 0;
        const float *in = src + (a->in_step == 1 ? c0 * channel : c0 / 16 * channel + c0 % 16);
        const float *w = weights + c0 * window * fb, *start = c0 ? sums : NULL;
        if (finish && direct)
          out_kernel(in, offset + p, cc, channel, plane_w, w, a->kernel_h, a->kernel_w,
                        start, 1, ahead, ahead_taps, bias, a->activation, a->activation_max,
                        filters, out_at + p, 16 * out_plane);
        else if (out_kernel)
          out_kernel(in, offset + p, cc, channel, plane_w, w, a->kernel_h, a->kernel_w,
                        start, finish, ahead, ahead_taps, bias, a->activation,
                        a->activation_max, finish ? tile : sums, NULL, 0);
        else
          a->wide_kernel(in, offset + p, cc, channel, plane_w, w, a->kernel_h, a->kernel_w,
                         start, finish, ahead, ahead_taps, bias, a->activation,
                         a->activation_max, finish ? tile : sums);
        if (finish && !direct)
          across_scatter(a, tile, fb, filters, out_at, p, count, live);
      }
    }
  }
}

static void run_across(void *context, const hpvm_rt_instance_range_t *range) {
  const across_t *a = context;
  for (int64_t task = range->begin[0]; task < range->end[0]; ++task) {
    int64_t filter_task = task % a->filter_tasks, rest = task / a->filter_tasks;
    int64_t row_block = rest % a->row_blocks, chunk = rest / a->row_blocks;
    int64_t group = chunk % a->groups, first = chunk / a->groups * a->images_per_task;
    int64_t images = a->images - first < a->images_per_task ? a->images - first
                                                            : a->images_per_task;
    int64_t y0 = row_block * a->rows_per_task;
    int64_t rows = a->out_h - y0 < a->rows_per_task ? a->out_h - y0 : a->rows_per_task;
    int64_t fb0 = filter_task * a->blocks_per_task;
    int64_t fb1 = fb0 + a->blocks_per_task < a->filter_blocks ? fb0 + a->blocks_per_task
                                                              : a->filter_blocks;
    int64_t count = images * rows * a->out_w, padded = ceil_div(count, a->pb) * a->pb;
    /* The positions' offsets, then their outputs' offsets, then room for their sums. */
    int64_t sums = a->chunk < a->per_group_c ? padded * a->fb : 0;
    int64_t *offset =
        a->padded ? hpvm_scratch_alloc(2 * sizeof(int64_t) * (size_t)padded +
                                       sizeof(float) * (size_t)sums)
                  : NULL;
    if (!offset) {
      int64_t o_end = fb1 * a->fb < a->per_group_f ? fb1 * a->fb : a->per_group_f;
      across_unpacked(a, first, images, group, y0, rows, fb0 * a->fb, o_end);
      continue;
    }
    /* A blocked input's group starts at a whole block of channels: the same offset. */
    int64_t plane = a->padded_h * a->padded_w, *out_at = offset + padded;
    across_positions(a, images, y0, rows, offset, out_at);
    across_blocks(a, a->padded + (first * a->channels + group * a->per_group_c) * plane, offset,
                  out_at, (float *)(out_at + padded), count, first, group, plane * a->in_step,
                  a->padded_w * a->in_step, fb0, fb1);
    hpvm_scratch_free(offset);
  }
}

/* The tasks of a job: chunks of images of about 96 positions (a block of filters then serves 8
 * blocks of positions), fewer images while the pool would have fewer than 4 tasks per thread;
 * then the filter blocks split over tasks, each copying the chunk's rows (one image of 7 x 7
 * at batch 1: otherwise one task); then blocks of rows of at least 96 positions (rows split
 * later: a block of positions cut by a block of rows is partly wasted). */
static int64_t across_tasks(across_t *a) {
  int64_t threads = hpvm_rt_thread_count(), positions = a->out_h * a->out_w;
  a->images_per_task = ceil_div(96, positions > 0 ? positions : 1);
  while (a->images_per_task > 1 &&
         ceil_div(a->images, a->images_per_task) * a->groups < 4 * threads)
    a->images_per_task = ceil_div(a->images_per_task, 2);
  int64_t chunks = ceil_div(a->images, a->images_per_task) * a->groups;
  a->blocks_per_task = a->filter_blocks;
  while (a->blocks_per_task > 1 &&
         chunks * ceil_div(a->filter_blocks, a->blocks_per_task) < 4 * threads)
    a->blocks_per_task = ceil_div(a->blocks_per_task, 2);
  a->filter_tasks = ceil_div(a->filter_blocks, a->blocks_per_task);
  a->rows_per_task = a->out_h;
  while (a->rows_per_task > 1 &&
         chunks * a->filter_tasks * ceil_div(a->out_h, a->rows_per_task) < 4 * threads &&
         ceil_div(a->rows_per_task, 2) * a->out_w >= 96)
    a->rows_per_task = ceil_div(a->rows_per_task, 2);
  a->row_blocks = ceil_div(a->out_h, a->rows_per_task);
  return chunks * a->row_blocks * a->filter_tasks;
}

/* The wide kernel's blocking: blocks of HPVM_TENSOR_PB_SHORT positions instead of
 * HPVM_TENSOR_PB_WIDE where a task's positions fill them better (the 7 x 7 outputs of deep
 * layers: 49 positions computed, not 60), and chunks of channels. The same sums either way. */
static void across_blocking(across_t *a, const hpvm_tensor_kernels_t *k) {
  int64_t images = a->images < a->images_per_task ? a->images : a->images_per_task;
  int64_t count = images * a->rows_per_task * a->out_w;
  int64_t wide = ceil_div(count, HPVM_TENSOR_PB_WIDE) * HPVM_TENSOR_PB_WIDE;
  int64_t short_ = ceil_div(count, HPVM_TENSOR_PB_SHORT) * HPVM_TENSOR_PB_SHORT;
  if (a->fb == HPVM_TENSOR_FB_WIDE && a->pb == HPVM_TENSOR_PB_WIDE && k->filters_short &&
      20 * short_ < 19 * wide) {
    a->pb = HPVM_TENSOR_PB_SHORT;
    if (a->out_kernel)
      a->out_kernel = filters_kind(a->in_step == 16, a->fb, a->pb);
    if (a->tail_kernel)
      a->tail_kernel = filters_kind(a->in_step == 16, HPVM_TENSOR_FB, a->pb);
    if (!a->out_kernel)
      a->wide_kernel = k->filters_short;
  }
  /* Chunks of ~8 KiB of weights once a block's outgrow 64 KiB: one thread, resnet18's 3 x 3
   * layers 1.0-1.2x, 1.3-1.4x where their weights come from memory (512 at 7 x 7: 1.83 -> 1.56
   * ms, 2.3 -> 1.73 ms cold); chunks of 32 KiB gained a third of that, of 2 KiB lost. */
  int64_t per_channel = a->kernel_h * a->kernel_w * a->fb * (int64_t)sizeof(float);
  enum { LIMIT = 64 * 1024, PIECE = 8 * 1024 };
  if (a->per_group_c * per_channel > LIMIT && count > a->pb)
    a->chunk = PIECE / per_channel > 0 ? PIECE / per_channel : 1;
  /* A blocked input's chunks never straddle a block of 16 channels (the kernels find channel
   * c of a chunk at c / 16 blocks and c % 16 lanes from its first): chunks that divide 16 (3 x
   * 3 windows: 8 channels, 9 KiB) or are multiples of it (per_group_c is one). */
  while (a->in_step == 16 && a->chunk % 16 && 16 % a->chunk)
    ++a->chunk;
}

/* The filters packed (once for constants), the input zero-padded, then the tasks. */
static void across_run(across_t *a, const hpvm_tensor_kernels_t *k, int constant) {
  int64_t c = a->channels, kh = a->kernel_h, kw = a->kernel_w, groups = a->groups;
  int64_t weight_floats = groups * a->packed_f * a->per_group_c * kh * kw;
  int64_t bias_floats = a->bias ? groups * a->packed_f : 0;
  float *own = NULL;
  int refused = hpvm_tensor_conv_memory_refused();
  if (constant && !refused) {
    /* A last block of 16 (tail_kernel) packs otherwise: -fb. */
    int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {5, c, a->filters, kh, kw, groups,
                                                a->tail_kernel ? -a->fb : a->fb, bias_floats};
    a->packed = hpvm_tensor_packed_constant(a->weights, a->bias, layout,
                                            (size_t)(weight_floats + bias_floats), pack_across,
                                            a);
  }
  if (!a->packed && !refused) {
    own = hpvm_scratch_alloc(sizeof(float) * (size_t)(weight_floats + bias_floats));
    if (own)
      pack_across(a, own);
    a->packed = own;
  }
  a->packed_bias = a->packed && a->bias ? a->packed + weight_floats : NULL;
  /* The input zero-padded once for every task (each task copied the rows it read before: the
   * filter blocks' tasks of one image the same rows each). */
  a->padded_h = a->height + 2 * a->pad_h, a->padded_w = a->width + 2 * a->pad_w;
  float *padded = NULL;
  if (a->packed && (a->pad_h > 0 || a->pad_w > 0)) {
    padded = hpvm_scratch_alloc(sizeof(float) *
                                (size_t)(a->images * c * a->padded_h * a->padded_w));
    pad_job_t job = {a, padded};
    int64_t planes[2] = {a->images * c / a->in_step, 1};
    if (padded)
      hpvm_tensor_run_grid(1, planes, pad_planes, &job);
    a->padded = padded;
  } else if (a->packed) {
    a->padded = a->input;
  }
  int64_t extents[2] = {across_tasks(a), 1};
  if (a->wide_kernel || a->out_kernel)
    across_blocking(a, k);
  hpvm_tensor_run_grid(1, extents, run_across, a);
  hpvm_scratch_free(padded);
  hpvm_scratch_free(own);
}

/* The job of a convolution across filters, FB filters per block (kernel and blocking set by the
 * caller). */
static across_t across_job(const float *input, const float *filter, const float *bias,
                           float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                           int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                           int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                           int64_t activation, float max, int64_t fb) {
  int64_t late = hpvm_tensor_activation_late(activation) ? activation : HPVM_RT_TENSOR_IDENTITY;
  return (across_t){
      .input = input, .weights = filter, .bias = bias, .output = output,
      .in_step = 1, .out_step = 1,
      .activation = late == HPVM_RT_TENSOR_IDENTITY ? activation : HPVM_RT_TENSOR_IDENTITY,
      .late = late, .activation_max = max,
      .channels = c, .height = h, .width = w, .filters = f, .kernel_h = kh, .kernel_w = kw,
      .out_h = oh, .out_w = ow, .pad_h = pad_h, .pad_w = pad_w, .stride_h = stride_h,
      .stride_w = stride_w, .groups = groups, .per_group_c = c / groups,
      .per_group_f = f / groups, .fb = fb, .filter_blocks = ceil_div(f / groups, fb),
      .packed_f = ceil_div(f / groups, fb) * fb,
      .chunk = c / groups, .images = n, .images_per_task = 1, .rows_per_task = oh,
      .row_blocks = 1, .blocks_per_task = 1, .filter_tasks = 1};
}

void hpvm_tensor_conv_across(const float *input, const float *filter, const float *bias,
                             float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                             int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                             int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                             int64_t activation, float max, int constant, int wide) {
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  across_t a = across_job(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, activation, max,
                          wide ? HPVM_TENSOR_FB_WIDE : HPVM_TENSOR_FB);
  a.kernel = wide ? NULL : k->filters;
  a.wide_kernel = wide ? k->filters_wide : NULL;
  a.pb = wide ? HPVM_TENSOR_PB_WIDE : k->filters_pb;
  across_run(&a, k, constant);
}

int hpvm_tensor_conv_across_blocked_pays(int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                         int64_t stride_h, int64_t stride_w,
                                         int64_t per_group_f, int64_t layouts) {
  /* A blocked output: 1.0-1.6x the fallback (the operands reordered around the NCHW
   * convolution) on every layer measured, one thread. An NCHW output goes through the tiles'
   * scatter as conv.c's across filters does: only where conv.c runs across filters too (or runs
   * a strided window's tap lists, slower), not over the planes of pointwise layers (16 -> 96
   * filters at 112 x 112: 0.47x the fallback, whose direct kernel writes the planes row by row;
   * 144 -> 32 at 56 x 56 lost 1.14x there) nor for the direct kernel's groups of 16 filters at
   * stride 1 (0.83x). */
  if (layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED)
    return 1;
  if (kh * kw == 1)
    return oh * ow <= 64;
  int narrow = 4 * per_group_f < 3 * ceil_div(per_group_f, HPVM_TENSOR_FB_WIDE) *
                                     HPVM_TENSOR_FB_WIDE;
  return !(narrow && stride_h == 1 && stride_w == 1 && ow >= HPVM_TENSOR_NR);
}

int hpvm_tensor_conv_across_blocked(const float *input, const float *filter, const float *bias,
                                    float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                                    int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                    int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                    int64_t stride_w, int64_t groups, int64_t activation,
                                    float max, int constant, int64_t layouts) {
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  int in_blocked = (layouts & HPVM_RT_TENSOR_INPUT_BLOCKED) != 0;
  int out_blocked = (layouts & HPVM_RT_TENSOR_OUTPUT_BLOCKED) != 0;
  int64_t per_group_f = f / groups;
  if (!k->filters_wide ||
      (layouts & ~(int64_t)(HPVM_RT_TENSOR_INPUT_BLOCKED | HPVM_RT_TENSOR_OUTPUT_BLOCKED)) ||
      (in_blocked && (c / groups) % HPVM_RT_TENSOR_BLOCK) ||
      (out_blocked && per_group_f % HPVM_RT_TENSOR_BLOCK) ||
      !hpvm_tensor_conv_across_blocked_pays(kh, kw, oh, ow, stride_h, stride_w, per_group_f,
                                            layouts))
    return 0;
  if (n <= 0 || f <= 0 || oh <= 0 || ow <= 0)
    return 1;
  /* Blocks of 32 filters where they are at least 3/4 full (as conv.c's choice of the wide
   * kernel), else of 16 (regnet's groups of 16 filters). */
  int64_t fb = 4 * per_group_f >= 3 * ceil_div(per_group_f, HPVM_TENSOR_FB_WIDE) *
                                      HPVM_TENSOR_FB_WIDE
                   ? HPVM_TENSOR_FB_WIDE
                   : HPVM_TENSOR_FB;
  int64_t pb = HPVM_TENSOR_PB_WIDE;
  across_t a = across_job(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, activation, max, fb);
  a.in_step = in_blocked ? HPVM_RT_TENSOR_BLOCK : 1;
  a.out_step = out_blocked ? HPVM_RT_TENSOR_BLOCK : 1;
  a.out_kernel = filters_kind(in_blocked, fb, pb);
  if (fb == HPVM_TENSOR_FB_WIDE && per_group_f % HPVM_TENSOR_FB_WIDE == HPVM_TENSOR_FB) {
    a.tail_kernel = filters_kind(in_blocked, HPVM_TENSOR_FB, pb);
    a.packed_f = per_group_f;
  }
  a.pb = pb;
  across_run(&a, k, constant);
  return 1;
}
