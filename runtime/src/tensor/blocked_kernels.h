/* Internal interface of the blocked layout's loops (NCHW16c: [n][c / 16][h][w][16], see
 * hpvm_rt.h): the loops of blocked_isa.inc, compiled for the baseline in blocked.c (_generic)
 * and for AVX-512F in blocked_avx512.c (_avx512), which blocked.c picks per call from the
 * kernels dispatch.c chose (`hpvm_tensor_kernels`), so that HPVM_TENSOR_ISA and the tests'
 * hpvm_tensor_use_generic_kernels reach them too. Every loop works on one block of 16
 * channels: a vector is the 16 channels of one position. */
#ifndef HPVM_RT_TENSOR_BLOCKED_KERNELS_H
#define HPVM_RT_TENSOR_BLOCKED_KERNELS_H

#include "kernels.h"

#include <stdint.h>

/* The order in which a pool combines a window's values, the one hpvm_rt_tensor_pool_f32 takes
 * for the same window on the NCHW tensor (kernels_isa.inc's pool_plane on every ISA):
 * - WINDOWS: from the reduction's start, the window's positions inside the image in the order
 *   of rows, then columns (the padding skipped);
 * - PAIRS (2 x 2 windows at stride 2 inside the image): (a, b) and (c, d) of each row, then the
 *   two, a mean as ((a + b) + c) + d;
 * - WHOLE (a window over the whole plane, no padding, 32 positions or more): pool_all's 32
 *   running results (position k in result k % 32), combined as its four 8-lane accumulators
 *   are, then its lanes in order, then the last positions in order. */
enum { HPVM_BLOCKED_POOL_WINDOWS = 0, HPVM_BLOCKED_POOL_PAIRS = 1, HPVM_BLOCKED_POOL_WHOLE = 2 };

/* A pool of one block of channels (hpvm_rt_tensor_pool_f32's arguments). */
typedef struct hpvm_blocked_pool_t {
  int64_t kind, h, w, window_h, window_w, stride_h, stride_w, pad_h, pad_w, oh, ow;
  int64_t order; /* HPVM_BLOCKED_POOL_* */
} hpvm_blocked_pool_t;

/* A depthwise convolution of one block of channels (hpvm_rt_tensor_conv2d_f32's arguments).
 * `activation` is the epilogue's own (identity, relu, clipped relu at `max`); `late`, when not
 * NULL, then runs the logistic activation `late_activation` over each finished output row (the
 * kernels' `activate`: the bits of the NCHW path, which applies it to finished planes). */
typedef struct hpvm_blocked_depthwise_t {
  int64_t h, w, kh, kw, oh, ow, pad_h, pad_w, stride_h, stride_w;
  int64_t activation;
  float max;
  hpvm_tensor_activate_fn late;
  int64_t late_activation;
} hpvm_blocked_depthwise_t;

/* The reorders of one block: `count` positions of 16 channel planes (`plane` floats apart) to
 * the block's vectors (16 floats a position), and back. */
typedef void (*hpvm_blocked_to_fn)(const float *planes, int64_t plane, float *blocked,
                                   int64_t count);
typedef void (*hpvm_blocked_from_fn)(const float *blocked, float *planes, int64_t plane,
                                     int64_t count);

/* Output rows [y0, y1) of one block's pool: `in` the block's input plane ([h][w][16]), `out`
 * its output plane ([oh][ow][16]). */
typedef void (*hpvm_blocked_pool_fn)(const hpvm_blocked_pool_t *p, const float *in, float *out,
                                     int64_t y0, int64_t y1);

/* Output rows [y0, y1) of one block's depthwise convolution: `in` and `out` the block's planes,
 * `weights` its taps as vectors ([kh][kw][16]), `bias` its 16 biases (NULL: none). Each output
 * the sum from +0 over the taps (i, j) in order that read the image (one fused multiply-add a
 * tap where the chosen kernels fuse them: AVX-512; the baseline's `acc + w * x` otherwise),
 * then + bias, then the activation: the NCHW depthwise kernels' bits (their taps on padding
 * add w * 0, which changes no finite sum: a sum from +0 is never -0). */
typedef void (*hpvm_blocked_depthwise_fn)(const hpvm_blocked_depthwise_t *d, const float *in,
                                          const float *weights, const float *bias, float *out,
                                          int64_t y0, int64_t y1);

/* The loops of one ISA; `depthwise` NULL where the blocked layout has none giving the bits of
 * the chosen NCHW depthwise kernel (AVX2's fused sums: blocked.c then converts). */
typedef struct hpvm_blocked_kernels_t {
  hpvm_blocked_to_fn to;
  hpvm_blocked_from_fn from;
  hpvm_blocked_pool_fn pool;
  hpvm_blocked_depthwise_fn depthwise;
} hpvm_blocked_kernels_t;

#define HPVM_BLOCKED_DECLARE_KERNELS(isa)                                                    \
  void hpvm_blocked_to_##isa(const float *planes, int64_t plane, float *blocked,             \
                             int64_t count);                                                 \
  void hpvm_blocked_from_##isa(const float *blocked, float *planes, int64_t plane,           \
                               int64_t count);                                               \
  void hpvm_blocked_pool_##isa(const hpvm_blocked_pool_t *p, const float *in, float *out,    \
                               int64_t y0, int64_t y1);                                      \
  void hpvm_blocked_depthwise_##isa(const hpvm_blocked_depthwise_t *d, const float *in,      \
                                    const float *weights, const float *bias, float *out,     \
                                    int64_t y0, int64_t y1);

HPVM_BLOCKED_DECLARE_KERNELS(generic)
#ifdef HPVM_TENSOR_HAVE_AVX512
HPVM_BLOCKED_DECLARE_KERNELS(avx512)
#endif

#endif /* HPVM_RT_TENSOR_BLOCKED_KERNELS_H */
