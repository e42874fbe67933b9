/* Pools of one plane in 16-float vectors (AVX-512; CMake compiles this file with -mavx512f,
 * dispatch.c picks it only where the CPU has AVX-512F): windows at strides 1 and 2
 * (googlenet's 3 x 3 pools at stride 1, the pools between stages at stride 2), 16 outputs at a
 * time, edges included; the AVX2 kernel (kernels_isa.inc) for 2 x 2 windows at stride 2, whole
 * planes and the rest. The columns a window finds outside the image are masked out of its
 * loads and read as the reduction's start (-inf, +inf, 0), which leaves each step as the
 * scalar loop's (max and min keep their value and their NaN; a mean's sum, never -0 from a
 * start of +0, gains +0); rows outside the image are skipped, as there.
 *
 * Max and min go row by row: each input row's maxima over the window's columns are made once,
 * kept in a ring of window_h rows, and reduced down the window's rows for every output row
 * that reads them (a 3 x 3 window at stride 1: 6 loads and 4 steps per 16 outputs, where a
 * window at a time took 9 and 9). The scalar loop's step takes a value when it is greater
 * (smaller) than the result so far or NaN, so the result of a window is its last NaN, or else
 * the first of its greatest values in the order of rows and then columns (which of +0 and -0,
 * when they tie); reducing each row first and then the rows in order gives the same element:
 * the same bits. A mean's sum keeps the scalar order, a window at a time. */
#include "kernels.h"

#include "hpvm/hpvm_rt.h"

#include <immintrin.h>

/* The most columns a window may have here (more: the AVX2 kernel), and the most rows of a max
 * or min row by row (more: a window at a time). */
enum { POOL_MAX_WINDOW_W = 32, POOL_MAX_WINDOW_H = 32 };
/* The floats of the ring of row results (window_h rows, rounded up to a power of two, of the
 * output's width in whole vectors; more: a window at a time), and the most blocks of 16
 * outputs whose loads reach outside their rows. */
enum { POOL_RING_FLOATS = 4096, POOL_EDGE_BLOCKS = 4 };

/* One step of max (min) on 16 lanes: v where it is greater (smaller) than acc or NaN. */
static inline __attribute__((always_inline)) __m512 pool_step16(int64_t kind, __m512 acc,
                                                                 __m512 v) {
  __mmask16 take = (kind == HPVM_RT_TENSOR_POOL_MAX ? _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ)
                                                     : _mm512_cmp_ps_mask(v, acc, _CMP_LT_OQ)) |
                   _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(take, acc, v);
}

/* The lanes [from, to) of a 16-bit mask (from and to clipped to [0, 16]). */
static inline __mmask16 lanes_between(int64_t from, int64_t to) {
  from = from < 0 ? 0 : from;
  to = to > 16 ? 16 : to;
  return from >= to ? 0 : (__mmask16)(((1u << to) - 1) & ~((1u << from) - 1));
}

/* 16 columns of a row at stride `stride_w` from p (p, p + s, ..., p + 15 s), those outside
 * the row masked out of the loads (lo: of the first 16 columns from p, hi: of the next 16)
 * and read as `fill`. */
static inline __attribute__((always_inline)) __m512
columns16(const float *p, int64_t stride_w, __mmask16 lo, __mmask16 hi, __m512 fill) {
  if (stride_w == 1)
    return _mm512_mask_loadu_ps(fill, lo, p);
  __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_permutex2var_ps(_mm512_mask_loadu_ps(fill, lo, p), even,
                                _mm512_mask_loadu_ps(fill, hi, p + 16));
}

/* The masks of the loads of one block of 16 outputs, per column of the window. */
typedef struct pool_masks_t {
  __mmask16 lo[POOL_MAX_WINDOW_W], hi[POOL_MAX_WINDOW_W];
} pool_masks_t;

/* The row results of 16 outputs from column c of one input row (`masks`: its blocks' at the
 * edges of the row, null inside it). */
static inline __attribute__((always_inline)) __m512
pool_block(int64_t kind, const float *row, int64_t c, int64_t window_w, int64_t stride_w,
           const pool_masks_t *masks, __m512 fill) {
  __m512 acc = columns16(row + c, stride_w, masks ? masks->lo[0] : 0xffff,
                         masks ? masks->hi[0] : 0xffff, fill);
  for (int64_t j = 1; j < window_w; ++j)
    acc = pool_step16(kind, acc,
                      columns16(row + c + j, stride_w, masks ? masks->lo[j] : 0xffff,
                                masks ? masks->hi[j] : 0xffff, fill));
  return acc;
}

/* Where a plane's blocks of 16 outputs load outside their rows: blocks [0, first) and
 * [last, blocks), with the masks of their loads. */
typedef struct pool_edges_t {
  int64_t first, last;
  pool_masks_t masks[POOL_EDGE_BLOCKS];
} pool_edges_t;

/* The edge blocks of rows of w columns and their masks; false where there are more than
 * POOL_EDGE_BLOCKS. */
static int pool_find_edges(int64_t w, int64_t window_w, int64_t stride_w, int64_t pad_w,
                           int64_t blocks, pool_edges_t *edges) {
  edges->first = 0;
  while (edges->first < blocks && edges->first * 16 * stride_w - pad_w < 0)
    ++edges->first;
  edges->last = blocks;
  while (edges->last > edges->first &&
         (edges->last - 1) * 16 * stride_w - pad_w + window_w + 16 * stride_w - 1 > w)
    --edges->last;
  if (edges->first + blocks - edges->last > POOL_EDGE_BLOCKS)
    return 0;
  for (int64_t b = 0, e = 0; b < blocks; ++b) {
    if (b == edges->first)
      b = edges->last;
    if (b >= blocks)
      break;
    for (int64_t j = 0; j < window_w; ++j) {
      int64_t c = b * 16 * stride_w - pad_w + j;
      edges->masks[e].lo[j] = lanes_between(-c, w - c);
      edges->masks[e].hi[j] = lanes_between(-c - 16, w - c - 16);
    }
    ++e;
  }
  return 1;
}

/* The row results of input row `row` into `result` (ow outputs in whole vectors). */
static inline __attribute__((always_inline)) void
pool_row(int64_t kind, const float *row, int64_t window_w, int64_t stride_w, int64_t pad_w,
         int64_t blocks, const pool_edges_t *edges, __m512 fill, float *result) {
  int64_t b = 0, e = 0;
  for (; b < edges->first; ++b, ++e)
    _mm512_store_ps(result + 16 * b, pool_block(kind, row, b * 16 * stride_w - pad_w, window_w,
                                                stride_w, &edges->masks[e], fill));
  for (; b < edges->last; ++b)
    _mm512_store_ps(result + 16 * b, pool_block(kind, row, b * 16 * stride_w - pad_w, window_w,
                                                stride_w, NULL, fill));
  for (; b < blocks; ++b, ++e)
    _mm512_store_ps(result + 16 * b, pool_block(kind, row, b * 16 * stride_w - pad_w, window_w,
                                                stride_w, &edges->masks[e], fill));
}

/* A plane's max or min pool row by row (the file's comment), its row results in a ring of a
 * power of two of rows; false where they do not fit (nothing computed). */
static inline __attribute__((always_inline)) int
pool_by_rows(int64_t kind, int64_t stride_w, int64_t window_w, const float *in, float *out,
             int64_t h, int64_t w, int64_t window_h, int64_t stride_h, int64_t pad_h,
             int64_t pad_w, int64_t oh, int64_t ow) {
  int64_t blocks = (ow + 15) / 16, width = 16 * blocks, slots = 1;
  while (slots < window_h)
    slots *= 2;
  pool_edges_t edges;
  if (window_h > POOL_MAX_WINDOW_H || slots * width > POOL_RING_FLOATS ||
      !pool_find_edges(w, window_w, stride_w, pad_w, blocks, &edges))
    return 0;
  float ring[POOL_RING_FLOATS] __attribute__((aligned(64)));
  __m512 fill = _mm512_set1_ps(kind == HPVM_RT_TENSOR_POOL_MAX ? -__builtin_inff()
                                                                : __builtin_inff());
  int64_t next = 0; /* the first input row whose results are not in the ring */
  for (int64_t y = 0; y < oh; ++y) {
    int64_t top = y * stride_h - pad_h;
    int64_t r0 = top < 0 ? 0 : top, r1 = top + window_h < h ? top + window_h : h;
    for (int64_t r = r0 > next ? r0 : next; r < r1; ++r)
      pool_row(kind, in + r * w, window_w, stride_w, pad_w, blocks, &edges, fill,
               ring + (r & (slots - 1)) * width);
    next = r1 > next ? r1 : next;
    const float *rows[POOL_MAX_WINDOW_H];
    for (int64_t r = r0; r < r1; ++r)
      rows[r - r0] = ring + (r & (slots - 1)) * width;
    for (int64_t x0 = 0; x0 < ow; x0 += 16) {
      __m512 acc = r0 < r1 ? _mm512_load_ps(rows[0] + x0) : fill;
      for (int64_t i = 1; i < r1 - r0; ++i)
        acc = pool_step16(kind, acc, _mm512_load_ps(rows[i] + x0));
      _mm512_mask_storeu_ps(out + y * ow + x0, lanes_between(0, ow - x0), acc);
    }
  }
  return 1;
}

/* pool_by_rows of max or min, with the stride and a window of 3 columns as constants. */
static int pool_max_min(int64_t kind, const float *in, float *out, int64_t h, int64_t w,
                        int64_t window_h, int64_t window_w, int64_t stride_h, int64_t stride_w,
                        int64_t pad_h, int64_t pad_w, int64_t oh, int64_t ow) {
#define POOL_BY_ROWS(KIND, STRIDE, WINDOW)                                                   \
  pool_by_rows(KIND, STRIDE, WINDOW, in, out, h, w, window_h, stride_h, pad_h, pad_w, oh, ow)
#define POOL_STRIDES(KIND, WINDOW)                                                           \
  (stride_w == 1 ? POOL_BY_ROWS(KIND, 1, WINDOW) : POOL_BY_ROWS(KIND, 2, WINDOW))
  if (kind == HPVM_RT_TENSOR_POOL_MAX)
    return window_w == 3 ? POOL_STRIDES(HPVM_RT_TENSOR_POOL_MAX, 3)
                         : POOL_STRIDES(HPVM_RT_TENSOR_POOL_MAX, window_w);
  return window_w == 3 ? POOL_STRIDES(HPVM_RT_TENSOR_POOL_MIN, 3)
                       : POOL_STRIDES(HPVM_RT_TENSOR_POOL_MIN, window_w);
#undef POOL_STRIDES
#undef POOL_BY_ROWS
}

/* 16 columns of a row at stride `stride_w` from column c (c, c + s, ..., c + 15 s), those
 * outside [0, w) read as `fill`. */
static inline __attribute__((always_inline)) __m512
load_columns(const float *row, int64_t c, int64_t w, int64_t stride_w, __m512 fill) {
  return columns16(row + c, stride_w, lanes_between(-c, w - c),
                   lanes_between(-c - 16, w - c - 16), fill);
}

/* Columns [x0, x0 + 16) of output row `out` (live: the lanes before ow) of a mean, from the
 * window rows [top + i0, top + i1) of the input, each row's taps j in order. */
static inline __attribute__((always_inline)) void
mean_block16(const float *in, int64_t w, int64_t top, int64_t i0, int64_t i1, int64_t window_w,
             int64_t stride_w, int64_t pad_w, int64_t x0, __mmask16 live, float scale,
             float *out) {
  __m512 acc = _mm512_setzero_ps(), fill = acc;
  int64_t c0 = x0 * stride_w - pad_w;
  for (int64_t i = i0; i < i1; ++i)
    for (int64_t j = 0; j < window_w; ++j)
      acc = _mm512_add_ps(acc, load_columns(in + (top + i) * w, c0 + j, w, stride_w, fill));
  _mm512_mask_storeu_ps(out, live, _mm512_mul_ps(acc, _mm512_set1_ps(scale)));
}

static void mean_plane(const float *in, float *out, int64_t h, int64_t w, int64_t window_h,
                       int64_t window_w, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                       int64_t pad_w, int64_t oh, int64_t ow) {
  float scale = 1.0f / (float)(window_h * window_w);
  for (int64_t y = 0; y < oh; ++y) {
    int64_t top = y * stride_h - pad_h;
    int64_t i0 = top < 0 ? -top : 0;
    int64_t i1 = h - top < window_h ? h - top : window_h;
    for (int64_t x0 = 0; x0 < ow; x0 += 16) {
      __mmask16 live = lanes_between(0, ow - x0);
      if (stride_w == 1)
        mean_block16(in, w, top, i0, i1, window_w, 1, pad_w, x0, live, scale, out + y * ow + x0);
      else
        mean_block16(in, w, top, i0, i1, window_w, 2, pad_w, x0, live, scale, out + y * ow + x0);
    }
  }
}

void hpvm_tensor_pool_plane_avx512(const float *in, float *out, int64_t kind, int64_t h,
                                   int64_t w, int64_t window_h, int64_t window_w,
                                   int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                   int64_t pad_w, int64_t oh, int64_t ow) {
  int two_by_two = window_h == 2 && window_w == 2 && stride_h == 2 && stride_w == 2 &&
                   pad_h == 0 && pad_w == 0 && 2 * oh <= h && 2 * ow <= w;
  int global = window_h == h && window_w == w && oh == 1 && ow == 1;
  int handled = !two_by_two && !global && (stride_w == 1 || stride_w == 2) &&
                window_w <= POOL_MAX_WINDOW_W && w <= (1 << 28);
  if (handled && kind != HPVM_RT_TENSOR_POOL_MEAN) {
    handled = pool_max_min(kind, in, out, h, w, window_h, window_w, stride_h, stride_w, pad_h,
                           pad_w, oh, ow);
  } else if (handled) {
    mean_plane(in, out, h, w, window_h, window_w, stride_h, stride_w, pad_h, pad_w, oh, ow);
  }
  if (!handled)
    hpvm_tensor_pool_plane_avx2(in, out, kind, h, w, window_h, window_w, stride_h, stride_w,
                                pad_h, pad_w, oh, ow);
}
