/* Approximate 2-D convolutions (hpvm_rt_tensor_conv2d_approx_f32): the knobs of ApproxHPVM /
 * ApproxTuner as code variants that really skip work, not exact results degraded afterwards.
 * Perforated rows or columns and filter sampling run through the tap lists of conv_taps.c,
 * which list only the kept output positions or filter taps; KNOB_EXACT is
 * hpvm_rt_tensor_conv2d_f32 itself. */
#include "kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

void hpvm_rt_tensor_conv2d_approx_f32(const float *input, const float *filter, const float *bias,
                                      float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                                      int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                      int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                      int64_t stride_w, int64_t groups, int64_t activation,
                                      double activation_max, int64_t knob, int64_t rate,
                                      int64_t offset) {
  static const char what[] = "hpvm_rt_tensor_conv2d_approx_f32";
  if (knob == HPVM_RT_TENSOR_KNOB_EXACT) {
    hpvm_rt_tensor_conv2d_f32(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                              pad_w, stride_h, stride_w, groups, activation, activation_max);
    return;
  }
  if (knob < HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS || knob > HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER ||
      rate < 2 || offset < 0 || offset >= rate) {
    hpvm_warning("%s: unknown knob %lld or bad rate %lld / offset %lld (expected knob 0 to 3, "
                 "rate >= 2, 0 <= offset < rate); nothing computed",
                 what, (long long)knob, (long long)rate, (long long)offset);
    return;
  }
  if (!hpvm_tensor_conv_args_valid(what, input, filter, output, n, c, h, w, f, kh, kw, oh, ow,
                                   pad_h, pad_w, stride_h, stride_w, groups, activation))
    return;
  hpvm_tensor_conv_taps(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w,
                        stride_h, stride_w, groups, activation, (float)activation_max, knob, rate,
                        offset, 0);
}
