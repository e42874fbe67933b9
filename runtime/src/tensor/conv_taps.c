/* Convolutions through tap lists (hpvm_tensor_conv_taps): the driver behind the approximate
 * convolutions (approx.c) and the strided ones of conv.c (nothing skipped).
 *
 * One driver serves the three knobs. A convolution task is a list of taps times a list of
 * output positions over a slab (the input rows the task reads, all channels of its group,
 * zero-padded): a tap is one (channel, i, j) element of the window, given by its offset from
 * the window's origin in the slab; a position is the slab offset of its window's origin.
 * - Perforation keeps every tap and lists only the kept positions (rows y, or columns x, with
 *   y % rate != offset); the task then fills the skipped ones from their final neighbours.
 *   Skipped columns need their row only (a task holds whole rows); skipped rows need the rows
 *   above and below: the work is split by filters first, so that a task holds whole planes,
 *   and only where that leaves too few tasks by rows too, the skipped rows then filled by a
 *   second pass over the planes.
 * - Filter sampling keeps every position and lists only the kept taps, their weights scaled by
 *   rate / (rate - 1): K * (rate - 1) / rate multiply-adds per output instead of K.
 * The kernels (kernels_isa.inc) take both lists:
 * - across filters (taps_filters): 16 filters (two vectors) x 6 positions at any offsets, so
 *   any pattern of kept positions and any stride costs only the kept positions. The path of
 *   groups of 12 filters or more (the vectors mostly full, as hpvm_rt_tensor_conv2d_f32's
 *   narrow outputs), and of the rest where the next one cannot serve.
 * - across positions (taps_direct): 6 filters x 16 consecutive positions, for groups of fewer
 *   filters: along the kept rows (stride_w 1, perforated rows or filter sampling: a kept row
 *   is whole), or down the kept columns of a transposed slab (stride_h 1, perforated columns).
 * - scalar loops over the lists: groups of fewer than 4 filters where neither of those
 *   applies (strided depthwise convolutions...), as the vectors across filters would be mostly
 *   empty. Without memory for the lists or the slab, plain loops over the filters.
 * Depthwise convolutions run slower approximately than exactly (their own kernel keeps the
 * window in registers over whole planes; the tap lists pay a call per 16 outputs). */
#include "kernels.h"

#include "hpvm/hpvm_rt.h"

#include <stdlib.h>
#include <string.h>

typedef enum path_e { ACROSS_FILTERS, ACROSS_POSITIONS, SCALAR } path_t;

typedef struct approx_t {
  const float *input, *filter, *bias;
  float *output;
  int64_t activation;
  float activation_max;
  int64_t knob, rate, offset;
  int64_t channels, height, width, filters, kernel_h, kernel_w, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, groups, per_group_c, per_group_f;
  path_t path;
  /* Filters per kernel block (FB across filters, MR across positions, 1 scalar) and blocks
   * per group. */
  int64_t block, filter_blocks;
  /* Tasks: (image, group, a range of filter blocks, a range of output rows). */
  int64_t blocks_per_task, filter_tasks, rows_per_task, row_tasks;
  /* The slab: per_group_c planes of slab_h x slab_w floats (the same for every task, so that
   * the tap offsets are too); in place: the image itself, read where it lies (position lists
   * without padding: every window lies inside the image). */
  int64_t slab_h, slab_w;
  int in_place;
  /* Perforated columns across positions: the slab holds the task's rows transposed (slab row
   * c = padded input column c, slab_w >= the rows read), so that an output column's positions
   * are consecutive down it. */
  int transposed;
  /* The kept taps' slab offsets, and the weights packed [group][filter block][kept tap][block]
   * (zero past the last filter, scaled by `scale`); NULL without memory: unpacked loops. */
  int64_t taps;
  int64_t *tap;
  const float *weights;
  /* Across filters with a bias: the bias as [group][filter block][FB] (else NULL). */
  const float *packed_bias;
  /* The packed weights and bias when this call made them (freed at its end), else NULL. */
  float *own_weights;
  /* The filter and bias are constants of the program (packed once, kept). */
  int constant;
  /* rate / (rate - 1) for filter sampling, else 1. */
  float scale;
} approx_t;

static int without_memory; /* tests: hpvm_tensor_approx_without_memory */

void hpvm_tensor_approx_without_memory(int on) { without_memory = on; }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Whether output row y / column x / reduction element k is skipped (a plane of one row or
 * column keeps it: it has no neighbour to take it from). */
static int row_skipped(const approx_t *a, int64_t y) {
  return a->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS && a->out_h > 1 && y % a->rate == a->offset;
}

static int col_skipped(const approx_t *a, int64_t x) {
  return a->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS && a->out_w > 1 && x % a->rate == a->offset;
}

static int tap_skipped(const approx_t *a, int64_t k) {
  return a->knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER && k % a->rate == a->offset;
}

/* Without memory for the lists or the slab: the kept outputs of filters [o0, o1) (of the whole
 * filter tensor) at rows [y0, y0 + rows) of one image, with plain loops over the unpacked
 * filters (bounds checked per tap). */
static void unpacked_block(const approx_t *a, int64_t image, int64_t group, int64_t o0, int64_t o1,
                           int64_t y0, int64_t rows) {
  int64_t out_plane = a->out_h * a->out_w;
  const float *planes =
      a->input + (image * a->channels + group * a->per_group_c) * a->height * a->width;
  int sampled = a->knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER;
  for (int64_t o = o0; o < o1; ++o) {
    const float *weights = a->filter + o * a->per_group_c * a->kernel_h * a->kernel_w;
    float bias = a->bias ? a->bias[o] : 0.0f;
    float *out = a->output + (image * a->filters + o) * out_plane;
    for (int64_t y = y0; y < y0 + rows; ++y) {
      if (row_skipped(a, y))
        continue;
      for (int64_t x = 0; x < a->out_w; ++x) {
        if (col_skipped(a, x))
          continue;
        float sum = 0.0f;
        /* phase: k % rate, kept as k steps (no division per tap). */
        for (int64_t ch = 0, k = 0, phase = 0; ch < a->per_group_c; ++ch)
          for (int64_t i = 0; i < a->kernel_h; ++i)
            for (int64_t j = 0; j < a->kernel_w;
                 ++j, ++k, phase = phase + 1 < a->rate ? phase + 1 : 0) {
              int64_t iy = y * a->stride_h + i - a->pad_h, ix = x * a->stride_w + j - a->pad_w;
              if ((sampled && phase == a->offset) || iy < 0 || iy >= a->height || ix < 0 ||
                  ix >= a->width)
                continue;
              sum += planes[(ch * a->height + iy) * a->width + ix] * weights[k];
            }
        out[y * a->out_w + x] =
            hpvm_tensor_activate(sum * a->scale + bias, a->activation, a->activation_max);
      }
    }
  }
}

/* The slab of output rows [y0, y0 + rows): padded input rows y0 * stride_h + sy (sy <
 * slab_h) of each channel of the group, pad_w zero columns on the left, zeros past the row
 * (and in the rows past those the task reads). */
static void fill_slab(const approx_t *a, const float *planes, int64_t y0, int64_t rows,
                      float *slab) {
  int64_t used = (rows - 1) * a->stride_h + a->kernel_h;
  for (int64_t ch = 0; ch < a->per_group_c; ++ch) {
    const float *plane = planes + ch * a->height * a->width;
    for (int64_t sy = 0; sy < a->slab_h; ++sy) {
      float *row = slab + (ch * a->slab_h + sy) * a->slab_w;
      int64_t iy = y0 * a->stride_h + sy - a->pad_h;
      if (sy >= used || iy < 0 || iy >= a->height) {
        memset(row, 0, sizeof(float) * (size_t)a->slab_w);
        continue;
      }
      memset(row, 0, sizeof(float) * (size_t)a->pad_w);
      memcpy(row + a->pad_w, plane + iy * a->width, sizeof(float) * (size_t)a->width);
      memset(row + a->pad_w + a->width, 0,
             sizeof(float) * (size_t)(a->slab_w - a->pad_w - a->width));
    }
  }
}

/* The transposed slab (stride_h 1): padded input row y0 + r of channel ch, column c at
 * slab[(ch * slab_h + c) * slab_w + r]; zeros in the padding and past the rows read. */
static void fill_slab_transposed(const approx_t *a, const float *planes, int64_t y0, int64_t rows,
                                 float *slab) {
  memset(slab, 0, sizeof(float) * (size_t)(a->per_group_c * a->slab_h * a->slab_w));
  for (int64_t ch = 0; ch < a->per_group_c; ++ch)
    for (int64_t r = 0; r < rows + a->kernel_h - 1; ++r) {
      int64_t iy = y0 + r - a->pad_h;
      if (iy < 0 || iy >= a->height)
        continue;
      const float *row = planes + (ch * a->height + iy) * a->width;
      float *dst = slab + (ch * a->slab_h + a->pad_w) * a->slab_w + r;
      for (int64_t x = 0; x < a->width; ++x)
        dst[x * a->slab_w] = row[x];
    }
}

/* The kept positions of output rows [y0, y0 + rows), in order: their windows' origins in the
 * slab (offset) and their indices in an output plane (position). Returns their count. */
static int64_t list_positions(const approx_t *a, int64_t y0, int64_t rows, int64_t *offset,
                              int64_t *position) {
  int64_t count = 0;
  int cols = a->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS && a->out_w > 1;
  for (int64_t y = y0; y < y0 + rows; ++y) {
    if (row_skipped(a, y))
      continue;
    /* phase: x % rate, kept as x steps (no division per position). */
    for (int64_t x = 0, phase = 0; x < a->out_w; ++x, phase = phase + 1 < a->rate ? phase + 1 : 0)
      if (!cols || phase != a->offset) {
        offset[count] = (y - y0) * a->stride_h * a->slab_w + x * a->stride_w;
        position[count++] = y * a->out_w + x;
      }
  }
  return count;
}

/* Across filters: the task's `count` kept positions PB at a time (a block may span rows; the
 * last one repeats its first position), each block through every filter block of the task
 * while its windows are in cache. `out` is the group's first filter plane of the image. */
static void across_filters(const approx_t *a, const hpvm_tensor_kernels_t *k, const float *slab,
                           float *out, int64_t group, int64_t fb0, int64_t fb1,
                           const int64_t *offset, const int64_t *position, int64_t count) {
  int64_t out_plane = a->out_h * a->out_w, pb = k->taps_pb;
  float tile[HPVM_TENSOR_FB * HPVM_TENSOR_PB_WIDE];
  for (int64_t p = 0; p < count; p += pb) {
    /* Past the last position: the block's first again (the same value stored twice, so the
     * loops below have a constant count). */
    int64_t live_q = min64(count - p, pb), at[HPVM_TENSOR_PB_WIDE], to[HPVM_TENSOR_PB_WIDE];
    for (int64_t q = 0; q < pb; ++q) {
      at[q] = offset[p + (q < live_q ? q : 0)];
      to[q] = position[p + (q < live_q ? q : 0)];
    }
    for (int64_t fb = fb0; fb < fb1; ++fb) {
      int64_t live = min64(a->per_group_f - fb * HPVM_TENSOR_FB, HPVM_TENSOR_FB);
      int64_t packed = group * a->filter_blocks + fb;
      k->taps_filters(slab, at, a->tap, a->taps, a->weights + packed * a->taps * HPVM_TENSOR_FB,
                      a->packed_bias ? a->packed_bias + packed * HPVM_TENSOR_FB : NULL,
                      a->activation, a->activation_max, tile);
      float *filters = out + fb * HPVM_TENSOR_FB * out_plane;
      for (int64_t r = 0; r < live; ++r)
        for (int64_t q = 0; q < pb; ++q)
          filters[r * out_plane + to[q]] = tile[q * HPVM_TENSOR_FB + r];
    }
  }
}

/* Scalar: the kept positions of filters [o0, o1) of the group (few filters, where the vectors
 * would be mostly empty), 8 positions at a time so that their sums are independent chains
 * (the last block repeats its first position). */
static void scalar_positions(const approx_t *a, const float *slab, float *out, int64_t group,
                             int64_t o0, int64_t o1, const int64_t *offset, const int64_t *position,
                             int64_t count) {
  enum { BLOCK = 8 };
  int64_t out_plane = a->out_h * a->out_w;
  for (int64_t o = o0; o < o1; ++o) {
    const float *weights = a->weights + (group * a->per_group_f + o) * a->taps;
    float bias = a->bias ? a->bias[group * a->per_group_f + o] : 0.0f;
    for (int64_t p = 0; p < count; p += BLOCK) {
      int64_t live = min64(count - p, BLOCK);
      const float *at[BLOCK];
      float sum[BLOCK];
      for (int q = 0; q < BLOCK; ++q) {
        at[q] = slab + offset[p + (q < live ? q : 0)];
        sum[q] = 0.0f;
      }
      for (int64_t t = 0; t < a->taps; ++t)
        for (int q = 0; q < BLOCK; ++q)
          sum[q] += at[q][a->tap[t]] * weights[t];
      for (int64_t q = 0; q < live; ++q)
        out[o * out_plane + position[p + q]] =
            hpvm_tensor_activate(sum[q] + bias, a->activation, a->activation_max);
    }
  }
}

/* Across positions (stride_w 1): each kept row in blocks of NR columns, the last partial
 * block moved back to end at the row's end where the row holds a whole one (a few columns
 * computed twice, the same values), all the task's filters per block. */
static void across_positions(const approx_t *a, const hpvm_tensor_kernels_t *k, const float *slab,
                             float *out, int64_t group, int64_t fb0, int64_t fb1, int64_t y0,
                             int64_t rows) {
  int64_t out_plane = a->out_h * a->out_w;
  int64_t o0 = fb0 * HPVM_TENSOR_MR, o1 = min64(fb1 * HPVM_TENSOR_MR, a->per_group_f);
  const float *weights = a->weights + (group * a->filter_blocks + fb0) * a->taps * HPVM_TENSOR_MR;
  const float *bias = a->bias ? a->bias + group * a->per_group_f + o0 : NULL;
  for (int64_t y = y0; y < y0 + rows; ++y) {
    if (row_skipped(a, y))
      continue;
    for (int64_t x0 = 0; x0 < a->out_w; x0 += HPVM_TENSOR_NR) {
      if (a->out_w - x0 < HPVM_TENSOR_NR && a->out_w >= HPVM_TENSOR_NR)
        x0 = a->out_w - HPVM_TENSOR_NR;
      k->taps_direct(slab + (y - y0) * a->stride_h * a->slab_w + x0, a->tap, a->taps, weights,
                     out + o0 * out_plane + y * a->out_w + x0, out_plane, o1 - o0,
                     min64(a->out_w - x0, HPVM_TENSOR_NR), bias, a->activation, a->activation_max);
    }
  }
}

/* Across positions down the kept columns (perforated columns with few filters, stride_h 1):
 * output column x is row x * stride_w of the transposed slab; blocks of NR output rows (the
 * last one moved back where the task holds NR rows or more), MR filters at a time, through a
 * tile. */
static void across_columns(const approx_t *a, const hpvm_tensor_kernels_t *k, const float *slab,
                           float *out, int64_t group, int64_t fb0, int64_t fb1, int64_t y0,
                           int64_t rows) {
  int64_t out_plane = a->out_h * a->out_w;
  float tile[HPVM_TENSOR_MR * HPVM_TENSOR_NR];
  for (int64_t x = 0; x < a->out_w; ++x) {
    if (col_skipped(a, x))
      continue;
    for (int64_t yb = 0; yb < rows; yb += HPVM_TENSOR_NR) {
      if (rows - yb < HPVM_TENSOR_NR && rows >= HPVM_TENSOR_NR)
        yb = rows - HPVM_TENSOR_NR;
      int64_t count = min64(rows - yb, HPVM_TENSOR_NR);
      for (int64_t fb = fb0; fb < fb1; ++fb) {
        int64_t r0 = fb * HPVM_TENSOR_MR, live = min64(a->per_group_f - r0, HPVM_TENSOR_MR);
        k->taps_direct(slab + x * a->stride_w * a->slab_w + yb, a->tap, a->taps,
                       a->weights + (group * a->filter_blocks + fb) * a->taps * HPVM_TENSOR_MR,
                       tile, HPVM_TENSOR_NR, live, count,
                       a->bias ? a->bias + group * a->per_group_f + r0 : NULL, a->activation,
                       a->activation_max);
        float *column = out + r0 * out_plane + (y0 + yb) * a->out_w + x;
        for (int64_t r = 0; r < live; ++r)
          for (int64_t yy = 0; yy < count; ++yy)
            column[r * out_plane + yy * a->out_w] = tile[r * HPVM_TENSOR_NR + yy];
      }
    }
  }
}

/* dst[x] = (up[x] + down[x]) / 2 (distinct rows: the loop vectorizes without checks). */
static void mean_row(float *restrict dst, const float *restrict up, const float *restrict down,
                     int64_t count) {
  for (int64_t x = 0; x < count; ++x)
    dst[x] = 0.5f * (up[x] + down[x]);
}

/* The skipped outputs of filters [o0, o1) at rows [y0, y0 + rows) from the computed ones:
 * the mean of the two neighbours, or a copy of the one at an edge. */
static void fill_skipped(const approx_t *a, int64_t image, int64_t o0, int64_t o1, int64_t y0,
                         int64_t rows) {
  int64_t oh = a->out_h, ow = a->out_w;
  for (int64_t o = o0; o < o1; ++o) {
    float *plane = a->output + (image * a->filters + o) * oh * ow;
    if (a->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS && oh > 1) {
      for (int64_t y = a->offset; y < oh; y += a->rate) {
        float *row = plane + y * ow;
        if (y == 0)
          memcpy(row, row + ow, sizeof(float) * (size_t)ow);
        else if (y == oh - 1)
          memcpy(row, row - ow, sizeof(float) * (size_t)ow);
        else
          mean_row(row, row - ow, row + ow, ow);
      }
    } else if (a->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS && ow > 1) {
      /* The edges apart: the interior loop has no branch. */
      int64_t first = a->offset > 0 ? a->offset : a->rate;
      int64_t last_skipped = (ow - 1) % a->rate == a->offset;
      for (int64_t y = y0; y < y0 + rows; ++y) {
        float *row = plane + y * ow;
        if (a->offset == 0)
          row[0] = row[1];
        for (int64_t x = first; x < ow - 1; x += a->rate)
          row[x] = 0.5f * (row[x - 1] + row[x + 1]);
        if (last_skipped)
          row[ow - 1] = row[ow - 2];
      }
    }
  }
}

static void run_approx(void *context, const hpvm_rt_instance_range_t *range) {
  const approx_t *a = context;
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  int64_t out_plane = a->out_h * a->out_w;
  for (int64_t task = range->begin[0]; task < range->end[0]; ++task) {
    int64_t row_task = task % a->row_tasks, rest = task / a->row_tasks;
    int64_t filter_task = rest % a->filter_tasks, problem = rest / a->filter_tasks;
    int64_t image = problem / a->groups, group = problem % a->groups;
    int64_t y0 = row_task * a->rows_per_task, rows = min64(a->rows_per_task, a->out_h - y0);
    int64_t fb0 = filter_task * a->blocks_per_task;
    int64_t fb1 = min64(fb0 + a->blocks_per_task, a->filter_blocks);
    /* Filters [o0, o1) of the whole filter tensor. */
    int64_t o0 = group * a->per_group_f + fb0 * a->block;
    int64_t o1 = group * a->per_group_f + min64(fb1 * a->block, a->per_group_f);
    const float *planes =
        a->input + (image * a->channels + group * a->per_group_c) * a->height * a->width;
    /* Scratch: (position lists) the kept positions' offsets and output indices, then the
     * slab unless the image itself is read. */
    size_t positions = a->path != ACROSS_POSITIONS ? (size_t)(rows * a->out_w) : 0;
    size_t slab_floats = a->in_place ? 0 : (size_t)(a->per_group_c * a->slab_h * a->slab_w);
    int64_t *scratch =
        a->weights
            ? hpvm_scratch_alloc(2 * sizeof(int64_t) * positions + sizeof(float) * slab_floats)
            : NULL;
    if (!scratch) {
      unpacked_block(a, image, group, o0, o1, y0, rows);
    } else {
      float *slab = (float *)(scratch + 2 * positions);
      if (a->transposed)
        fill_slab_transposed(a, planes, y0, rows, slab);
      else if (!a->in_place)
        fill_slab(a, planes, y0, rows, slab);
      const float *src = a->in_place ? planes + y0 * a->stride_h * a->width : slab;
      float *out = a->output + (image * a->filters + group * a->per_group_f) * out_plane;
      int64_t *offset = scratch, *position = scratch + positions;
      if (a->transposed) {
        across_columns(a, k, src, out, group, fb0, fb1, y0, rows);
      } else if (a->path == ACROSS_POSITIONS) {
        across_positions(a, k, src, out, group, fb0, fb1, y0, rows);
      } else {
        int64_t count = list_positions(a, y0, rows, offset, position);
        if (a->path == ACROSS_FILTERS)
          across_filters(a, k, src, out, group, fb0, fb1, offset, position, count);
        else
          scalar_positions(a, src, out, group, o0 - group * a->per_group_f,
                           o1 - group * a->per_group_f, offset, position, count);
      }
      hpvm_scratch_free(scratch);
    }
    /* Skipped rows need the rows above and below: here only when the task holds its planes. */
    if (a->knob != HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS || a->row_tasks == 1)
      fill_skipped(a, image, o0, o1, y0, rows);
  }
}

/* The second pass of perforated rows split over tasks: item = one output plane. */
static void run_fill_rows(void *context, const hpvm_rt_instance_range_t *range) {
  const approx_t *a = context;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane)
    fill_skipped(a, plane / a->filters, plane % a->filters, plane % a->filters + 1, 0, a->out_h);
}

/* Fewer output rows per task (halving) until there are `wanted` tasks, or one row per task. */
static void split_rows(approx_t *a, int64_t problems, int64_t wanted) {
  while (a->rows_per_task > 1 && problems * a->filter_tasks * a->row_tasks < wanted) {
    a->rows_per_task = ceil_div(a->rows_per_task, 2);
    a->row_tasks = ceil_div(a->out_h, a->rows_per_task);
  }
}

/* Fewer filter blocks per task (halving) until there are `wanted` tasks, or one per task. */
static void split_filters(approx_t *a, int64_t problems, int64_t wanted) {
  while (a->blocks_per_task > 1 && problems * a->filter_tasks * a->row_tasks < wanted) {
    a->blocks_per_task = ceil_div(a->blocks_per_task, 2);
    a->filter_tasks = ceil_div(a->filter_blocks, a->blocks_per_task);
  }
}

/* The weights packed [group][filter block][kept tap][block] (zero past a group's last filter,
 * scaled), then, across filters with a bias, the bias as [group][filter block][FB]. */
static void pack_taps(void *context, float *out) {
  const approx_t *a = context;
  int64_t depth = a->per_group_c * a->kernel_h * a->kernel_w;
  float *dst = out;
  for (int64_t g = 0; g < a->groups; ++g)
    for (int64_t fb = 0; fb < a->filter_blocks; ++fb)
      for (int64_t kk = 0; kk < depth; ++kk) {
        if (tap_skipped(a, kk))
          continue;
        for (int64_t r = 0; r < a->block; ++r) {
          int64_t o = fb * a->block + r;
          *dst++ = o < a->per_group_f ? a->filter[(g * a->per_group_f + o) * depth + kk] * a->scale
                                      : 0.0f;
        }
      }
  int64_t blocks = a->groups * a->filter_blocks;
  for (int64_t i = 0; a->path == ACROSS_FILTERS && a->bias && i < blocks * HPVM_TENSOR_FB; ++i) {
    int64_t g = i / (a->filter_blocks * HPVM_TENSOR_FB),
            o = i % (a->filter_blocks * HPVM_TENSOR_FB);
    *dst++ = o < a->per_group_f ? a->bias[g * a->per_group_f + o] : 0.0f;
  }
}

/* The kept taps' slab offsets and the packed, scaled weights (left NULL without memory). */
static void pack(approx_t *a) {
  int64_t window = a->kernel_h * a->kernel_w, depth = a->per_group_c * window;
  a->tap = without_memory ? NULL : malloc(sizeof(int64_t) * (size_t)(depth + 1));
  if (!a->tap)
    return;
  a->taps = 0;
  for (int64_t kk = 0; kk < depth; ++kk)
    if (!tap_skipped(a, kk)) {
      int64_t ch = kk / window, i = kk % window / a->kernel_w, j = kk % a->kernel_w;
      a->tap[a->taps++] = a->transposed ? (ch * a->slab_h + j) * a->slab_w + i
                                        : (ch * a->slab_h + i) * a->slab_w + j;
    }
  int64_t blocks = a->groups * a->filter_blocks;
  int64_t weight_floats = blocks * a->taps * a->block;
  int64_t bias_floats = a->path == ACROSS_FILTERS && a->bias ? blocks * HPVM_TENSOR_FB : 0;
  /* Exact constant filters: packed once (the kept taps of a knob and its scale vary). */
  if (a->constant && a->knob == HPVM_RT_TENSOR_KNOB_EXACT) {
    int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {2,         a->channels, a->filters, a->kernel_h,
                                                a->kernel_w, a->groups, a->block, bias_floats};
    a->weights = hpvm_tensor_packed_constant(a->filter, bias_floats ? a->bias : NULL, layout,
                                             (size_t)(weight_floats + bias_floats), pack_taps, a);
  }
  if (!a->weights) {
    a->own_weights = hpvm_scratch_alloc(sizeof(float) * (size_t)(weight_floats + bias_floats));
    if (a->own_weights)
      pack_taps(a, a->own_weights);
    a->weights = a->own_weights;
  }
  a->packed_bias = a->weights && bias_floats ? a->weights + weight_floats : NULL;
}

void hpvm_tensor_conv_taps(const float *input, const float *filter, const float *bias,
                           float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                           int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                           int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                           int64_t activation, float activation_max, int64_t knob, int64_t rate,
                           int64_t offset, int constant) {
  if (n == 0 || f == 0 || oh == 0 || ow == 0)
    return;
  if (hpvm_tensor_activation_late(activation)) {
    /* As the direct convolutions: the kernels' epilogues stay short, the logistic
     * activations run over the finished planes. */
    hpvm_tensor_conv_taps(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, HPVM_RT_TENSOR_IDENTITY,
                          activation_max, knob, rate, offset, constant);
    hpvm_tensor_activate_planes(output, n * f, oh * ow, activation, activation_max);
    return;
  }
  approx_t a = {0};
  a.constant = constant;
  a.input = input, a.filter = filter, a.bias = bias, a.output = output;
  a.activation = activation, a.activation_max = activation_max;
  a.knob = knob, a.rate = rate, a.offset = offset;
  a.channels = c, a.height = h, a.width = w, a.filters = f, a.kernel_h = kh, a.kernel_w = kw;
  a.out_h = oh, a.out_w = ow, a.pad_h = pad_h, a.pad_w = pad_w;
  a.stride_h = stride_h, a.stride_w = stride_w, a.groups = groups;
  a.per_group_c = c / groups, a.per_group_f = f / groups;
  a.scale = knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER ? (float)((double)rate / (rate - 1.0)) : 1.0f;
  /* Vectors across filters where a group fills them; across positions where the kept
   * positions are consecutive along a row (stride_w 1, whole rows kept) or, for perforated
   * columns, down a column (stride_h 1, transposed); else, with few filters, scalar loops. */
  int along_rows = stride_w == 1 && knob != HPVM_RT_TENSOR_KNOB_PERFORATE_COLS;
  int down_columns = stride_h == 1 && knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS;
  a.path = a.per_group_f >= 12          ? ACROSS_FILTERS
           : along_rows || down_columns ? ACROSS_POSITIONS
           : a.per_group_f >= 4         ? ACROSS_FILTERS
                                        : SCALAR;
  a.transposed = a.path == ACROSS_POSITIONS && down_columns;
  a.block = a.path == ACROSS_FILTERS     ? HPVM_TENSOR_FB
            : a.path == ACROSS_POSITIONS ? HPVM_TENSOR_MR
                                         : 1;
  a.filter_blocks = ceil_div(a.per_group_f, a.block);
  /* Enough tasks for the pool (4 per thread): fewer rows per task, then fewer filter blocks;
   * perforated rows the other way round, so that their tasks keep whole planes as long as
   * they can (and fill their skipped rows themselves), and transposed slabs too (their
   * blocks run down the task's rows). */
  int64_t threads = hpvm_rt_thread_count(), wanted = 4 * threads;
  a.rows_per_task = oh, a.row_tasks = 1;
  a.blocks_per_task = a.filter_blocks, a.filter_tasks = 1;
  if (knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS || a.transposed)
    split_filters(&a, n * groups, wanted);
  split_rows(&a, n * groups, wanted);
  split_filters(&a, n * groups, wanted);
  a.in_place = a.path != ACROSS_POSITIONS && pad_h == 0 && pad_w == 0;
  a.slab_h = a.in_place ? h : (a.rows_per_task - 1) * stride_h + kh;
  a.slab_w = w + 2 * pad_w;
  /* Across positions a block reads NR positions from its first: slab rows at least NR + kw - 1
   * wide (transposed: NR + kh - 1 long). */
  if (a.path == ACROSS_POSITIONS && a.slab_w < HPVM_TENSOR_NR + kw - 1)
    a.slab_w = HPVM_TENSOR_NR + kw - 1;
  if (a.transposed) {
    a.slab_h = w + 2 * pad_w;
    a.slab_w = (a.rows_per_task > HPVM_TENSOR_NR ? a.rows_per_task : HPVM_TENSOR_NR) + kh - 1;
  }
  pack(&a);
  int64_t extents[2] = {n * groups * a.filter_tasks * a.row_tasks, 1};
  hpvm_tensor_run_grid(1, extents, run_approx, &a);
  if (knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS && a.row_tasks > 1) {
    /* Rows split over tasks: the skipped ones once every row is computed, a plane per item. */
    int64_t planes[2] = {n * f, 1};
    hpvm_tensor_run_grid(1, planes, run_fill_rows, &a);
  }
  free(a.tap);
  hpvm_scratch_free(a.own_weights);
}
