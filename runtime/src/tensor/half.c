/* The 16-bit storage formats of the fp16 and bf16 knobs (hpvm_rt_tensor_matmul_half):
 * exact widening to f32 and rounding from f32 (to nearest, ties to even; overflow to
 * infinity; NaN stays a quiet NaN), in portable C: the F16C path of the AVX2 kernels gives the
 * same results (checked in test/tensor_half_test.c). */
#include "kernels.h"

#include "base/trace.h"

#include "hpvm/hpvm_rt.h"

#include <string.h>

static float from_bits(uint32_t bits) {
  float x;
  memcpy(&x, &bits, sizeof(x));
  return x;
}

static uint32_t to_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof(bits));
  return bits;
}

static float fp16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
  if (exponent == 0) {
    /* Zero or subnormal: fraction * 2^-24, exact in f32. */
    float magnitude = (float)fraction * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) /* infinity, or a NaN made quiet (as F16C's vcvtph2ps does) */
    return from_bits(sign | 0x7f800000u | (fraction ? 0x400000u : 0u) | (fraction << 13));
  return from_bits(sign | ((exponent + 112) << 23) | (fraction << 13));
}

static uint16_t f32_to_fp16(float x) {
  uint32_t bits = to_bits(x);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) /* NaN: quiet, with the top of its payload */
    return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x1ffu));
  if (magnitude >= 0x477ff000u) /* 65520 and above (and infinity) round to infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    /* Below 2^-14: a subnormal (or zero) of fraction round(|x| * 2^24); adding and
     * subtracting 2^23 rounds to nearest even (|x| * 2^24 < 2^10 is exact). 0x400, the
     * smallest normal, is its own encoding. */
    float scaled = from_bits(magnitude) * 0x1p24f;
    volatile float rounded = scaled + 0x1p23f;
    return (uint16_t)(sign | (uint16_t)(rounded - 0x1p23f));
  }
  uint32_t h = (((magnitude >> 23) - 112) << 10) | ((magnitude >> 13) & 0x3ffu);
  uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; /* a carry into the exponent is the next binade (or infinity) */
  return (uint16_t)(sign | h);
}

static uint16_t f32_to_bf16(float x) {
  uint32_t bits = to_bits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

float hpvm_tensor_widen(uint16_t bits, int64_t format) {
  return format == HPVM_RT_TENSOR_FP16 ? fp16_to_f32(bits) : from_bits((uint32_t)bits << 16);
}

uint16_t hpvm_tensor_narrow(float x, int64_t format) {
  return format == HPVM_RT_TENSOR_FP16 ? f32_to_fp16(x) : f32_to_bf16(x);
}

uint16_t hpvm_rt_tensor_to_half(float x, int64_t format) {
  if (format != HPVM_RT_TENSOR_FP16 && format != HPVM_RT_TENSOR_BF16)
    return 0;
  return hpvm_tensor_narrow(x, format);
}

float hpvm_rt_tensor_from_half(uint16_t bits, int64_t format) {
  if (format != HPVM_RT_TENSOR_FP16 && format != HPVM_RT_TENSOR_BF16)
    return 0.0f;
  return hpvm_tensor_widen(bits, format);
}

void hpvm_rt_tensor_narrow_f32(const float *x, uint16_t *out, int64_t count, int64_t format) {
  if (format != HPVM_RT_TENSOR_FP16 && format != HPVM_RT_TENSOR_BF16) {
    hpvm_warning("hpvm_rt_tensor_narrow_f32: unknown format %lld (expected 1: fp16, 2: bf16); "
                 "nothing converted", (long long)format);
    return;
  }
  if (count <= 0 || !x || !out)
    return;
  hpvm_tensor_kernels()->narrow_half(x, out, count, format);
}
