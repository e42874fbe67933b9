/* Pools of the CPU in f32 (hpvm.tensor.pool): one plane per task, by the ISA's pool_plane
 * kernel. */
#include "kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

typedef struct pool_t {
  const float *input;
  float *output;
  int64_t kind, height, width, window_h, window_w, stride_h, stride_w, pad_h, pad_w;
  int64_t out_h, out_w;
} pool_t;

static void run_pool(void *context, const hpvm_rt_instance_range_t *range) {
  const pool_t *p = context;
  hpvm_tensor_pool_plane_fn plane_kernel = hpvm_tensor_kernels()->pool_plane;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane)
    plane_kernel(p->input + plane * p->height * p->width,
                 p->output + plane * p->out_h * p->out_w, p->kind, p->height, p->width,
                 p->window_h, p->window_w, p->stride_h, p->stride_w, p->pad_h, p->pad_w,
                 p->out_h, p->out_w);
}

/* Whether `out` windows of `window` at `stride`, the first at -pad, are those of an image of
 * `size` padded by pad before it and by some end padding in [0, window) after it (an empty
 * image without begin padding: no windows; with it, windows of padding, as before end
 * padding existed). */
int hpvm_tensor_pool_extent_valid(int64_t size, int64_t window, int64_t stride, int64_t pad,
                                  int64_t out) {
  if (size + pad == 0)
    return out == 0;
  int64_t fewest = size + pad >= window ? (size + pad - window) / stride + 1 : 1;
  int64_t most = (size + pad - 1) / stride + 1;
  return out >= fewest && out <= most;
}

void hpvm_rt_tensor_pool_f32(const float *input, float *output, int64_t kind, int64_t n,
                             int64_t c, int64_t h, int64_t w, int64_t window_h,
                             int64_t window_w, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w, int64_t oh, int64_t ow) {
  int64_t sizes[] = {n, c, h, w, pad_h, pad_w, oh, ow};
  if (!hpvm_tensor_sizes_valid("hpvm_rt_tensor_pool_f32", 8, sizes) || !input || !output)
    return;
  if (kind < HPVM_RT_TENSOR_POOL_MAX || kind > HPVM_RT_TENSOR_POOL_MEAN || window_h <= 0 ||
      window_w <= 0 || stride_h <= 0 || stride_w <= 0 ||
      !hpvm_tensor_pool_extent_valid(h, window_h, stride_h, pad_h, oh) ||
      !hpvm_tensor_pool_extent_valid(w, window_w, stride_w, pad_w, ow)) {
    hpvm_warning("hpvm_rt_tensor_pool_f32: inconsistent kind, window, strides or shapes (kind "
                 "%lld, input %lldx%lld, window %lldx%lld, stride %lldx%lld, output %lldx%lld); "
                 "nothing computed",
                 (long long)kind, (long long)h, (long long)w, (long long)window_h,
                 (long long)window_w, (long long)stride_h, (long long)stride_w, (long long)oh,
                 (long long)ow);
    return;
  }
  pool_t p = {input, output, kind, h, w, window_h, window_w, stride_h, stride_w,
              pad_h, pad_w, oh, ow};
  int64_t extents[2] = {n * c, 1};
  hpvm_tensor_run_grid(1, extents, run_pool, &p);
}
