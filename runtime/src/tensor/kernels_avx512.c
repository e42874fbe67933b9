/* The three hottest tensor loops for AVX-512 (CMake compiles this file with -mavx512f
 * -mavx512vl -mfma; dispatch.c picks them only when the CPU has AVX-512F): the GEMM micro-kernel,
 * the direct convolution block and the block across filters. Same blocks and packing as
 * kernels_isa.inc (MR x NR = 6 x 16), one 16-float register where the AVX2 variant has two
 * 8-float ones, and every sum accumulated in the same order with the same fused multiply-adds:
 * the results are the AVX2 variant's, bit for bit. The direct kernel also takes blocks of
 * 2 x NR positions (direct_nr), the kernel across filters 12 positions (filters_pb), so that
 * 12 accumulators hide the multiply-adds' latency; the wide kernel across filters has blocks
 * of its own (32 filters x 12 positions), packed for it, each sum still the AVX2 kernel's; its
 * instantiations for hpvm_rt.h's blocked layout (hpvm_tensor_conv_filters_kind_avx512) read
 * a blocked input and store a blocked output's vectors whole, the same sums.
 * HPVM_TENSOR_ISA=avx2 (or generic) in the environment keeps the narrower kernels. */
#include "kernels.h"

#include "hpvm/hpvm_rt.h"

#include <immintrin.h>
#include <string.h>

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

static inline v16f load16(const float *p) {
  v16f v;
  memcpy(&v, p, sizeof(v));
  return v;
}

static inline void store16(float *p, v16f v) { memcpy(p, &v, sizeof(v)); }


/* A broadcast (from memory where x was loaded: a load-port broadcast, not a shuffle on the
 * port the 512-bit multiply-adds also use). */
static inline v16f splat16(float x) { return (v16f)_mm512_set1_ps(x); }

/* acc + a * b in one fused multiply-add (whatever the compiler's contraction settings), as
 * fma8 of the AVX2 variant. */
static inline v16f fma16(v16f a, v16f b, v16f acc) {
  return (v16f)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)acc);
}

/* hpvm_tensor_sigmoid (kernels.h) on 16 lanes: the same operations as sigmoid8 of
 * kernels_isa.inc, each lane the same bits. */
static inline v16f sigmoid16(v16f v) {
  /* The clamps by vmaxps / vminps with the bound first: they return their second operand when
   * either is NaN, so a NaN passes as through the selects of sigmoid8 (x < bound ? bound : x),
   * in one instruction instead of four. */
  v16f x = -v;
  x = (v16f)_mm512_max_ps((__m512)splat16(-87.8f), (__m512)x);
  x = (v16f)_mm512_min_ps((__m512)splat16(88.8f), (__m512)x);
  v16f n = (v16f)_mm512_floor_ps(
      _mm512_fmadd_ps((__m512)x, (__m512)splat16(1.44269502f), (__m512)splat16(0.5f)));
  n = (v16f)_mm512_max_ps((__m512)splat16(-127.0f), (__m512)n);
  n = (v16f)_mm512_min_ps((__m512)splat16(127.0f), (__m512)n);
  __m512 r = _mm512_fmadd_ps((__m512)splat16(-0.693359375f), (__m512)n, (__m512)x);
  r = _mm512_fmadd_ps((__m512)splat16(2.12194442e-4f), (__m512)n, r);
  __m512 p =
      _mm512_fmadd_ps(r, (__m512)splat16(1.98756912e-4f), (__m512)splat16(0.00139819994f));
  p = _mm512_fmadd_ps(p, r, (__m512)splat16(0.00833345205f));
  p = _mm512_fmadd_ps(p, r, (__m512)splat16(0.0416657962f));
  p = _mm512_fmadd_ps(p, r, (__m512)splat16(0.166666657f));
  p = _mm512_fmadd_ps(p, r, (__m512)splat16(0.5f));
  __m512 r2 = _mm512_mul_ps(r, r);
  __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), (__m512)splat16(1.0f));
  __m512i bits = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvttps_epi32((__m512)n), _mm512_set1_epi32(127)), 23);
  __m512 e = _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
  e = _mm512_add_ps(e, (__m512)splat16(1.0f));
  return (v16f)_mm512_div_ps((__m512)splat16(1.0f), e);
}

/* finish8 of kernels_isa.inc on 16 floats: + bias, then the activation. */
static inline v16f finish16(v16f v, v16f bias, int64_t activation, v16f max) {
  v += bias;
  if (activation == HPVM_RT_TENSOR_IDENTITY)
    return v;
  v16i positive = v > splat16(0.0f);
  v = (v16f)((v16i)v & positive);
  if (activation == HPVM_RT_TENSOR_CLIPPED_RELU) {
    v16i above = v > max;
    v = (v16f)(((v16i)max & above) | ((v16i)v & ~above));
  }
  return v;
}

/* A product rounded before the sum that follows (an empty asm the compiler cannot see into:
 * never contracted into a fused multiply-add, whatever -ffp-contract says). */
static inline __attribute__((always_inline)) v16f opaque16(v16f v) {
  __asm__("" : "+v"(v));
  return v;
}

enum { CMR = HPVM_TENSOR_CONTRACT_MR_WIDE, CNR = HPVM_TENSOR_CONTRACT_NR_WIDE };

/* k steps of a 12 x 32 block: acc[r] += a[p * CMR + r] * the 32 floats at b + p * CNR, one fused
 * multiply-add (fused) or a rounded product then a rounded sum per lane. Unrolled: the loop's
 * own instructions otherwise take issue slots of the multiply-add ports. */
static inline __attribute__((always_inline)) void
block_steps16(int fused, int64_t k, const float *a, const float *b, v16f acc[CMR][2]) {
  _Pragma("GCC unroll 4") for (int64_t p = 0; p < k; ++p) {
    v16f b0 = load16(b), b1 = load16(b + 16);
    __builtin_prefetch(b + 8 * CNR);
    __builtin_prefetch(b + 8 * CNR + 16);
    _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) {
      v16f x = splat16(a[r]);
      if (fused) {
        acc[r][0] = fma16(x, b0, acc[r][0]);
        acc[r][1] = fma16(x, b1, acc[r][1]);
      } else {
        acc[r][0] = acc[r][0] + opaque16(x * b0);
        acc[r][1] = acc[r][1] + opaque16(x * b1);
      }
    }
    a += CMR;
    b += CNR;
  }
}

/* A block of 12 x 32 (HPVM_TENSOR_CONTRACT_MR_WIDE x _NR_WIDE): 24 accumulators, where the AVX2
 * kernel's 6 x 16 in 512-bit registers would be 6 (and the multiply-add units would wait on
 * their latency). Each element's sum as the AVX2 kernel's, bit for bit. */
void hpvm_tensor_micro_kernel_avx512(int64_t k, const float *a, const float *b, float *c,
                                     int64_t ldc, int64_t rows, int64_t cols, int accumulate) {
  enum { R = CMR, N = CNR };
  v16f acc[R][2];
  _Pragma("GCC unroll 12") for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = splat16(0.0f);
  block_steps16(1, k, a, b, acc);
  if (rows == R && cols == N) {
    _Pragma("GCC unroll 12") for (int r = 0; r < R; ++r) {
      float *row = c + r * ldc;
      store16(row, accumulate ? load16(row) + acc[r][0] : acc[r][0]);
      store16(row + 16, accumulate ? load16(row + 16) + acc[r][1] : acc[r][1]);
    }
    return;
  }
  float tile[R][N];
  _Pragma("GCC unroll 12") for (int r = 0; r < R; ++r) {
    store16(tile[r], acc[r][0]);
    store16(tile[r] + 16, acc[r][1]);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + tile[r][j] : tile[r][j];
}

/* The direct kernels' blocks of filters: HPVM_TENSOR_MR (6), as the AVX2 kernel's, and
 * HPVM_TENSOR_DIRECT_MR_WIDE (12): with 2 x NR positions 24 accumulators, as the GEMM
 * micro-kernel's 12 x 32 (12 kept 1 x 1 layers at about 60% of the peak). DMR: the larger. */
enum { DMR = HPVM_TENSOR_DIRECT_MR_WIDE };

/* acc[r] += w[r] * the NR floats at src, for the MR filters of one tap. */
static inline __attribute__((always_inline)) void
direct_step(const int MR, const float *src, const float *w, v16f acc[DMR]) {
  v16f v = load16(src);
  _Pragma("GCC unroll 12") for (int r = 0; r < MR; ++r)
    acc[r] = fma16(splat16(w[r]), v, acc[r]);
}

/* The same for 2 x NR floats. */
static inline __attribute__((always_inline)) void
direct_step2(const int MR, const float *src, const float *w, v16f acc[DMR][2]) {
  v16f v0 = load16(src), v1 = load16(src + 16);
  _Pragma("GCC unroll 12") for (int r = 0; r < MR; ++r) {
    v16f x = splat16(w[r]);
    acc[r][0] = fma16(x, v0, acc[r][0]);
    acc[r][1] = fma16(x, v1, acc[r][1]);
  }
}

/* The epilogue of a block: + bias, the activation, stored at out[r * out_plane + x] for
 * r < rows and x < cols (through a tile when cols is not a whole vector). MR and vectors are
 * constants where it is inlined: the loops unroll and the accumulators stay in registers (a
 * loop to `rows` indexed them in memory, zeroed by a call to memset per block). */
static inline __attribute__((always_inline)) void
direct_store(const int MR, const v16f *acc, const int vectors, float *out, int64_t out_plane,
             int64_t rows, int64_t cols, const float *bias, int64_t activation, v16f max) {
  if (rows == MR && cols == 16 * vectors) {
    /* A whole block: straight stores (the checks per row and vector cost a fifth of the
     * kernel over mobilenet's 16-channel expansions). */
    _Pragma("GCC unroll 12") for (int r = 0; r < MR; ++r) {
      v16f b = splat16(bias ? bias[r] : 0.0f);
      _Pragma("GCC unroll 2") for (int v = 0; v < vectors; ++v)
        store16(out + r * out_plane + 16 * v, finish16(acc[r * vectors + v], b, activation, max));
    }
    return;
  }
  _Pragma("GCC unroll 12") for (int r = 0; r < MR; ++r) {
    if (r >= rows)
      break;
    v16f b = splat16(bias ? bias[r] : 0.0f);
    _Pragma("GCC unroll 2") for (int v = 0; v < vectors; ++v) {
      v16f result = finish16(acc[r * vectors + v], b, activation, max);
      int64_t left = cols - 16 * v;
      if (left >= 16) {
        store16(out + r * out_plane + 16 * v, result);
      } else if (left > 0) {
        float tile[16];
        store16(tile, result);
        memcpy(out + r * out_plane + 16 * v, tile, sizeof(float) * (size_t)left);
      }
    }
  }
}

static inline __attribute__((always_inline)) void
conv_direct_block(const int MR, const float *padded, int64_t channels, int64_t plane_h,
                                    int64_t plane_w, const float *weights, int64_t kh,
                                    int64_t kw, float *out, int64_t out_plane, int64_t y,
                                    int64_t x0, int64_t rows, int64_t cols, const float *bias,
                                    int64_t activation, float activation_max) {
  int64_t block_weights = channels * kh * kw * MR;
  int64_t plane = plane_h * plane_w;
  v16f max = splat16(activation_max);
  for (int64_t r0 = 0; r0 < rows; r0 += MR, weights += block_weights) {
    int64_t live = rows - r0 < MR ? rows - r0 : MR;
    const float *block_bias = bias ? bias + r0 : NULL;
    float *block_out = out + r0 * out_plane;
    const float *src = padded + y * plane_w + x0;
    const float *w = weights;
    if (cols > HPVM_TENSOR_NR) {
      /* Up to 2 x NR positions (the caller's blocks of direct_nr). */
      v16f acc[DMR][2];
      _Pragma("GCC unroll 12") for (int r = 0; r < DMR; ++r)
        acc[r][0] = acc[r][1] = splat16(0.0f);
      if (kh == 1 && kw == 1) {
        for (int64_t c = 0; c < channels; ++c, src += plane, w += MR) {
          __builtin_prefetch(w + HPVM_TENSOR_WEIGHTS_AHEAD);
          direct_step2(MR, src, w, acc);
        }
      } else {
        for (int64_t c = 0; c < channels; ++c, src += plane)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j, w += MR)
              direct_step2(MR, src + i * plane_w + j, w, acc);
      }
      direct_store(MR, &acc[0][0], 2, block_out, out_plane, live, cols, block_bias, activation,
                   max);
      continue;
    }
    v16f acc[DMR];
    _Pragma("GCC unroll 12") for (int r = 0; r < DMR; ++r)
      acc[r] = splat16(0.0f);
    if (kh == 1 && kw == 1) {
      for (int64_t c = 0; c < channels; ++c, src += plane, w += MR)
        direct_step(MR, src, w, acc);
    } else {
      for (int64_t c = 0; c < channels; ++c, src += plane)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j, w += MR)
            direct_step(MR, src + i * plane_w + j, w, acc);
    }
    direct_store(MR, acc, 1, block_out, out_plane, live, cols, block_bias, activation, max);
  }
}

void hpvm_tensor_conv_direct_avx512(const float *padded, int64_t channels, int64_t plane_h,
                                    int64_t plane_w, const float *weights, int64_t kh,
                                    int64_t kw, float *out, int64_t out_plane, int64_t y,
                                    int64_t x0, int64_t rows, int64_t cols, const float *bias,
                                    int64_t activation, float activation_max) {
  conv_direct_block(HPVM_TENSOR_MR, padded, channels, plane_h, plane_w, weights, kh, kw, out,
                    out_plane, y, x0, rows, cols, bias, activation, activation_max);
}

void hpvm_tensor_conv_direct_wide_avx512(const float *padded, int64_t channels, int64_t plane_h,
                                         int64_t plane_w, const float *weights, int64_t kh,
                                         int64_t kw, float *out, int64_t out_plane, int64_t y,
                                         int64_t x0, int64_t rows, int64_t cols,
                                         const float *bias, int64_t activation,
                                         float activation_max) {
  /* The activation a constant in each copy: its epilogue without the tests. */
#define DIRECT_WIDE(ACTIVATION)                                                                \
  conv_direct_block(HPVM_TENSOR_DIRECT_MR_WIDE, padded, channels, plane_h, plane_w, weights, kh, \
                    kw, out, out_plane, y, x0, rows, cols, bias, ACTIVATION, activation_max)
  if (activation == HPVM_RT_TENSOR_IDENTITY)
    DIRECT_WIDE(HPVM_RT_TENSOR_IDENTITY);
  else if (activation == HPVM_RT_TENSOR_RELU)
    DIRECT_WIDE(HPVM_RT_TENSOR_RELU);
  else
    DIRECT_WIDE(activation);
#undef DIRECT_WIDE
}

/* The epilogue of a block across filters: tile[q * FB + f] = finish(acc[q][f] + bias[f]) for
 * the HPVM_TENSOR_PB_WIDE positions q (bias NULL: none). */
static inline __attribute__((always_inline)) void
store_filter_tile(const v16f acc[HPVM_TENSOR_PB_WIDE], const float *bias, int64_t activation,
                  float activation_max, float *tile) {
  v16f b = bias ? load16(bias) : splat16(0.0f);
  v16f max = splat16(activation_max);
  for (int q = 0; q < HPVM_TENSOR_PB_WIDE; ++q)
    store16(tile + q * HPVM_TENSOR_FB, finish16(acc[q], b, activation, max));
}

/* The most accumulators of the kernels across filters (pb positions x nv vectors of 16 filters:
 * 12 x 2, 7 x 2, 12 x 1), of the 32 registers. */
enum { FILTERS_ACC = 24 };

/* The taps of a block of pb positions x nv vectors of 16 filters, in the order (channel, i, j),
 * tap (c, i, j) of position q at at[q][c * plane + i * plane_w + j * step]; inlined where pb,
 * nv, step, kw (and kh) are constants, so that a row of the window is one straight run of
 * steps. */
static inline __attribute__((always_inline)) void
filters_taps(int pb, int nv, int64_t step, const float *const at[HPVM_TENSOR_PB_WIDE],
             int64_t channels, int64_t plane, int64_t plane_w, const float *weights, int64_t kh,
             int64_t kw, const float *ahead, const float *ahead_end, v16f acc[FILTERS_ACC]) {
  const int64_t fb = 16 * nv;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i) {
      int64_t row = c * plane + i * plane_w;
      for (int64_t j = 0; j < kw; ++j, weights += fb, ahead += fb) {
        if (ahead < ahead_end) {
          _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v) __builtin_prefetch(ahead + 16 * v);
        }
        v16f wv[2];
        _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v) wv[v] = load16(weights + 16 * v);
        _Pragma("GCC unroll 12") for (int q = 0; q < pb; ++q) {
          v16f x = splat16(at[q][row + j * step]);
          _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v)
            acc[q * nv + v] = fma16(x, wv[v], acc[q * nv + v]);
        }
      }
    }
}

/* filters_taps over `channels` channels of the input, NCHW or (`blocked`, a constant: the NCHW
 * instantiations keep the loops they had) in blocks of 16 channels, channel c of tap (i, j) at
 * at[q] + (c / 16) * plane + c % 16 + i * plane_w + j * 16: a block at a time, its positions'
 * pointers moved to it, so that the steps are the NCHW ones with channels a float apart and taps
 * 16 (the channel's block and lane worked out per channel made clang keep broadcasts on the
 * stack: 20% slower). */
static inline __attribute__((always_inline)) void
filters_steps(int pb, int nv, int blocked, const float *const at[HPVM_TENSOR_PB_WIDE],
              int64_t channels, int64_t plane, int64_t plane_w, const float *weights, int64_t kh,
              int64_t kw, const float *ahead, int64_t ahead_taps, v16f acc[FILTERS_ACC]) {
  const int64_t fb = 16 * nv;
  const float *ahead_end = ahead + ahead_taps * fb;
  if (!blocked) {
    filters_taps(pb, nv, 1, at, channels, plane, plane_w, weights, kh, kw, ahead, ahead_end,
                 acc);
    return;
  }
  for (int64_t c0 = 0; c0 < channels; c0 += 16) {
    const float *block[HPVM_TENSOR_PB_WIDE];
    _Pragma("GCC unroll 12") for (int q = 0; q < pb; ++q) block[q] = at[q] + c0 / 16 * plane;
    int64_t lanes = channels - c0 < 16 ? channels - c0 : 16, taps = c0 * kh * kw * fb;
    filters_taps(pb, nv, 16, block, lanes, 1, plane_w, weights + taps, kh, kw, ahead + taps,
                 ahead_end, acc);
  }
}

/* 16 * nv filters (nv vectors: HPVM_TENSOR_FB_WIDE = 32 filters in two) x pb positions: pb * nv
 * accumulators, and per tap nv loads of weights and pb broadcasts for pb * nv multiply-adds,
 * bound by the multiply-adds from 2 positions on where nv is 2 (16 filters x 12 positions loaded
 * 13 values per 12: bound by the loads). The accumulators start from `partial` (NULL: zero) and
 * end in `tile` ([q][16 * nv]), finished or, without `finish`, as they are (a sum over the first
 * channels, which a later call goes on with: the same operations in the same order as one call
 * over all the channels). With `out_at` (and `finish`), the finished vector v of position q goes
 * to tile + out_at[q] + v * out_stride instead: a blocked output's vectors of 16 filters stored
 * from the registers, with no tile between (1 x 1 layers of few channels, whose blocks are short:
 * 16 -> 96 filters at 112 x 112 0.34 -> 0.24 ms, 32 -> 64 at 56 x 56 0.082 -> 0.066, one
 * thread). */
static inline __attribute__((always_inline)) void
filters_wide(int pb, int nv, int blocked, const float *src, const int64_t *offset,
             int64_t channels, int64_t plane, int64_t plane_w, const float *weights, int64_t kh,
             int64_t kw, const float *partial, int64_t finish, const float *ahead,
             int64_t ahead_taps, const float *bias, int64_t activation, float activation_max,
             float *tile, const int64_t *out_at, int64_t out_stride) {
  const int fb = 16 * nv;
  v16f acc[FILTERS_ACC];
  const float *at[HPVM_TENSOR_PB_WIDE];
  _Pragma("GCC unroll 12") for (int q = 0; q < pb; ++q) {
    _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v)
      acc[q * nv + v] = partial ? load16(partial + q * fb + 16 * v) : splat16(0.0f);
    at[q] = src + offset[q];
  }
  if (kw == 3)
    filters_steps(pb, nv, blocked, at, channels, plane, plane_w, weights, kh, 3, ahead,
                  ahead_taps, acc);
  else if (kw == 5) /* a window row one straight run: 64 -> 192 5 x 5 at 16 x 16 1.08-1.12x */
    filters_steps(pb, nv, blocked, at, channels, plane, plane_w, weights, kh, 5, ahead,
                  ahead_taps, acc);

  else if (kw == 1 && kh == 1)
    filters_steps(pb, nv, blocked, at, channels, plane, plane_w, weights, 1, 1, ahead,
                  ahead_taps, acc);
  else
    filters_steps(pb, nv, blocked, at, channels, plane, plane_w, weights, kh, kw, ahead,
                  ahead_taps, acc);
  if (!finish) {
    _Pragma("GCC unroll 12") for (int q = 0; q < pb; ++q)
      _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v)
        store16(tile + q * fb + 16 * v, acc[q * nv + v]);
    return;
  }
  v16f b[2], max = splat16(activation_max);
  _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v)
    b[v] = bias ? load16(bias + 16 * v) : splat16(0.0f);
  _Pragma("GCC unroll 12") for (int q = 0; q < pb; ++q)
    _Pragma("GCC unroll 2") for (int v = 0; v < nv; ++v)
      store16(out_at ? tile + out_at[q] + v * out_stride : tile + q * fb + 16 * v,
              finish16(acc[q * nv + v], b[v], activation, max));
}

/* The exported kernels of filters_wide: one per block of positions (the tile's layout only). */
#define FILTERS_WIDE(NAME, PB)                                                                 \
  void NAME(const float *src, const int64_t *offset, int64_t channels, int64_t plane,         \
            int64_t plane_w, const float *weights, int64_t kh, int64_t kw,                    \
            const float *partial, int64_t finish, const float *ahead, int64_t ahead_taps,     \
            const float *bias, int64_t activation, float activation_max, float *tile) {       \
    filters_wide(PB, 2, 0, src, offset, channels, plane, plane_w, weights, kh, kw, partial,   \
                 finish, ahead, ahead_taps, bias, activation, activation_max, tile, NULL, 0); \
  }
FILTERS_WIDE(hpvm_tensor_conv_filters_wide_avx512, HPVM_TENSOR_PB_WIDE)
FILTERS_WIDE(hpvm_tensor_conv_filters_short_avx512, HPVM_TENSOR_PB_SHORT)
#undef FILTERS_WIDE

/* The kernels of hpvm_tensor_conv_filters_kind_avx512 (conv_across.c's blocked operands): one
 * per block of positions and of filters, and input layout. */
#define FILTERS_OUT(NAME, PB, NV, BLOCKED)                                                     \
  static void NAME(const float *src, const int64_t *offset, int64_t channels, int64_t plane,  \
                   int64_t plane_w, const float *weights, int64_t kh, int64_t kw,             \
                   const float *partial, int64_t finish, const float *ahead,                  \
                   int64_t ahead_taps, const float *bias, int64_t activation,                 \
                   float activation_max, float *tile, const int64_t *out_at,                  \
                   int64_t out_stride) {                                                      \
    filters_wide(PB, NV, BLOCKED, src, offset, channels, plane, plane_w, weights, kh, kw,     \
                 partial, finish, ahead, ahead_taps, bias, activation, activation_max, tile,  \
                 out_at, out_stride);                                                         \
  }
FILTERS_OUT(filters_32x12, HPVM_TENSOR_PB_WIDE, 2, 0)
FILTERS_OUT(filters_32x7, HPVM_TENSOR_PB_SHORT, 2, 0)
FILTERS_OUT(filters_16x12, HPVM_TENSOR_PB_WIDE, 1, 0)
FILTERS_OUT(filters_16x7, HPVM_TENSOR_PB_SHORT, 1, 0)
FILTERS_OUT(blocked_32x12, HPVM_TENSOR_PB_WIDE, 2, 1)
FILTERS_OUT(blocked_32x7, HPVM_TENSOR_PB_SHORT, 2, 1)
FILTERS_OUT(blocked_16x12, HPVM_TENSOR_PB_WIDE, 1, 1)
FILTERS_OUT(blocked_16x7, HPVM_TENSOR_PB_SHORT, 1, 1)
#undef FILTERS_OUT

hpvm_tensor_conv_filters_out_fn hpvm_tensor_conv_filters_kind_avx512(int blocked, int64_t fb,
                                                                     int64_t pb) {
  if (fb == HPVM_TENSOR_FB_WIDE && pb == HPVM_TENSOR_PB_WIDE)
    return blocked ? blocked_32x12 : filters_32x12;
  if (fb == HPVM_TENSOR_FB_WIDE && pb == HPVM_TENSOR_PB_SHORT)
    return blocked ? blocked_32x7 : filters_32x7;
  if (fb == HPVM_TENSOR_FB && pb == HPVM_TENSOR_PB_WIDE)
    return blocked ? blocked_16x12 : filters_16x12;
  if (fb == HPVM_TENSOR_FB && pb == HPVM_TENSOR_PB_SHORT)
    return blocked ? blocked_16x7 : filters_16x7;
  return NULL;
}

void hpvm_tensor_conv_filters_avx512(const float *src, const int64_t *offset, int64_t channels,
                                     int64_t plane, int64_t plane_w, const float *weights,
                                     int64_t kh, int64_t kw, const float *bias,
                                     int64_t activation, float activation_max, float *tile) {
  /* HPVM_TENSOR_PB_WIDE positions: 12 accumulators keep both 512-bit multiply-add units busy
   * through their latency (6 would not); each sum is still the one of the AVX2 kernel. */
  enum { PB = HPVM_TENSOR_PB_WIDE };
  v16f acc[PB];
  const float *at[PB];
  for (int q = 0; q < PB; ++q) {
    acc[q] = splat16(0.0f);
    at[q] = src + offset[q];
  }
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i) {
      int64_t row = c * plane + i * plane_w;
      for (int64_t j = 0; j < kw; ++j, weights += HPVM_TENSOR_FB) {
        v16f w = load16(weights);
        for (int q = 0; q < PB; ++q)
          acc[q] = fma16(splat16(at[q][row + j]), w, acc[q]);
      }
    }
  store_filter_tile(acc, bias, activation, activation_max, tile);
}

void hpvm_tensor_conv_taps_filters_avx512(const float *src, const int64_t *offset,
                                          const int64_t *tap, int64_t taps,
                                          const float *weights, const float *bias,
                                          int64_t activation, float activation_max,
                                          float *tile) {
  /* As hpvm_tensor_conv_filters_avx512: 12 positions, one 16-float accumulator each; each
   * sum the one of the AVX2 kernel (the taps in the list's order). */
  enum { PB = HPVM_TENSOR_PB_WIDE };
  v16f acc[PB];
  const float *at[PB];
  for (int q = 0; q < PB; ++q) {
    acc[q] = splat16(0.0f);
    at[q] = src + offset[q];
  }
  for (int64_t t = 0; t < taps; ++t, weights += HPVM_TENSOR_FB) {
    int64_t o = tap[t];
    v16f w = load16(weights);
    for (int q = 0; q < PB; ++q)
      acc[q] = fma16(splat16(at[q][o]), w, acc[q]);
  }
  store_filter_tile(acc, bias, activation, activation_max, tile);
}

/* ---- Exact contractions (hpvm_rt_contract_f32, contract.c) ------------------------------
 * A register block of HPVM_TENSOR_CONTRACT_MR_WIDE x HPVM_TENSOR_CONTRACT_NR_WIDE = 12 x 32
 * elements: 24 accumulators (of the 32 zmm registers), two loads of q and 12 broadcasts of p
 * per step of the depth for 24 multiply-adds, where the AVX2 block's 6 x 16 gives 12 (and the
 * 512-bit units would wait on their latency). Each lane is one element of s going through the
 * sequential fold's rounded operations in its order, as in kernels_isa.inc's contract_block:
 * the same bits whatever the block. */

static inline __attribute__((always_inline)) void
contract_block16(int fused, int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                 int64_t rows, int64_t cols, int load, float init) {
  v16f acc[CMR][2];
  int whole = rows == CMR && cols == CNR;
  /* Partial blocks go through a tile: lanes past rows or cols run on zeros and are dropped. */
  float tile[CMR][CNR];
  if (!load) {
    _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) acc[r][0] = acc[r][1] = splat16(init);
  } else if (whole) {
    _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) {
      acc[r][0] = load16(c + r * ldc);
      acc[r][1] = load16(c + r * ldc + 16);
    }
  } else {
    memset(tile, 0, sizeof(tile));
    for (int64_t r = 0; r < rows; ++r)
      memcpy(tile[r], c + r * ldc, sizeof(float) * (size_t)cols);
    _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) {
      acc[r][0] = load16(tile[r]);
      acc[r][1] = load16(tile[r] + 16);
    }
  }
  block_steps16(fused, k, a, b, acc);
  if (whole) {
    _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) {
      store16(c + r * ldc, acc[r][0]);
      store16(c + r * ldc + 16, acc[r][1]);
    }
    return;
  }
  _Pragma("GCC unroll 12") for (int r = 0; r < CMR; ++r) {
    store16(tile[r], acc[r][0]);
    store16(tile[r] + 16, acc[r][1]);
  }
  for (int64_t r = 0; r < rows; ++r)
    memcpy(c + r * ldc, tile[r], sizeof(float) * (size_t)cols);
}

void hpvm_tensor_contract_fused_avx512(int64_t k, const float *a, const float *b, float *c,
                                       int64_t ldc, int64_t rows, int64_t cols, int load,
                                       float init) {
  contract_block16(1, k, a, b, c, ldc, rows, cols, load, init);
}

void hpvm_tensor_contract_unfused_avx512(int64_t k, const float *a, const float *b, float *c,
                                         int64_t ldc, int64_t rows, int64_t cols, int load,
                                         float init) {
  contract_block16(0, k, a, b, c, ldc, rows, cols, load, init);
}

/* ---- Depthwise convolutions ---------------------------------------------------------------
 * The AVX2 kernel's padded rows (zero-padded, each split into stride_w column phases, rows
 * and phases starting on cache lines), then output rows in tiles of up to 4 rows x 4 vectors of
 * 16 columns (the last vector of a row overlapping the one before: the same values again),
 * where the AVX2 kernel has 8-float ones: each output the same fused multiply-adds over the
 * taps (i, j) in order, then + bias and the activation, bit for bit. Rows of 16 columns or
 * more keep only the padded rows the next tile reads, in a ring (stride 2 rows split by
 * permutes); rows narrower than 16 columns: the whole padded plane, one masked vector a row,
 * 4 rows at a time (their 25-tap sums are chains of dependent multiply-adds). */

/* A tile of ROWS output rows x BLOCKS vectors of 16 columns, the vector b of each row at
 * column min(x + 16 b, ow - 16) (the last one overlapping the one before where ow is not a
 * multiple of 16: the same values again): tap (i, j) of output row r reads
 * row[r * kh + i][column[j] + that column]. ROWS x BLOCKS independent sums (up to 8) keep the
 * multiply-adds' latency hidden; each sum is still the taps' in order. */
static inline __attribute__((always_inline)) void
depthwise_tile16(const int ROWS, const int BLOCKS, const float *const *row, int64_t x,
                 int64_t ow, const int64_t *column, const v16f *weight, int64_t kh, int64_t kw,
                 float *out, v16f bias, int64_t activation, v16f max) {
  v16f acc[4][4];
  int64_t at[4];
  _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b) {
    at[b] = x + 16 * b < ow - 16 ? x + 16 * b : ow - 16;
    _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) acc[r][b] = splat16(0.0f);
  }
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
        _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b)
          acc[r][b] = fma16(weight[i * kw + j], load16(row[r * kh + i] + column[j] + at[b]),
                            acc[r][b]);
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
    _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b)
      store16(out + r * ow + at[b], finish16(acc[r][b], bias, activation, max));
}

/* A tile of depthwise_tile16's for 3 x 3 windows at strides SH, SW of 1 or 2, its vectors at
 * x + 16 b (x a multiple of 16; the last block of a row stored under a mask of the columns
 * before ow): padded row k's vectors loaded once and multiplied into every output row r that
 * reads it (tap i = k - SH r), made from aligned loads (a column phase each at stride 2) and a
 * lane shift for the third column, instead of loads across cache lines, which bound the loop.
 * Each sum still takes the taps in the order (i, j): the same bits. */
static inline __attribute__((always_inline)) void
depthwise_tile16_3x3(const int ROWS, const int BLOCKS, const int SH, const int SW,
                     const float *const *row, int64_t phase, int64_t x, int64_t ow,
                     const v16f *weight, float *out, v16f bias, int64_t activation, v16f max) {
  v16f acc[4][4];
  _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b)
    _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) acc[r][b] = splat16(0.0f);
  _Pragma("GCC unroll 9") for (int k = 0; k < (ROWS - 1) * SH + 3; ++k) {
    /* Padded row k: tap i = k - SH r of output row r = min(k / SH, ROWS - 1). */
    int rk = k / SH < ROWS - 1 ? k / SH : ROWS - 1;
    const float *src = row[rk * 3 + k - SH * rk] + x;
    _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b) {
      __m512i lo = _mm512_load_si512(src + 16 * b), hi = _mm512_load_si512(src + 16 * b + 16);
      v16f v[3];
      v[0] = (v16f)lo;
      if (SW == 1) {
        v[1] = (v16f)_mm512_alignr_epi32(hi, lo, 1);
        v[2] = (v16f)_mm512_alignr_epi32(hi, lo, 2);
      } else {
        /* Column 2 x' + 1 in the odd phase, 2 x' + 2 the even phase's next. */
        v[1] = (v16f)_mm512_load_si512(src + phase + 16 * b);
        v[2] = (v16f)_mm512_alignr_epi32(hi, lo, 1);
      }
      _Pragma("GCC unroll 3") for (int j = 0; j < 3; ++j)
        _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) {
          int i = k - SH * r;
          if (i >= 0 && i < 3)
            acc[r][b] = fma16(weight[i * 3 + j], v[j], acc[r][b]);
        }
    }
  }
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
    _Pragma("GCC unroll 4") for (int b = 0; b < BLOCKS; ++b) {
      int64_t left = ow - x - 16 * b;
      __mmask16 live = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1);
      _mm512_mask_storeu_ps(out + r * ow + x + 16 * b, live,
                            (__m512)finish16(acc[r][b], bias, activation, max));
    }
}

/* S1: 0 the tile of any window and strides, 2 + 2 (SH - 1) + (SW - 1) the 3 x 3 window at
 * strides SH, SW; `column[1]` is the odd phase at stride 2. */
#define DEPTHWISE_TILE16(S1, ROWS, BLOCKS, row, x, ow, column, weight, kh, kw, ...)            \
  do {                                                                                         \
    if (S1 >= 2)                                                                               \
      depthwise_tile16_3x3(ROWS, BLOCKS, (S1 - 2) / 2 + 1, (S1 - 2) % 2 + 1, row, column[1],   \
                           x, ow, weight, __VA_ARGS__);                                        \
    else                                                                                       \
      depthwise_tile16(ROWS, BLOCKS, row, x, ow, column, weight, kh, kw, __VA_ARGS__);         \
  } while (0)

/* ROWS output rows, their columns in tiles of up to 4 vectors (S1: DEPTHWISE_TILE16's). */
static inline __attribute__((always_inline)) void
depthwise_row_tiles16(const int S1, const int ROWS, const float *const *row, int64_t ow,
                      const int64_t *column, const v16f *weight, int64_t kh, int64_t kw,
                      float *out, v16f bias, int64_t activation, v16f max) {
  for (int64_t x = 0; x < ow;) {
    int64_t left = (ow - x + 15) / 16;
    if (left >= 4) {
      DEPTHWISE_TILE16(S1, ROWS, 4, row, x, ow, column, weight, kh, kw, out, bias, activation,
                       max);
      x += 64;
    } else if (left == 3) {
      DEPTHWISE_TILE16(S1, ROWS, 3, row, x, ow, column, weight, kh, kw, out, bias, activation,
                       max);
      x += 48;
    } else if (left >= 2) {
      DEPTHWISE_TILE16(S1, ROWS, 2, row, x, ow, column, weight, kh, kw, out, bias, activation,
                       max);
      x += 32;
    } else {
      DEPTHWISE_TILE16(S1, ROWS, 1, row, x, ow, column, weight, kh, kw, out, bias, activation,
                       max);
      x += 16;
    }
  }
}

/* Rows narrower than 16 columns (the 14 x 14 and 7 x 7 planes of deep layers): ROWS rows at a
 * time, each one vector read past its row's end (the scratch's rows are at least 16 columns
 * plus the window wide) and stored under a mask of its ow columns. */
static inline __attribute__((always_inline)) void
depthwise_narrow16(const int ROWS, const float *base, int64_t row_step, int64_t row_floats,
                   const int64_t *column, const v16f *weight, int64_t kh, int64_t kw, float *out,
                   int64_t ow, v16f bias, int64_t activation, v16f max) {
  v16f acc[4];
  __mmask16 live = (__mmask16)((1u << ow) - 1);
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) acc[r] = splat16(0.0f);
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
        acc[r] = fma16(weight[i * kw + j],
                       load16(base + r * row_step + i * row_floats + column[j]), acc[r]);
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
    _mm512_mask_storeu_ps(out + r * ow, live, (__m512)finish16(acc[r], bias, activation, max));
}

/* The plane a depthwise kernel reads, with the layout of its padded, phase-split rows. */
typedef struct depthwise_plane_t {
  const float *input;
  int64_t h, w, pad_h, pad_w, stride_h, stride_w;
  int64_t phase, row_floats; /* hpvm_tensor_depthwise_phase; stride_w phases of it */
} depthwise_plane_t;

/* Padded row r of the plane, split into its column phases, into `dst` (row_floats floats whose
 * padding columns are zero): the input's row, or zeros for a row of the padding. Stride 2 by
 * two-source permutes of 32 columns at a time (the tail under masks), others as the AVX2
 * kernel's prepare does it: the same values either way. */
static void ring_row16(const depthwise_plane_t *p, int64_t r, float *dst) {
  int64_t iy = r - p->pad_h;
  if (iy < 0 || iy >= p->h) {
    memset(dst, 0, sizeof(float) * (size_t)p->row_floats);
    return;
  }
  const float *src = p->input + iy * p->w;
  if (p->stride_w == 1) {
    /* In vectors: rows are short, and a call to memcpy per row cost as much as the copy. */
    float *to = dst + p->pad_w;
    int64_t x = 0;
    for (; x + 16 <= p->w; x += 16)
      _mm512_storeu_ps(to + x, _mm512_loadu_ps(src + x));
    if (x < p->w) {
      __mmask16 live = (__mmask16)((1u << (p->w - x)) - 1);
      _mm512_mask_storeu_ps(to + x, live, _mm512_maskz_loadu_ps(live, src + x));
    }
    return;
  }
  if (p->stride_w != 2) {
    for (int64_t x = 0, c = p->pad_w; x < p->w; ++x, ++c)
      dst[(c % p->stride_w) * p->phase + c / p->stride_w] = src[x];
    return;
  }
  /* Input column 2m + q lands in phase (q + pad_w) % 2 at m + (pad_w + q - phase) / 2. */
  int64_t p_even = p->pad_w % 2, p_odd = 1 - p_even;
  float *even = dst + p_even * p->phase + (p->pad_w - p_even) / 2;
  float *odd = dst + p_odd * p->phase + (p->pad_w + 1 - p_odd) / 2;
  const __m512i even_lanes = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                              4, 2, 0);
  const __m512i odd_lanes = _mm512_add_epi32(even_lanes, _mm512_set1_epi32(1));
  int64_t x = 0;
  for (; x + 32 <= p->w; x += 32) {
    __m512 lo = _mm512_loadu_ps(src + x), hi = _mm512_loadu_ps(src + x + 16);
    _mm512_storeu_ps(even + x / 2, _mm512_permutex2var_ps(lo, even_lanes, hi));
    _mm512_storeu_ps(odd + x / 2, _mm512_permutex2var_ps(lo, odd_lanes, hi));
  }
  if (x < p->w) {
    int64_t n = p->w - x;
    __mmask16 lo_live = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
    __mmask16 hi_live = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1 : 0);
    __m512 lo = _mm512_maskz_loadu_ps(lo_live, src + x);
    __m512 hi = _mm512_maskz_loadu_ps(hi_live, src + x + 16);
    _mm512_mask_storeu_ps(even + x / 2, (__mmask16)((1u << ((n + 1) / 2)) - 1),
                          _mm512_permutex2var_ps(lo, even_lanes, hi));
    _mm512_mask_storeu_ps(odd + x / 2, (__mmask16)((1u << (n / 2)) - 1),
                          _mm512_permutex2var_ps(lo, odd_lanes, hi));
  }
}

/* `now` (<= 4) output rows of a ring's tile, their padded rows at `row` (S1: as for
 * DEPTHWISE_TILE16). */
static inline __attribute__((always_inline)) void
depthwise_ring_rows16(const int S1, int64_t now, const float *const *row, int64_t ow,
                      const int64_t *column, const v16f *weight, int64_t kh, int64_t kw,
                      float *out, v16f bias, int64_t activation, v16f max) {
  if (now == 4) {
    depthwise_row_tiles16(S1, 4, row, ow, column, weight, kh, kw, out, bias, activation, max);
  } else if (now >= 2) {
    depthwise_row_tiles16(S1, 2, row, ow, column, weight, kh, kw, out, bias, activation, max);
    if (now == 3)
      depthwise_row_tiles16(S1, 1, row + 2 * kh, ow, column, weight, kh, kw, out + 2 * ow, bias,
                            activation, max);
  } else {
    depthwise_row_tiles16(S1, 1, row, ow, column, weight, kh, kw, out, bias, activation, max);
  }
}

/* Rows of 16 columns or more, 4 output rows at a time (tiles of up to 16 sums: the loads of
 * the rows, most of them across two cache lines, bound the loop more than the multiply-adds'
 * latency): the padded rows they read kept in a ring (in the first-level cache), each made
 * once, after the sums of the rows before. */
static inline __attribute__((always_inline)) void
depthwise_ring16(const int S1, const depthwise_plane_t *p, float *ring, const int64_t *column,
                 const v16f *weight, int64_t kh, int64_t kw, float *output, int64_t oh,
                 int64_t ow, v16f bias, int64_t activation, v16f max) {
  enum { MAX_ROWS = 4 };
  const float *row[MAX_ROWS * HPVM_TENSOR_DEPTHWISE_MAX_TAPS];
  int64_t rows = MAX_ROWS;
  if (rows > oh)
    rows = oh;
  int64_t slots = kh + (rows - 1) * p->stride_h; /* <= the scratch's rows */
  /* Padded rows [0, made) have been made, row `made` goes to slot made_slot; the tile's first
   * padded row `top` is in slot top_slot (no divisions: they cost more than the tile). */
  int64_t made = 0, made_slot = 0, top_slot = 0;
  for (; made < (rows - 1) * p->stride_h + kh; ++made) {
    ring_row16(p, made, ring + made_slot * p->row_floats);
    made_slot = made_slot + 1 == slots ? 0 : made_slot + 1;
  }
  for (int64_t y = 0; y < oh; y += rows) {
    int64_t now = oh - y < rows ? oh - y : rows;
    /* Walked slot by slot (a loop the compiler would otherwise make into scatters). */
    for (int64_t r = 0; r < now; ++r) {
      int64_t slot = top_slot + r * p->stride_h;
      slot = slot < slots ? slot : slot - slots;
      for (int64_t i = 0; i < kh; ++i) {
        row[r * kh + i] = ring + slot * p->row_floats;
        slot = slot + 1 == slots ? 0 : slot + 1;
      }
    }
    top_slot += rows * p->stride_h;
    while (top_slot >= slots)
      top_slot -= slots;
    depthwise_ring_rows16(S1, now, row, ow, column, weight, kh, kw, output + y * ow, bias,
                          activation, max);
    /* The next rows' padded rows, made after these rows' sums (not just before they are read:
     * a load that straddles two stores still in flight waits for both to reach the cache). */
    int64_t next = y + rows + (oh - y - rows < rows ? oh - y - rows : rows);
    for (; made < (next - 1) * p->stride_h + kh && y + rows < oh; ++made) {
      ring_row16(p, made, ring + made_slot * p->row_floats);
      made_slot = made_slot + 1 == slots ? 0 : made_slot + 1;
    }
  }
}

/* Padded row py of a plane whose padded rows are at most 32 columns, as two vectors: columns
 * [0, 16) in *lo and [16, 32) in *hi, zeros for padding (masked off the loads, whose masked
 * lanes never fault). */
static inline __attribute__((always_inline)) void
narrow_row16(const depthwise_plane_t *p, int64_t py, __m512 *lo, __m512 *hi) {
  int64_t iy = py - p->pad_h;
  if (iy < 0 || iy >= p->h) {
    *lo = *hi = _mm512_setzero_ps();
    return;
  }
  /* Lanes [pad_w, pad_w + w) of the 32 hold the row. */
  uint32_t live = (uint32_t)(((1ull << (p->pad_w + p->w)) - 1) & ~((1ull << p->pad_w) - 1));
  const float *from = (const float *)((uintptr_t)(p->input + iy * p->w) -
                                      (uintptr_t)p->pad_w * sizeof(float));
  *lo = _mm512_maskz_loadu_ps((__mmask16)live, from);
  *hi = _mm512_maskz_loadu_ps((__mmask16)(live >> 16), from + 16);
}

/* Lanes [j, j + 16) of hi:lo (j < 5, a constant where it is inlined: valignd takes it as an
 * immediate). */
static inline __attribute__((always_inline)) __m512i lanes_from(__m512i hi, __m512i lo, int j) {
  switch (j) {
  case 1:
    return _mm512_alignr_epi32(hi, lo, 1);
  case 2:
    return _mm512_alignr_epi32(hi, lo, 2);
  case 3:
    return _mm512_alignr_epi32(hi, lo, 3);
  case 4:
    return _mm512_alignr_epi32(hi, lo, 4);
  default:
    return lo;
  }
}

/* ROWS (<= 4) output rows from y of a plane at stride 1 with rows of at most 16 outputs and 32
 * padded columns, in registers: each padded row read once (two masked loads, no padded copy
 * of the plane) and shifted by lanes for the window's columns, multiplied into every output row
 * that reads it (tap i = k - r), each sum the taps in the order (i, j): the same bits as the
 * padded copy's. */
static inline __attribute__((always_inline)) void
depthwise_narrow_s1(const int ROWS, const depthwise_plane_t *p, int64_t y, const v16f *weight,
                    const int KH, const int KW, float *out, int64_t ow, v16f bias,
                    int64_t activation, v16f max) {
  v16f acc[4];
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) acc[r] = splat16(0.0f);
  _Pragma("GCC unroll 8") for (int k = 0; k < ROWS + KH - 1; ++k) {
    __m512 lo, hi;
    narrow_row16(p, y + k, &lo, &hi);
    __m512i l = _mm512_castps_si512(lo), h = _mm512_castps_si512(hi);
    _Pragma("GCC unroll 5") for (int j = 0; j < KW; ++j) {
      v16f v = (v16f)lanes_from(h, l, j);
      _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r) {
        int i = k - r;
        if (i >= 0 && i < KH)
          acc[r] = fma16(weight[i * KW + j], v, acc[r]);
      }
    }
  }
  __mmask16 live = (__mmask16)((1u << ow) - 1);
  _Pragma("GCC unroll 4") for (int r = 0; r < ROWS; ++r)
    _mm512_mask_storeu_ps(out + r * ow, live, (__m512)finish16(acc[r], bias, activation, max));
}

/* A plane of depthwise_narrow_s1's, for a window of KH x KW. */
static inline __attribute__((always_inline)) void
depthwise_narrow_plane_s1(const depthwise_plane_t *p, const v16f *weight, const int KH,
                          const int KW, float *output, int64_t oh, int64_t ow, v16f bias,
                          int64_t activation, v16f max) {
  /* The weights in registers (read through `weight`, the compiler reloads them after each
   * store, which might write them). */
  v16f w[25];
  _Pragma("GCC unroll 25") for (int t = 0; t < KH * KW; ++t) w[t] = weight[t];
  int64_t y = 0;
  for (; y + 4 <= oh; y += 4)
    depthwise_narrow_s1(4, p, y, w, KH, KW, output + y * ow, ow, bias, activation, max);
  if (oh - y >= 2) {
    depthwise_narrow_s1(2, p, y, w, KH, KW, output + y * ow, ow, bias, activation, max);
    y += 2;
  }
  if (y < oh)
    depthwise_narrow_s1(1, p, y, w, KH, KW, output + y * ow, ow, bias, activation, max);
}

static inline __attribute__((always_inline)) void
depthwise_rows16(const depthwise_plane_t *p, float *scratch, const int64_t *column,
                 const v16f *weight, int64_t kh, int64_t kw, float *output, int64_t oh,
                 int64_t ow, v16f bias, int64_t activation, v16f max) {
  if (ow >= 16) {
    float *ring = (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    depthwise_ring16(0, p, ring, column, weight, kh, kw, output, oh, ow, bias, activation, max);
    return;
  }
  hpvm_tensor_depthwise_prepare_avx2(p->input, p->h, p->w, kh, kw, oh, ow, p->pad_h, p->pad_w,
                                     p->stride_h, p->stride_w, scratch);
  int64_t row_step = p->stride_h * p->row_floats, y = 0;
  for (; y + 4 <= oh; y += 4)
    depthwise_narrow16(4, scratch + y * row_step, row_step, p->row_floats, column, weight, kh,
                       kw, output + y * ow, ow, bias, activation, max);
  for (; y < oh; ++y)
    depthwise_narrow16(1, scratch + y * row_step, row_step, p->row_floats, column, weight, kh,
                       kw, output + y * ow, ow, bias, activation, max);
}

/* The 3 x 3 window's ring at strides 1 and 2 (S1 2 and 5: DEPTHWISE_TILE16), and the narrow
 * planes at stride 1 in registers: a function each, with the activation read at run time (a
 * copy per activation made this file take a minute to compile, several under sanitizers). */
/* Two copies of each ring: without an activation, and clipped (ReLU as clipped at +inf: the
 * same bits, finish16's `v > max` never holds there); the activation a constant in each (read
 * at run time, the stride 1 ring ran 14% slower). */
#define DEPTHWISE_RING_3X3(S1, NAME)                                                           \
  static __attribute__((noinline)) void NAME(const depthwise_plane_t *p, float *scratch,       \
                                             const int64_t *column, const v16f *weight,        \
                                             float *output, int64_t oh, int64_t ow, v16f bias, \
                                             int64_t activation, v16f max) {                   \
    float *ring = (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);                       \
    if (activation == HPVM_RT_TENSOR_IDENTITY)                                                 \
      depthwise_ring16(S1, p, ring, column, weight, 3, 3, output, oh, ow, bias,               \
                       HPVM_RT_TENSOR_IDENTITY, max);                                          \
    else                                                                                       \
      depthwise_ring16(S1, p, ring, column, weight, 3, 3, output, oh, ow, bias,               \
                       HPVM_RT_TENSOR_CLIPPED_RELU,                                            \
                       activation == HPVM_RT_TENSOR_RELU ? splat16(__builtin_inff()) : max);   \
  }
DEPTHWISE_RING_3X3(2, depthwise_ring_3x3_s1)
DEPTHWISE_RING_3X3(5, depthwise_ring_3x3_s2)
#undef DEPTHWISE_RING_3X3

static __attribute__((noinline)) void
depthwise_narrow_3x3(const depthwise_plane_t *p, const v16f *weight, float *output, int64_t oh,
                     int64_t ow, v16f bias, int64_t activation, v16f max) {
  depthwise_narrow_plane_s1(p, weight, 3, 3, output, oh, ow, bias, activation, max);
}

static __attribute__((noinline)) void
depthwise_narrow_5x5(const depthwise_plane_t *p, const v16f *weight, float *output, int64_t oh,
                     int64_t ow, v16f bias, int64_t activation, v16f max) {
  depthwise_narrow_plane_s1(p, weight, 5, 5, output, oh, ow, bias, activation, max);
}

/* The plane in one of the functions above where its window, strides and sizes have one: 3 x 3
 * at strides 1 and 2 (the same both ways) over rows of 16 columns or more (one thread, CPU
 * time: 144 planes of 56 x 56 0.213 -> 0.160 ms, 96 of 112 x 112 at stride 2 0.33 -> 0.295),
 * and 3 x 3 or 5 x 5 at stride 1 over narrower rows (576 planes of 14 x 14, 3 x 3 0.063 ->
 * 0.045 ms, 672 with 5 x 5 0.143 -> 0.102). 0 when none has it. */
static int depthwise_special(const depthwise_plane_t *p, float *scratch, const int64_t *column,
                             const v16f *weight, int64_t kh, int64_t kw, float *output,
                             int64_t oh, int64_t ow, v16f bias, int64_t activation, v16f max) {
  int64_t sh = p->stride_h, sw = p->stride_w;
  if (ow >= 16 && kh == 3 && kw == 3 && sh == sw && sh <= 2) {
    if (sh == 1)
      depthwise_ring_3x3_s1(p, scratch, column, weight, output, oh, ow, bias, activation, max);
    else
      depthwise_ring_3x3_s2(p, scratch, column, weight, output, oh, ow, bias, activation, max);
    return 1;
  }
  if (ow < 16 && sh == 1 && sw == 1 && p->pad_w + p->w <= 32 && kw == kh &&
      (kh == 3 || kh == 5)) {
    if (kh == 3)
      depthwise_narrow_3x3(p, weight, output, oh, ow, bias, activation, max);
    else
      depthwise_narrow_5x5(p, weight, output, oh, ow, bias, activation, max);
    return 1;
  }
  return 0;
}

/* depthwise_rows16 with the activation a constant, and the 3 x 3 and 5 x 5 windows' sizes
 * too: a function each (in one, the larger window's registers slowed the smaller's loop). */
#define DEPTHWISE_ROWS16(ACTIVATION, KH, KW, NAME)                                           \
  static __attribute__((noinline)) void NAME(const depthwise_plane_t *p, float *scratch,     \
                                             const int64_t *column, const v16f *weight,      \
                                             int64_t kh, int64_t kw, float *output,          \
                                             int64_t oh, int64_t ow, v16f bias, v16f max) {  \
    (void)kh;                                                                                \
    (void)kw;                                                                                \
    depthwise_rows16(p, scratch, column, weight, KH, KW, output, oh, ow, bias, ACTIVATION,   \
                     max);                                                                   \
  }
#define DEPTHWISE_ROWS16_ALL(ACTIVATION)                                                     \
  DEPTHWISE_ROWS16(ACTIVATION, 3, 3, depthwise_rows16_3x3_##ACTIVATION)                      \
  DEPTHWISE_ROWS16(ACTIVATION, 5, 5, depthwise_rows16_5x5_##ACTIVATION)                      \
  DEPTHWISE_ROWS16(ACTIVATION, kh, kw, depthwise_rows16_##ACTIVATION)
DEPTHWISE_ROWS16_ALL(HPVM_RT_TENSOR_IDENTITY)
DEPTHWISE_ROWS16_ALL(HPVM_RT_TENSOR_RELU)
DEPTHWISE_ROWS16_ALL(HPVM_RT_TENSOR_CLIPPED_RELU)
#undef DEPTHWISE_ROWS16_ALL
#undef DEPTHWISE_ROWS16

typedef void (*depthwise_rows16_fn)(const depthwise_plane_t *, float *, const int64_t *,
                                    const v16f *, int64_t, int64_t, float *, int64_t, int64_t,
                                    v16f, v16f);

/* The rows function for an activation and window. */
static depthwise_rows16_fn depthwise_rows16_for(int64_t activation, int64_t kh, int64_t kw) {
  static const depthwise_rows16_fn table[3][3] = {
      {depthwise_rows16_3x3_HPVM_RT_TENSOR_IDENTITY, depthwise_rows16_5x5_HPVM_RT_TENSOR_IDENTITY,
       depthwise_rows16_HPVM_RT_TENSOR_IDENTITY},
      {depthwise_rows16_3x3_HPVM_RT_TENSOR_RELU, depthwise_rows16_5x5_HPVM_RT_TENSOR_RELU,
       depthwise_rows16_HPVM_RT_TENSOR_RELU},
      {depthwise_rows16_3x3_HPVM_RT_TENSOR_CLIPPED_RELU,
       depthwise_rows16_5x5_HPVM_RT_TENSOR_CLIPPED_RELU,
       depthwise_rows16_HPVM_RT_TENSOR_CLIPPED_RELU}};
  int act = activation == HPVM_RT_TENSOR_RELU           ? 1
            : activation == HPVM_RT_TENSOR_CLIPPED_RELU ? 2
                                                        : 0;
  int window = kh == 3 && kw == 3 ? 0 : kh == 5 && kw == 5 ? 1 : 2;
  return table[act][window];
}

void hpvm_tensor_depthwise_avx512(const float *input, int64_t h, int64_t w, const float *filter,
                                  int64_t kh, int64_t kw, float *output, int64_t oh, int64_t ow,
                                  int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                  int64_t stride_w, float bias, int64_t activation,
                                  float activation_max, float *scratch) {
  if (!scratch ||
      !hpvm_tensor_depthwise_scratch(w, kh, kw, oh, ow, pad_w, stride_h, stride_w) ||
      hpvm_tensor_activation_late(activation)) {
    hpvm_tensor_depthwise_avx2(input, h, w, filter, kh, kw, output, oh, ow, pad_h, pad_w,
                               stride_h, stride_w, bias, activation, activation_max, scratch);
    return;
  }
  int64_t phase = hpvm_tensor_depthwise_phase(w, kw, ow, pad_w, stride_w);
  depthwise_plane_t p = {input, h, w, pad_h, pad_w, stride_h, stride_w, phase, stride_w * phase};
  int64_t column[HPVM_TENSOR_DEPTHWISE_MAX_TAPS];
  v16f weight[HPVM_TENSOR_DEPTHWISE_MAX_TAPS];
  for (int64_t j = 0; j < kw; ++j)
    column[j] = (j % stride_w) * phase + j / stride_w;
  for (int64_t t = 0; t < kh * kw; ++t)
    weight[t] = splat16(filter[t]);
  if (depthwise_special(&p, scratch, column, weight, kh, kw, output, oh, ow, splat16(bias),
                        activation, splat16(activation_max)))
    return;
  depthwise_rows16_for(activation, kh, kw)(&p, scratch, column, weight, kh, kw, output, oh, ow,
                                           splat16(bias), splat16(activation_max));
}

/* ---- Depthwise, 16 narrow planes at once -------------------------------------------------
 * Plane l in lane l: the planes copied zero-padded into a vector per padded position (a
 * gather each), the taps' weights gathered once, then 4 outputs at a time (4 chains of
 * multiply-adds in flight), each scattered to its 16 planes. Same operations per output as
 * the plane kernels (bias after the taps, the activation last): the same bits. */

/* Outputs [p, p + COUNT) (in row-major order) of the 16 planes. */
static inline __attribute__((always_inline)) void
depthwise_lanes_block(const int COUNT, const float *padded, int64_t padded_w, int64_t p,
                      int64_t ow, int64_t stride_h, int64_t stride_w, const __m512 *weight,
                      int64_t kh, int64_t kw, float *output, __m512i out_offset, __m512 bias,
                      int64_t activation, __m512 max) {
  const float *at[4];
  __m512 acc[4];
  _Pragma("GCC unroll 4") for (int q = 0; q < COUNT; ++q) {
    int64_t y = (p + q) / ow, x = (p + q) % ow;
    at[q] = padded + (y * stride_h * padded_w + x * stride_w) * 16;
    acc[q] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      _Pragma("GCC unroll 4") for (int q = 0; q < COUNT; ++q)
        acc[q] = _mm512_fmadd_ps(weight[i * kw + j],
                                 _mm512_loadu_ps(at[q] + (i * padded_w + j) * 16), acc[q]);
  _Pragma("GCC unroll 4") for (int q = 0; q < COUNT; ++q)
    _mm512_i32scatter_ps(output + p + q, out_offset,
                         (__m512)finish16((v16f)acc[q], (v16f)bias, activation, (v16f)max),
                         4);
}

void hpvm_tensor_depthwise_lanes_avx512(const float *input, const int32_t *offset, int64_t h,
                                        int64_t w, const float *filter,
                                        const int32_t *tap_offset, const float *bias,
                                        int64_t kh, int64_t kw, float *output, int64_t oh,
                                        int64_t ow, int64_t pad_h, int64_t pad_w,
                                        int64_t stride_h, int64_t stride_w, int64_t activation,
                                        float activation_max, float *scratch) {
  int64_t floats = hpvm_tensor_depthwise_lanes_scratch(h, w, pad_h, pad_w, stride_h, stride_w,
                                                       kh, kw, oh, ow);
  int64_t padded_w = (ow - 1) * stride_w + kw > w + pad_w ? (ow - 1) * stride_w + kw
                                                           : w + pad_w;
  memset(scratch, 0, sizeof(float) * (size_t)floats);
  __m512i in_offset = _mm512_loadu_si512(offset);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      _mm512_storeu_ps(scratch + ((y + pad_h) * padded_w + x + pad_w) * 16,
                       _mm512_i32gather_ps(in_offset, input + y * w + x, 4));
  __m512 weight[HPVM_TENSOR_DEPTHWISE_MAX_TAPS];
  __m512i taps = _mm512_loadu_si512(tap_offset);
  for (int64_t t = 0; t < kh * kw; ++t)
    weight[t] = _mm512_i32gather_ps(taps, filter + t, 4);
  __m512 bias16 = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  __m512 max16 = _mm512_set1_ps(activation_max);
  __m512i out_offset =
      _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                         _mm512_set1_epi32((int32_t)(oh * ow)));
  int64_t positions = oh * ow, p = 0;
  for (; p + 4 <= positions; p += 4)
    depthwise_lanes_block(4, scratch, padded_w, p, ow, stride_h, stride_w, weight, kh, kw,
                          output, out_offset, bias16, activation, max16);
  for (; p < positions; ++p)
    depthwise_lanes_block(1, scratch, padded_w, p, ow, stride_h, stride_w, weight, kh, kw,
                          output, out_offset, bias16, activation, max16);
}

void hpvm_tensor_scatter_tile_avx512(const float *tile, int64_t fb, int64_t positions,
                                     int64_t filters, float *out, int64_t out_plane) {
  __m512i index = _mm512_mullo_epi32(
      _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
      _mm512_set1_epi32((int)fb));
  __mmask16 live = (__mmask16)((1u << positions) - 1);
  for (int64_t r = 0; r < filters; ++r) {
    __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, index, tile + r, 4);
    _mm512_mask_storeu_ps(out + r * out_plane, live, v);
  }
}

void hpvm_tensor_activate_avx512(float *x, int64_t count, int64_t activation,
                                 float activation_max) {
  if (!hpvm_tensor_activation_late(activation)) {
    for (int64_t i = 0; i < count; ++i)
      x[i] = hpvm_tensor_activate(x[i], activation, activation_max);
    return;
  }
  for (int64_t i = 0; i < count; i += 16) {
    __mmask16 live = count - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (count - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(live, x + i);
    if (activation == HPVM_RT_TENSOR_HARDSWISH) {
      /* hpvm_tensor_hardswish's operations one by one (min and max keep a NaN). */
      __m512 t = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(0.166666672f)),
                               _mm512_set1_ps(0.5f));
      __mmask16 nan = _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q);
      t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, _mm512_set1_ps(1.0f), _CMP_LT_OQ) | nan,
                               _mm512_set1_ps(1.0f), t);
      t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_GT_OQ) | nan, t);
      _mm512_mask_storeu_ps(x + i, live, _mm512_mul_ps(v, t));
      continue;
    }
    v16f s = sigmoid16((v16f)v);
    _mm512_mask_storeu_ps(x + i, live,
                          (__m512)(activation == HPVM_RT_TENSOR_SILU ? (v16f)v * s : s));
  }
}
