/* Internal interface of the tensor kernels: the per-ISA compute loops (kernels_isa.inc,
 * compiled once for AVX2+FMA and once for the baseline; kernels_avx512.c), the dispatch that
 * picks the ISA once per process and splits work over the thread pool (dispatch.c), and the
 * drivers that pack operands (gemm.c, conv.c, contract.c, conv_taps.c). */
#ifndef HPVM_RT_TENSOR_KERNELS_H
#define HPVM_RT_TENSOR_KERNELS_H

#include "hpvm/hpvm_rt.h"
#include "mem/buffer_cache.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Register block of the micro-kernel: MR rows of A times NR columns of B. */
enum { HPVM_TENSOR_MR = 6, HPVM_TENSOR_NR = 16 };

/* Register block of the AVX-512 GEMM micro-kernel and exact contraction kernels (24
 * accumulators of 16 floats); the most any of them takes (hpvm_tensor_kernels_t.micro_mr,
 * micro_nr, contract_mr, contract_nr). */
enum { HPVM_TENSOR_CONTRACT_MR_WIDE = 12, HPVM_TENSOR_CONTRACT_NR_WIDE = 32 };

/* Register block of the convolution kernel for narrow outputs: FB filters (vectors) times PB
 * positions. */
enum { HPVM_TENSOR_FB = 16, HPVM_TENSOR_PB = 6 };
/* Positions per block of the AVX-512 kernel across filters (12 accumulators of 16 floats); the
 * most any `filters` kernel takes (hpvm_tensor_kernels_t.filters_pb). */
enum { HPVM_TENSOR_PB_WIDE = 12 };
/* The AVX-512 kernel across filters: HPVM_TENSOR_FB_WIDE filters (two vectors) x
 * HPVM_TENSOR_PB_WIDE positions, 24 accumulators. */
enum { HPVM_TENSOR_FB_WIDE = 32 };
/* The same kernel on HPVM_TENSOR_PB_SHORT positions (14 accumulators, still bound by the
 * multiply-adds), for the 7 x 7 outputs of deep layers: 49 positions in 7 blocks of 7, where
 * blocks of 12 compute 60. */
enum { HPVM_TENSOR_PB_SHORT = 7 };

/* How far ahead (floats: 4 KiB) the convolution kernels prefetch the weights they stream: at
 * batch 1 the deep layers' weights come from memory on each call (resnet50's are 100 MB),
 * faster than the prefetchers fetch them alone (2048 -> 512 1 x 1 at 7 x 7 with cold weights
 * 1.7 -> 1.2 ms, 512 3 x 3 at 7 x 7 2.8 -> 2.4 ms, one thread; the same with warm ones). */
enum { HPVM_TENSOR_WEIGHTS_AHEAD = 1024 };
/* Positions per block of the AVX-512 direct kernels (6 or 12 filters x 2 vectors of 16: 12 or 24
 * accumulators); the most any `direct` kernel takes (hpvm_tensor_kernels_t.direct_nr). */
enum { HPVM_TENSOR_NR_WIDE = 32 };
/* The wide AVX-512 direct kernel's block of filters (its weights packed in blocks of 12). */
enum { HPVM_TENSOR_DIRECT_MR_WIDE = 12 };

/* C[rows x cols] (ldc) = (accumulate ? C : 0) + A_panel * B_panel over k, where the A panel is
 * k x mr (a[p * mr + r]) and the B panel k x nr (b[p * nr + j]); rows <= mr, cols <= nr, the
 * kernel's register block (hpvm_tensor_kernels_t.micro_mr, micro_nr). Each element sums its
 * products from 0 in ascending p with fused multiply-adds: the same bits whatever the block. */
typedef void (*hpvm_tensor_micro_kernel_fn)(int64_t k, const float *a, const float *b, float *c,
                                            int64_t ldc, int64_t rows, int64_t cols,
                                            int accumulate);

/* The exact contractions (contract.c): c[r * ldc + j] for r < rows (<= mr), j < cols (<= nr)
 * = the fold over p < k, in ascending p, of acc = step(a[p * MR + r], b[p * NR + j], acc) from
 * acc = (load ? c[r * ldc + j] : init), one vector lane per element, with the step of the
 * variant: _fused one fused multiply-add (fmaf), _unfused a rounded product, then a rounded
 * sum (never contracted). Bit for bit the sequential fold, whatever rows and cols. */
typedef void (*hpvm_tensor_contract_fn)(int64_t k, const float *a, const float *b, float *c,
                                        int64_t ldc, int64_t rows, int64_t cols, int load,
                                        float init);

/* Products of few rows (rows <= HPVM_TENSOR_MR, cols <= HPVM_TENSOR_SKINNY_COLS), unpacked:
 * c[r * ldc + j] = sum over p < k of a[r * lda + p] * b[p * ldb + j], summed in chunks of kc
 * deep exactly as the micro-kernel sums them (the same bits as a packed product), row-major
 * A and B read where they lie. */
enum { HPVM_TENSOR_SKINNY_COLS = 256 };
typedef void (*hpvm_tensor_skinny_fn)(int64_t rows, int64_t k, int64_t kc, const float *a,
                                      int64_t lda, const float *b, int64_t ldb, float *c,
                                      int64_t ldc, int64_t cols);

static inline int64_t hpvm_tensor_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* A buffer of `floats` floats for packed panels, 64-byte aligned (a 512-bit load of a panel
 * never splits a cache line: 6-10% on 1024^3 products), or NULL; hpvm_scratch_free releases
 * it. */
static inline float *hpvm_tensor_alloc_panels(int64_t floats) {
  return (float *)hpvm_scratch_alloc(sizeof(float) * (size_t)(floats > 0 ? floats : 1));
}

/* Packing (pack.c), into panels of `width` elements (<= HPVM_TENSOR_CONTRACT_NR_WIDE)
 * dst[panel][kk][e], elements past the last zero. _rows: `rows` row-major rows of a (lda
 * apart, each's depth consecutive), depth [0, kc); _columns: depth [0, kc) of `cols`
 * consecutive columns of a row-major b (ldb apart). */
void hpvm_tensor_pack_rows(const float *a, int64_t lda, int64_t rows, int64_t kc, int64_t width,
                           float *dst);
void hpvm_tensor_pack_columns(const float *b, int64_t ldb, int64_t kc, int64_t cols,
                              int64_t width, float *dst);

/* At most this many bytes for both operands of a product packed whole before its blocks run;
 * beyond, each task packs its own blocks. */
enum { HPVM_TENSOR_PACK_ALL_MAX = 64 << 20 };

/* Packed constant operands (constants.c). The layout's parameters, with the address of the
 * source data and of its bias (or NULL), name a packed form; the first call makes it with
 * pack(context, out) into `floats` floats (64-byte aligned) and every later call returns the
 * same buffer, kept for the rest of the process. Only for data that never changes (the
 * program's constants). NULL without memory (the caller packs a copy of its own). */
enum { HPVM_TENSOR_LAYOUT_WORDS = 8 };
typedef void (*hpvm_tensor_pack_fn)(void *context, float *out);
const float *hpvm_tensor_packed_constant(const void *source, const void *bias,
                                         const int64_t layout[HPVM_TENSOR_LAYOUT_WORDS],
                                         size_t floats, hpvm_tensor_pack_fn pack,
                                         void *context);

/* The late activations (hpvm_tensor_activation_late) over `planes` finished output planes of
 * `plane` floats each, one task per plane on the pool (the kernels' `activate`, bit for bit
 * hpvm_tensor_activate). The convolution kernels' own epilogues only add the bias and clamp:
 * the sigmoid inlined there slowed every convolution down. */
void hpvm_tensor_activate_planes(float *output, int64_t planes, int64_t plane,
                                 int64_t activation, float max);

/* The rows and columns of a task of a product set (`problems` products of m x n): the blocks
 * `*rows` x `*cols` on entry (multiples of the kernel's register block mr x nr) narrowed,
 * columns first (halved, in whole nr panels), then rows (by mr), until the pool has about four
 * tasks per thread. */
void hpvm_tensor_task_shape(int64_t problems, int64_t m, int64_t n, int64_t mr, int64_t nr,
                            int64_t *rows, int64_t *cols);

/* The most taps (kh * kw) a depthwise window may have for the vector path. */
enum { HPVM_TENSOR_DEPTHWISE_MAX_TAPS = 64 };

/* The row length of one column phase of the depthwise kernel's padded plane: output blocks
 * of 16 columns (the last one rounded up: AVX-512 reads a whole vector for rows narrower than
 * one), the window's reach past them, and every input column. */
static inline int64_t hpvm_tensor_depthwise_phase(int64_t w, int64_t kw, int64_t ow,
                                                  int64_t pad_w, int64_t stride_w) {
  int64_t blocks = (ow + 15) / 16 * 16 + (kw - 1) / stride_w + 1;
  int64_t columns = (w + pad_w + stride_w - 1) / stride_w + 1;
  int64_t floats = blocks > columns ? blocks : columns;
  return (floats + 15) / 16 * 16; /* whole cache lines: rows start on one */
}

/* Floats of scratch the depthwise kernel's vector path needs for one plane: the window rows
 * of every output row, zero-padded, each split into stride_w column phases (0 when the
 * window has too many taps: the kernel then runs its scalar loops). */
static inline int64_t hpvm_tensor_depthwise_scratch(int64_t w, int64_t kh, int64_t kw,
                                                    int64_t oh, int64_t ow, int64_t pad_w,
                                                    int64_t stride_h, int64_t stride_w) {
  if (kh * kw > HPVM_TENSOR_DEPTHWISE_MAX_TAPS || oh <= 0 || ow <= 0)
    return 0;
  return ((oh - 1) * stride_h + kh) * stride_w *
             hpvm_tensor_depthwise_phase(w, kw, ow, pad_w, stride_w) +
         16; /* room to start on a cache line */
}

/* out[oh x ow] = activation(bias + sum over kh, kw of filter[kh][kw] * padded input): one
 * channel of a depthwise convolution (stride and padding as the op's; activation an
 * HPVM_RT_TENSOR_* activation, clipped at activation_max). `scratch` holds
 * hpvm_tensor_depthwise_scratch() floats (NULL, or a size of 0: scalar loops), zeroed before
 * the first plane and then passed unchanged to planes of the same sizes only. */
typedef void (*hpvm_tensor_depthwise_fn)(const float *input, int64_t h, int64_t w,
                                         const float *filter, int64_t kh, int64_t kw,
                                         float *output, int64_t oh, int64_t ow, int64_t pad_h,
                                         int64_t pad_w, int64_t stride_h, int64_t stride_w,
                                         float bias, int64_t activation, float activation_max,
                                         float *scratch);

/* Depthwise over 16 planes at once, plane l in vector lane l (planes narrower than a vector:
 * the deep layers' 7 x 7 and 14 x 14 images): plane l of the input at input + offset[l], of the
 * output at output + l * oh * ow, its filter at filter + tap_offset[l] ([kh][kw]), its bias
 * bias[l] (bias NULL: none). Each output the same fused multiply-adds over the taps (i, j) in
 * order, from the zero padding too, then + bias and the activation (not a logistic one): the
 * bits of hpvm_tensor_depthwise_fn. `scratch` holds hpvm_tensor_depthwise_lanes_scratch()
 * floats. */
typedef void (*hpvm_tensor_depthwise_lanes_fn)(const float *input, const int32_t *offset,
                                               int64_t h, int64_t w, const float *filter,
                                               const int32_t *tap_offset, const float *bias,
                                               int64_t kh, int64_t kw, float *output,
                                               int64_t oh, int64_t ow, int64_t pad_h,
                                               int64_t pad_w, int64_t stride_h,
                                               int64_t stride_w, int64_t activation,
                                               float activation_max, float *scratch);

/* Floats of scratch hpvm_tensor_depthwise_lanes_fn needs: the 16 planes zero-padded, a
 * vector per padded position. */
static inline int64_t hpvm_tensor_depthwise_lanes_scratch(int64_t h, int64_t w, int64_t pad_h,
                                                          int64_t pad_w, int64_t stride_h,
                                                          int64_t stride_w, int64_t kh,
                                                          int64_t kw, int64_t oh, int64_t ow) {
  int64_t rows = (oh - 1) * stride_h + kh, cols = (ow - 1) * stride_w + kw;
  rows = rows > h + pad_h ? rows : h + pad_h;
  cols = cols > w + pad_w ? cols : w + pad_w;
  return rows * cols * 16;
}

/* Stride-1 convolution blocks: out[r * out_plane + x] for r < rows filters (any count, in blocks of
 * MR, or HPVM_TENSOR_DIRECT_MR_WIDE for direct_wide) and x < cols (<= NR) consecutive positions
 * starting at column x0 of row y of `padded` (channels planes of plane_h x plane_w, zero-padded,
 * with at least NR + kw - 1 readable columns past x0 on every row read; output position x reads the
 * window whose top-left corner is padded column x0 + x), `weights` packed per block of MR filters
 * as [channel][kh][kw][MR] (blocks consecutive, zero past the last filter); then the epilogue: +
 * bias[r] (bias NULL: none) and the activation. */
typedef void (*hpvm_tensor_conv_direct_fn)(const float *padded, int64_t channels,
                                           int64_t plane_h, int64_t plane_w,
                                           const float *weights, int64_t kh, int64_t kw,
                                           float *out, int64_t out_plane, int64_t y,
                                           int64_t x0, int64_t rows, int64_t cols,
                                           const float *bias, int64_t activation,
                                           float activation_max);

/* Whether `out` pooling windows of `window` at `stride`, the first at -pad, are those of an
 * image of `size` padded by pad before it and by some end padding in [0, window) after it
 * (pool.c; the blocked pools check the same). */
int hpvm_tensor_pool_extent_valid(int64_t size, int64_t window, int64_t stride, int64_t pad,
                                  int64_t out);

/* One block of a convolution across filters (conv_across.c): tile[q * FB + f] = activation(bias[f]
 * + the window at position q < PB of filter f < FB), FB x PB the kernel's block (HPVM_TENSOR_FB x
 * filters_pb, or HPVM_TENSOR_FB_WIDE x HPVM_TENSOR_PB_WIDE), position q's window having its
 * top-left corner at src[offset[q]] (channel planes `plane` floats apart, rows plane_w apart),
 * `weights` packed as [channel][kh][kw][FB filters] and `bias` FB floats (NULL: none). Each sum
 * over (channel, i, j) in that order, one fused multiply-add per tap, from zero. */
typedef void (*hpvm_tensor_conv_filters_fn)(const float *src, const int64_t *offset,
                                            int64_t channels, int64_t plane, int64_t plane_w,
                                            const float *weights, int64_t kh, int64_t kw,
                                            const float *bias, int64_t activation,
                                            float activation_max, float *tile);
/* The same on HPVM_TENSOR_FB_WIDE filters (AVX-512), its sums started from `partial` (a tile
 * of sums this kernel left unfinished over the channels before; NULL: from zero), finished
 * into `tile` only with `finish` (else the sums as they are: a later call goes on over the
 * next channels, the same operations in the same order as one call). While it goes it
 * prefetches the weights of `ahead_taps` taps (32 floats each) from `ahead`, one tap per tap
 * of its own: the weights it will read next, which the caller chooses. */
typedef void hpvm_tensor_conv_filters_part_t(const float *src, const int64_t *offset,
                                             int64_t channels, int64_t plane, int64_t plane_w,
                                             const float *weights, int64_t kh, int64_t kw,
                                             const float *partial, int64_t finish,
                                             const float *ahead, int64_t ahead_taps,
                                             const float *bias, int64_t activation,
                                             float activation_max, float *tile);
typedef hpvm_tensor_conv_filters_part_t *hpvm_tensor_conv_filters_part_fn;
/* The same, and with `out_at` (and `finish`) the finished vector v of position q (filters 16 * v
 * to 16 * v + 15) stored at tile + out_at[q] + v * out_stride instead of in the tile: a blocked
 * output's vectors straight from the registers (out_at NULL: the tile, as above). */
typedef void hpvm_tensor_conv_filters_out_t(const float *src, const int64_t *offset,
                                            int64_t channels, int64_t plane, int64_t plane_w,
                                            const float *weights, int64_t kh, int64_t kw,
                                            const float *partial, int64_t finish,
                                            const float *ahead, int64_t ahead_taps,
                                            const float *bias, int64_t activation,
                                            float activation_max, float *tile,
                                            const int64_t *out_at, int64_t out_stride);
typedef hpvm_tensor_conv_filters_out_t *hpvm_tensor_conv_filters_out_fn;

/* Tap lists (the approximate convolutions of conv_taps.c, which skip output positions or filter
 * taps): a tap is one (channel, i, j) element of the filters' window, given as the offset of
 * the input it multiplies from the window's origin; `weights` hold one vector of filters per
 * tap (taps in the list's order). */

/* One block across filters: tile[q * FB + f] = activation(bias[f] + sum over t < taps of
 * weights[t * FB + f] * src[offset[q] + tap[t]]) for the taps_pb positions q (any offsets: any
 * stride, any pattern of kept positions); `bias` FB floats (NULL: none). */
typedef void (*hpvm_tensor_conv_taps_filters_fn)(const float *src, const int64_t *offset,
                                                 const int64_t *tap, int64_t taps,
                                                 const float *weights, const float *bias,
                                                 int64_t activation, float activation_max,
                                                 float *tile);

/* Blocks across positions: out[r * out_plane + x] = activation(bias[r] + sum over t < taps of
 * weights[t * MR + r] * src[tap[t] + x]) for r < rows filters (any count, in blocks of MR:
 * the weights packed [block][tap][MR], zero past the last filter) and x < cols (<= NR)
 * consecutive positions; reads src[tap[t] + x] for every x < NR. bias NULL: none. */
typedef void (*hpvm_tensor_conv_taps_direct_fn)(const float *src, const int64_t *tap,
                                                int64_t taps, const float *weights, float *out,
                                                int64_t out_plane, int64_t rows, int64_t cols,
                                                const float *bias, int64_t activation,
                                                float activation_max);

/* Half-precision products (hpvm_rt_tensor_matmul_half): depth [0, kc) x columns [0, cols) of
 * a row-major B of 16-bit values in `format` (ldb apart) widened to f32 into panels of `width`
 * columns dst[panel][kk][j], columns past cols zero (as gemm.c's pack_columns). */
typedef void (*hpvm_tensor_pack_half_fn)(const uint16_t *b, int64_t ldb, int64_t kc,
                                         int64_t cols, int64_t width, float *dst,
                                         int64_t format);

/* One plane of a pool (hpvm_rt_tensor_pool_f32's arguments, checked): out[oh x ow] = the
 * reduction (`kind`: max, min or mean; NaN propagates through max and min) of each window of
 * in[h x w], padding excluded (the mean divides by the whole window). The same bits on every
 * ISA: 2 x 2 windows at stride 2 run 8 outputs at a time in the scalar order. */
typedef void (*hpvm_tensor_pool_plane_fn)(const float *in, float *out, int64_t kind, int64_t h,
                                          int64_t w, int64_t window_h, int64_t window_w,
                                          int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                          int64_t pad_w, int64_t oh, int64_t ow);

/* x[i] = the activation of x[i] for i < count (as hpvm_tensor_activate, bit for bit, in
 * vectors): the epilogue of products and im2col convolutions after their bias. */
/* A tile of sums across filters to its filters' planes: out[r * out_plane + q] =
 * tile[q * fb + r] for q < positions (at most 16) and r < filters (the block's positions
 * consecutive in each plane). */
typedef void (*hpvm_tensor_scatter_tile_fn)(const float *tile, int64_t fb, int64_t positions,
                                            int64_t filters, float *out, int64_t out_plane);

typedef void (*hpvm_tensor_activate_fn)(float *x, int64_t count, int64_t activation,
                                        float activation_max);

/* dst[i] = src[i] rounded to `format` (as hpvm_tensor_narrow) for i < count. */
typedef void (*hpvm_tensor_narrow_half_fn)(const float *src, uint16_t *dst, int64_t count,
                                           int64_t format);

/* dst[i] = src[i] widened from `format` to f32 for i < count. */
typedef void (*hpvm_tensor_widen_half_fn)(const uint16_t *src, float *dst, int64_t count,
                                          int64_t format);

/* Exact conversions between f32 and the 16-bit formats (half.c; the ISA files' scalar path). */
float hpvm_tensor_widen(uint16_t bits, int64_t format);
uint16_t hpvm_tensor_narrow(float x, int64_t format);

#define HPVM_TENSOR_DECLARE_KERNELS(isa)                                                    \
  void hpvm_tensor_micro_kernel_##isa(int64_t k, const float *a, const float *b, float *c,      \
                                      int64_t ldc, int64_t rows, int64_t cols, int accumulate); \
  void hpvm_tensor_depthwise_##isa(const float *input, int64_t h, int64_t w,                    \
                                   const float *filter, int64_t kh, int64_t kw, float *output,  \
                                   int64_t oh, int64_t ow, int64_t pad_h, int64_t pad_w,        \
                                   int64_t stride_h, int64_t stride_w, float bias,              \
                                   int64_t activation, float activation_max, float *scratch);   \
  /* The depthwise kernel's scratch for one plane (see hpvm_tensor_depthwise_fn): the input's \
   * rows zero-padded and split into stride_w column phases (only the input's values written). */ \
  void hpvm_tensor_depthwise_prepare_##isa(const float *input, int64_t h, int64_t w, int64_t kh, \
                                           int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,   \
                                           int64_t pad_w, int64_t stride_h, int64_t stride_w,   \
                                           float *scratch);                                     \
  void hpvm_tensor_conv_direct_##isa(const float *padded, int64_t channels, int64_t plane_h,    \
                                     int64_t plane_w, const float *weights, int64_t kh,         \
                                     int64_t kw, float *out, int64_t out_plane, int64_t y,      \
                                     int64_t x0, int64_t rows, int64_t cols,                    \
                                     const float *bias, int64_t activation,                     \
                                     float activation_max);                                     \
  void hpvm_tensor_conv_filters_##isa(const float *src, const int64_t *offset,                 \
                                      int64_t channels, int64_t plane, int64_t plane_w,         \
                                      const float *weights, int64_t kh, int64_t kw,             \
                                      const float *bias, int64_t activation,                    \
                                      float activation_max, float *tile);                \
  void hpvm_tensor_conv_taps_filters_##isa(const float *src, const int64_t *offset,            \
                                           const int64_t *tap, int64_t taps,                   \
                                           const float *weights, const float *bias,            \
                                           int64_t activation, float activation_max,           \
                                           float *tile);                                       \
  void hpvm_tensor_conv_taps_direct_##isa(const float *src, const int64_t *tap, int64_t taps,  \
                                          const float *weights, float *out, int64_t out_plane, \
                                          int64_t rows, int64_t cols, const float *bias,       \
                                          int64_t activation, float activation_max);   \
  void hpvm_tensor_pack_half_##isa(const uint16_t *b, int64_t ldb, int64_t kc, int64_t cols,   \
                                   int64_t width, float *dst, int64_t format);                \
  void hpvm_tensor_narrow_half_##isa(const float *src, uint16_t *dst, int64_t count,          \
                                     int64_t format);                                          \
  void hpvm_tensor_widen_half_##isa(const uint16_t *src, float *dst, int64_t count,           \
                                    int64_t format);                                          \
  void hpvm_tensor_activate_##isa(float *x, int64_t count, int64_t activation,               \
                                  float activation_max);                                       \
  void hpvm_tensor_skinny_##isa(int64_t rows, int64_t k, int64_t kc, const float *a,          \
                                int64_t lda, const float *b, int64_t ldb, float *c,            \
                                int64_t ldc, int64_t cols);                                    \
  void hpvm_tensor_pool_plane_##isa(const float *in, float *out, int64_t kind, int64_t h,      \
                                    int64_t w, int64_t window_h, int64_t window_w,             \
                                    int64_t stride_h, int64_t stride_w, int64_t pad_h,         \
                                    int64_t pad_w, int64_t oh, int64_t ow);                    \
  void hpvm_tensor_contract_fused_##isa(int64_t k, const float *a, const float *b, float *c,   \
                                        int64_t ldc, int64_t rows, int64_t cols, int load,     \
                                        float init);                                           \
  void hpvm_tensor_contract_unfused_##isa(int64_t k, const float *a, const float *b, float *c, \
                                          int64_t ldc, int64_t rows, int64_t cols, int load,   \
                                          float init);

HPVM_TENSOR_DECLARE_KERNELS(generic)
#if defined(__x86_64__)
#define HPVM_TENSOR_HAVE_AVX2 1
HPVM_TENSOR_DECLARE_KERNELS(avx2)
/* The hottest ones for AVX-512F (kernels_avx512.c): one 16-float register where the AVX2
 * ones have two, the same sums bit for bit. The GEMM micro-kernel's block is
 * HPVM_TENSOR_CONTRACT_MR_WIDE x _NR_WIDE. */
#define HPVM_TENSOR_HAVE_AVX512 1
void hpvm_tensor_micro_kernel_avx512(int64_t k, const float *a, const float *b, float *c,
                                     int64_t ldc, int64_t rows, int64_t cols, int accumulate);
void hpvm_tensor_conv_direct_wide_avx512(const float *padded, int64_t channels, int64_t plane_h,
                                         int64_t plane_w, const float *weights, int64_t kh,
                                         int64_t kw, float *out, int64_t out_plane, int64_t y,
                                         int64_t x0, int64_t rows, int64_t cols,
                                         const float *bias, int64_t activation,
                                         float activation_max);
void hpvm_tensor_conv_direct_avx512(const float *padded, int64_t channels, int64_t plane_h,
                                    int64_t plane_w, const float *weights, int64_t kh,
                                    int64_t kw, float *out, int64_t out_plane, int64_t y,
                                    int64_t x0, int64_t rows, int64_t cols, const float *bias,
                                    int64_t activation, float activation_max);
/* hpvm_tensor_conv_filters_part_t on HPVM_TENSOR_PB_WIDE and HPVM_TENSOR_PB_SHORT positions. */
hpvm_tensor_conv_filters_part_t hpvm_tensor_conv_filters_wide_avx512;
hpvm_tensor_conv_filters_part_t hpvm_tensor_conv_filters_short_avx512;
/* The hpvm_tensor_conv_filters_out_t kernel of `fb` filters (HPVM_TENSOR_FB or _FB_WIDE) x
 * `pb` positions (HPVM_TENSOR_PB_WIDE or _PB_SHORT), its tile [pb][fb];
 * `blocked`: on input in blocks of 16 channels (HPVM_RT_TENSOR_INPUT_BLOCKED), channel c of
 * tap (i, j) of position q at src + offset[q] + (c / 16) * plane + c % 16 + i * plane_w + j *
 * 16 (`plane` a block of channels' plane, plane_w a row of it, both in floats), where NCHW
 * input has it at src + offset[q] + c * plane + i * plane_w + j. NULL for other blocks. The
 * same sums, bit for bit, as hpvm_tensor_conv_filters_wide_avx512's. */
hpvm_tensor_conv_filters_out_fn hpvm_tensor_conv_filters_kind_avx512(int blocked, int64_t fb,
                                                                     int64_t pb);
void hpvm_tensor_conv_filters_avx512(const float *src, const int64_t *offset, int64_t channels,
                                     int64_t plane, int64_t plane_w, const float *weights,
                                     int64_t kh, int64_t kw, const float *bias,
                                     int64_t activation, float activation_max, float *tile);
/* hpvm_tensor_conv_taps_filters_fn for HPVM_TENSOR_PB_WIDE positions (strided convolutions). */
void hpvm_tensor_conv_taps_filters_avx512(const float *src, const int64_t *offset,
                                          const int64_t *tap, int64_t taps,
                                          const float *weights, const float *bias,
                                          int64_t activation, float activation_max,
                                          float *tile);
void hpvm_tensor_depthwise_lanes_avx512(const float *input, const int32_t *offset, int64_t h,
                                        int64_t w, const float *filter,
                                        const int32_t *tap_offset, const float *bias,
                                        int64_t kh, int64_t kw, float *output, int64_t oh,
                                        int64_t ow, int64_t pad_h, int64_t pad_w,
                                        int64_t stride_h, int64_t stride_w, int64_t activation,
                                        float activation_max, float *scratch);
/* hpvm_tensor_depthwise_fn in 16-float vectors (rows of 16 columns or more). */
void hpvm_tensor_depthwise_avx512(const float *input, int64_t h, int64_t w, const float *filter,
                                  int64_t kh, int64_t kw, float *output, int64_t oh, int64_t ow,
                                  int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                  int64_t stride_w, float bias, int64_t activation,
                                  float activation_max, float *scratch);
/* hpvm_tensor_pool_plane_fn: windows at strides 1 and 2 in 16-float vectors, edges
 * included (the AVX2 kernel for the rest). */
void hpvm_tensor_pool_plane_avx512(const float *in, float *out, int64_t kind, int64_t h,
                                   int64_t w, int64_t window_h, int64_t window_w,
                                   int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                   int64_t pad_w, int64_t oh, int64_t ow);
/* hpvm_tensor_scatter_tile_fn: each filter's positions gathered into one vector. */
void hpvm_tensor_scatter_tile_avx512(const float *tile, int64_t fb, int64_t positions,
                                     int64_t filters, float *out, int64_t out_plane);
/* hpvm_tensor_activate_fn in 16-float vectors (the last one masked). */
void hpvm_tensor_activate_avx512(float *x, int64_t count, int64_t activation,
                                 float activation_max);
/* hpvm_tensor_contract_fn on blocks of HPVM_TENSOR_CONTRACT_MR_WIDE x _NR_WIDE (a panel of p is
 * k x 12, one of q k x 32). */
void hpvm_tensor_contract_fused_avx512(int64_t k, const float *a, const float *b, float *c,
                                       int64_t ldc, int64_t rows, int64_t cols, int load,
                                       float init);
void hpvm_tensor_contract_unfused_avx512(int64_t k, const float *a, const float *b, float *c,
                                         int64_t ldc, int64_t rows, int64_t cols, int load,
                                         float init);
#endif

/* The kernels of one ISA (dispatch.c picks them once per process). */
typedef struct hpvm_tensor_kernels_t {
  hpvm_tensor_micro_kernel_fn micro;
  /* The micro-kernel's register block (its panels' widths): HPVM_TENSOR_MR x NR, or
   * HPVM_TENSOR_CONTRACT_MR_WIDE x _NR_WIDE. */
  int64_t micro_mr, micro_nr;
  hpvm_tensor_depthwise_fn depthwise;
  /* 16 narrow planes at once (AVX-512; NULL on the other ISAs). */
  hpvm_tensor_depthwise_lanes_fn depthwise_lanes;
  hpvm_tensor_conv_direct_fn direct;
  /* The most positions per block `direct` computes (its `cols`): HPVM_TENSOR_NR, or
   * HPVM_TENSOR_NR_WIDE. */
  int64_t direct_nr;
  /* `direct` on blocks of HPVM_TENSOR_DIRECT_MR_WIDE filters (its weights packed in blocks
   * of as many; AVX-512, NULL on the other ISAs): 24 accumulators for deep reductions. */
  hpvm_tensor_conv_direct_fn direct_wide;
  hpvm_tensor_conv_filters_fn filters;
  /* The positions per block `filters` computes (HPVM_TENSOR_FB filters): HPVM_TENSOR_PB, or
   * HPVM_TENSOR_PB_WIDE. */
  int64_t filters_pb;
  /* The same for HPVM_TENSOR_FB_WIDE filters x HPVM_TENSOR_PB_WIDE positions (AVX-512; NULL
   * on the other ISAs). */
  hpvm_tensor_conv_filters_part_fn filters_wide;
  /* filters_wide on HPVM_TENSOR_PB_SHORT positions (NULL where filters_wide is). */
  hpvm_tensor_conv_filters_part_fn filters_short;
  hpvm_tensor_conv_taps_filters_fn taps_filters;
  /* The positions per block `taps_filters` computes: HPVM_TENSOR_PB, or HPVM_TENSOR_PB_WIDE. */
  int64_t taps_pb;
  hpvm_tensor_conv_taps_direct_fn taps_direct;
  hpvm_tensor_pack_half_fn pack_half;
  hpvm_tensor_narrow_half_fn narrow_half;
  hpvm_tensor_widen_half_fn widen_half;
  hpvm_tensor_pool_plane_fn pool_plane;
  hpvm_tensor_skinny_fn skinny;
  hpvm_tensor_activate_fn activate;
  /* NULL: the caller's scalar loop. */
  hpvm_tensor_scatter_tile_fn scatter_tile;
  hpvm_tensor_contract_fn contract_fused;
  hpvm_tensor_contract_fn contract_unfused;
  /* The register block of the contraction kernels (their panels' widths): rows of p (mr) and
   * columns of q (nr); HPVM_TENSOR_MR x NR, or HPVM_TENSOR_CONTRACT_MR_WIDE x _NR_WIDE. */
  int64_t contract_mr, contract_nr;
  /* Contraction kernels on blocks of HPVM_TENSOR_MR x NR, for contractions of at most MR rows
   * or NR columns (where a wide block would compute mostly padding): the same bits. */
  hpvm_tensor_contract_fn contract_fused_narrow, contract_unfused_narrow;
} hpvm_tensor_kernels_t;

/* The kernels to use: AVX-512F's three where the CPU has it, AVX2+FMA where it has both, else
 * (or after hpvm_tensor_use_generic_kernels(1)) the baseline. HPVM_TENSOR_ISA=avx2 or generic
 * in the environment (read once) keeps to that ISA, so that tests cover every path. */
const hpvm_tensor_kernels_t *hpvm_tensor_kernels(void);

/* hpvm_rt_parallel_for(rank, extents, body, context), or body over everything on the calling
 * thread when the pool cannot run it (never fails). */
void hpvm_tensor_run_grid(uint32_t rank, const int64_t extents[2],
                          hpvm_rt_parallel_for_fn_t body, void *context);

/* Multiply-adds below which a grid runs on the calling thread alone: handing a parallel-for
 * to the pool's threads costs a few microseconds, about what 2^18 multiply-adds take on one
 * thread (transformer_encoder's products of 16 x 64 x 64 to 16 x 64 x 192, two threads: 0.16
 * ms a call against 0.09 on one). */
enum { HPVM_TENSOR_SERIAL_WORK = 1 << 18 };

/* hpvm_tensor_run_grid, or body over everything on the calling thread where `work` (its
 * multiply-adds, a double: no overflow) is below HPVM_TENSOR_SERIAL_WORK: the same tasks either way, so the same
 * bits. */
void hpvm_tensor_run_sized(uint32_t rank, const int64_t extents[2],
                           hpvm_rt_parallel_for_fn_t body, void *context, double work);

/* The checks every entry point starts with (`what` names it in the warning): 0, with one
 * warning line, for a negative one of the `count` sizes, or an activation not of
 * hpvm_rt_tensor_activation_t. */
int hpvm_tensor_sizes_valid(const char *what, int count, const int64_t *values);
int hpvm_tensor_activation_valid(const char *what, int64_t activation);

/* The FCHW `weights` of `groups` groups in blocks of `block` filters, as the convolution kernels
 * read them: dst[group][filter block][channel][tap][block], zeros past a group's last filter
 * (conv.c). Returns the end of what it wrote. */
float *hpvm_tensor_pack_filter_blocks(const float *weights, int64_t groups, int64_t per_group_f,
                                      int64_t per_group_c, int64_t window, int64_t block,
                                      float *dst);

/* A convolution across filters (conv_across.c; arguments as hpvm_rt_tensor_conv2d_f32, already
 * checked): any stride and window; `wide`: by the kernels'
 * filters_wide (non-NULL). `constant`: the filter and bias are constants of the program,
 * packed once (hpvm_tensor_packed_constant). */
void hpvm_tensor_conv_across(const float *input, const float *filter, const float *bias,
                             float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                             int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                             int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                             int64_t activation, float max, int constant, int wide);

/* hpvm_tensor_conv_across on operands in the layouts `layouts` says (hpvm_rt_tensor_layout_t
 * bits: HPVM_RT_TENSOR_INPUT_BLOCKED, the input [n][c / 16][h][w][16]; _OUTPUT_BLOCKED, the
 * output [n][f / 16][oh][ow][16]; 0: both NCHW), natively: the input zero-padded in its own
 * layout, a blocked output's results stored per position as whole vectors of 16 filters
 * (conv_across.c; AVX-512 kernels of 32 filters, 16 for groups of 16). The same bits
 * as hpvm_rt_tensor_conv2d_constant_f32 on the NCHW tensors (each sum over (channel, i, j) from
 * zero, + bias, the activation; the taps that read only padding are not dropped, which changes
 * nothing but for infinite or NaN weights). Returns 1 when done, or 0 having touched nothing,
 * for the caller's fallback (the operands reordered around the NCHW convolution), where it does
 * not handle the case: without the AVX-512 kernels (other ISAs, HPVM_TENSOR_ISA,
 * hpvm_tensor_use_generic_kernels), a layouts word of other bits, a blocked input whose
 * channels per group (c / groups) are not a multiple of 16, a blocked output whose filters per
 * group are not; or where the fallback is faster (hpvm_tensor_conv_across_blocked_pays).
 * Arguments already checked as hpvm_tensor_conv_args_valid does; `constant` as
 * hpvm_tensor_conv_across's. */
int hpvm_tensor_conv_across_blocked(const float *input, const float *filter, const float *bias,
                                    float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                                    int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                    int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                    int64_t stride_w, int64_t groups, int64_t activation,
                                    float max, int constant, int64_t layouts);

/* Whether hpvm_tensor_conv_across_blocked beats its caller's fallback on a convolution of
 * these (hpvm_rt_tensor_conv2d_f32's) arguments: always with a blocked output; with an NCHW
 * output only where conv.c's NCHW convolution also runs across filters or is strided (not 1 x
 * 1 windows over more than 64 positions, nor groups of 16 filters or fewer at stride 1 over
 * rows of 16 or more). hpvm_tensor_conv_across_blocked returns 0 where it is not. */
int hpvm_tensor_conv_across_blocked_pays(int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                         int64_t stride_h, int64_t stride_w,
                                         int64_t per_group_f, int64_t layouts);

/* A convolution (arguments as hpvm_rt_tensor_conv2d_f32, already checked) as products of the
 * filters by the im2col matrix of each image (gemm.c): any stride, groups and window. */
void hpvm_tensor_conv_im2col(const float *input, const float *filter, const float *bias,
                             float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                             int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                             int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                             int64_t activation, float max);

/* The argument checks of hpvm_rt_tensor_conv2d_f32 (`what` names the caller in the warning):
 * 0, with one warning line (none for NULL operands), when nothing may be computed. */
int hpvm_tensor_conv_args_valid(const char *what, const float *input, const float *filter,
                                const float *output, int64_t n, int64_t c, int64_t h,
                                int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
                                int64_t ow, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                int64_t stride_w, int64_t groups, int64_t activation);

/* A convolution through the tap lists of conv_taps.c (arguments as
 * hpvm_rt_tensor_conv2d_approx_f32, already checked): `knob` HPVM_RT_TENSOR_KNOB_EXACT skips
 * nothing (rate and offset unused), which is how exact strided convolutions run. `constant`:
 * the filter and bias are constants of the program, their packed weights made once
 * (hpvm_tensor_packed_constant). */
void hpvm_tensor_conv_taps(const float *input, const float *filter, const float *bias,
                           float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                           int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                           int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                           int64_t activation, float activation_max, int64_t knob, int64_t rate,
                           int64_t offset, int constant);

/* The logistic function 1 / (1 + exp(-v)) exactly as the compiled code computes
 * hpvm.tensor.sigmoid (MLIR's polynomial expansion of exp): -v clamped to [-87.8, 88.8] (NaN
 * kept), n = floor(x * log2(e) + 0.5) clamped to [-127, 127], r = x - n * ln(2) in two fused
 * steps, exp(r) - 1 - r by a degree-5 polynomial in Horner's form, 2^n from its exponent bits,
 * then 1 / (1 + (1 + y) * 2^n); every fmaf one rounding, every other step rounded, in the
 * same order, so that a fused epilogue gives the unfused graph's bits. The vector variants
 * (sigmoid8, sigmoid16) do the same operations lane by lane. */
static inline float hpvm_tensor_sigmoid(float v) {
  float x = -v;
  x = x < -87.8f ? -87.8f : x;
  x = x > 88.8f ? 88.8f : x;
  float n = floorf(fmaf(x, 1.44269502f, 0.5f));
  n = n < -127.0f ? -127.0f : n;
  n = n > 127.0f ? 127.0f : n;
  float r = fmaf(-0.693359375f, n, x);
  r = fmaf(2.12194442e-4f, n, r);
  float p = fmaf(r, 1.98756912e-4f, 0.00139819994f);
  p = fmaf(p, r, 0.00833345205f);
  p = fmaf(p, r, 0.0416657962f);
  p = fmaf(p, r, 0.166666657f);
  p = fmaf(p, r, 0.5f);
  float r2 = r * r;
  float y = fmaf(p, r2, r);
  y = y + 1.0f;
  /* fptosi of NaN (x86: INT32_MIN) only reaches a NaN result. */
  uint32_t bits = ((uint32_t)(n == n ? (int32_t)n : INT32_MIN) + 127u) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof(scale));
  float e = y * scale;
  e = e + 1.0f;
  return 1.0f / e;
}

/* HPVM_RT_TENSOR_HARDSWISH of one value: the map's operations one at a time (separate
 * statements: never contracted into a fused multiply-add). */
static inline float hpvm_tensor_hardswish(float x) {
  float t = x * 0.166666672f;
  t = t + 0.5f;
  t = t != t || t < 1.0f ? t : 1.0f;
  t = t != t || t > 0.0f ? t : 0.0f;
  return x * t;
}

/* Whether an activation is left to `activate` after the kernels' own epilogues (which add the
 * bias and clamp only): the logistic ones (hpvm_tensor_sigmoid) and HardSwish. */
static inline int hpvm_tensor_activation_late(int64_t activation) {
  return activation == HPVM_RT_TENSOR_SIGMOID || activation == HPVM_RT_TENSOR_SILU ||
         activation == HPVM_RT_TENSOR_HARDSWISH;
}

/* The scalar epilogue's activation (clipped relu clips at max). */
static inline float hpvm_tensor_activate(float v, int64_t activation, float max) {
  if (activation == HPVM_RT_TENSOR_IDENTITY)
    return v;
  if (activation == HPVM_RT_TENSOR_SIGMOID)
    return hpvm_tensor_sigmoid(v);
  if (activation == HPVM_RT_TENSOR_SILU)
    return v * hpvm_tensor_sigmoid(v);
  if (activation == HPVM_RT_TENSOR_HARDSWISH)
    return hpvm_tensor_hardswish(v);
  v = v > 0.0f ? v : 0.0f;
  return activation == HPVM_RT_TENSOR_CLIPPED_RELU && v > max ? max : v;
}

/* Tests: nonzero makes later calls use the baseline kernels whatever the CPU has (call it
 * while no tensor kernel runs). */
void hpvm_tensor_use_generic_kernels(int on);

/* Tests: nonzero makes later exact contractions (hpvm_rt_contract_f32) run as without memory
 * for packing (each block folded through the caller's step, unpacked; call it while no
 * contraction runs). */
void hpvm_tensor_contract_without_memory(int on);

/* Tests: zero makes later exact contractions have each task pack its own blocks (the path of
 * products whose packed operands pass 64 MiB); nonzero (the default) packs both operands whole
 * first where they fit. Call it while no contraction runs. */
void hpvm_tensor_contract_pack_whole(int on);

/* Tests: nonzero makes later approximate convolutions run as without memory for packing (the
 * plain loops over the unpacked filters; call it while no tensor kernel runs). */
void hpvm_tensor_approx_without_memory(int on);

/* Tests: nonzero makes later exact convolutions (conv.c, conv_across.c) run as without memory
 * for their packed filters and gathered pixels (the plain loops; call it while no tensor
 * kernel runs); hpvm_tensor_conv_memory_refused says whether it is on. */
void hpvm_tensor_conv_without_memory(int on);
int hpvm_tensor_conv_memory_refused(void);

#endif /* HPVM_RT_TENSOR_KERNELS_H */
