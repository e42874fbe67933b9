/* What the convolutions' strategies share (conv.c, conv_across.c, conv_taps.c), below all of
 * them: filters packed in blocks, the logistic activations over finished planes, and the
 * tests' switch that refuses them memory. */
#include "kernels.h"

#include "hpvm/hpvm_rt.h"

#define ceil_div hpvm_tensor_ceil_div

static int without_memory; /* tests: hpvm_tensor_conv_without_memory */

void hpvm_tensor_conv_without_memory(int on) { without_memory = on; }

int hpvm_tensor_conv_memory_refused(void) { return without_memory; }

float *hpvm_tensor_pack_filter_blocks(const float *weights, int64_t groups, int64_t per_group_f,
                                      int64_t per_group_c, int64_t window, int64_t block,
                                      float *dst) {
  int64_t blocks = ceil_div(per_group_f, block);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t ch = 0; ch < per_group_c; ++ch)
        for (int64_t k = 0; k < window; ++k)
          for (int64_t r = 0; r < block; ++r) {
            int64_t o = b * block + r;
            *dst++ = o < per_group_f
                         ? weights[((g * per_group_f + o) * per_group_c + ch) * window + k]
                         : 0.0f;
          }
  return dst;
}

/* The logistic activations over `planes` finished output planes of `plane` floats, a task per
 * plane on the pool. */
typedef struct activate_job_t {
  float *output;
  int64_t plane, activation;
  float max;
} activate_job_t;

static void run_activate(void *context, const hpvm_rt_instance_range_t *range) {
  const activate_job_t *j = context;
  hpvm_tensor_activate_fn activate = hpvm_tensor_kernels()->activate;
  for (int64_t p = range->begin[0]; p < range->end[0]; ++p)
    activate(j->output + p * j->plane, j->plane, j->activation, j->max);
}

void hpvm_tensor_activate_planes(float *output, int64_t planes, int64_t plane,
                                 int64_t activation, float max) {
  activate_job_t job = {output, plane, activation, max};
  int64_t extents[2] = {planes, 1};
  hpvm_tensor_run_grid(1, extents, run_activate, &job);
}
