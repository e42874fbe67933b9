// A launch region in a frame loop: each frame's buffers are its own slices
// (in + f*n, mid + f*n, out + f*n) of arrays the `restrict` parameters say are
// distinct, so the loop runs as one streaming launch with a push per frame
// (frames overlap: frame f+1 scales while frame f smooths). The same pipeline
// over one shared scratch buffer must not overlap, and stays a launch and a
// wait per frame. Both against a plain C
// reference (exact), and the same output with -fhetero-sequential.
#include <hetero.h>
#include <stdio.h>
#include <stdlib.h>

static void frames_sliced(const float *restrict in, float *restrict mid, float *restrict out,
                          int frames, long n) {
  size_t bytes = (size_t)n * sizeof(float);
  for (int f = 0; f < frames; ++f) {
    const float *in_f = in + (size_t)f * n;
    float *mid_f = mid + (size_t)f * n, *out_f = out + (size_t)f * n;
    float gain = 0.5f * (float)(f + 1);
    void *launch = __hetero_launch_begin(5, in_f, bytes, mid_f, bytes, out_f, bytes, n, gain, 2,
                                         mid_f, bytes, out_f, bytes);
    void *section = __hetero_section_begin();
    for (long i = 0; i < n; ++i) {
      __hetero_parallel_loop(1, 4, in_f, bytes, mid_f, bytes, n, gain, 1, mid_f, bytes,
                             "scale");
      __hetero_hint(DEVICE);
      mid_f[i] = in_f[i] * gain;
    }
    for (long i = 0; i < n; ++i) {
      __hetero_parallel_loop(1, 3, mid_f, bytes, out_f, bytes, n, 1, out_f, bytes, "smooth");
      __hetero_hint(DEVICE);
      float left = mid_f[i > 0 ? i - 1 : i], right = mid_f[i < n - 1 ? i + 1 : i];
      out_f[i] = 0.25f * left + 0.5f * mid_f[i] + 0.25f * right;
    }
    __hetero_section_end(section);
    __hetero_launch_end(launch);
  }
}

// One scratch buffer for every frame: the frames must run one after another.
static void frames_shared(const float *restrict in, float *restrict scratch,
                          float *restrict out, int frames, long n) {
  size_t bytes = (size_t)n * sizeof(float);
  for (int f = 0; f < frames; ++f) {
    const float *in_f = in + (size_t)f * n;
    float *out_f = out + (size_t)f * n;
    float gain = 0.5f * (float)(f + 1);
    void *launch = __hetero_launch_begin(5, in_f, bytes, scratch, bytes, out_f, bytes, n, gain,
                                         2, scratch, bytes, out_f, bytes);
    void *section = __hetero_section_begin();
    for (long i = 0; i < n; ++i) {
      __hetero_parallel_loop(1, 4, in_f, bytes, scratch, bytes, n, gain, 1, scratch, bytes,
                             "scale_shared");
      __hetero_hint(DEVICE);
      scratch[i] = in_f[i] * gain;
    }
    for (long i = 0; i < n; ++i) {
      __hetero_parallel_loop(1, 3, scratch, bytes, out_f, bytes, n, 1, out_f, bytes,
                             "smooth_shared");
      __hetero_hint(DEVICE);
      float left = scratch[i > 0 ? i - 1 : i], right = scratch[i < n - 1 ? i + 1 : i];
      out_f[i] = 0.25f * left + 0.5f * scratch[i] + 0.25f * right;
    }
    __hetero_section_end(section);
    __hetero_launch_end(launch);
  }
}

int main(void) {
  int frames = 24;
  long n = 4099;
  size_t all = (size_t)frames * n;
  float *in = malloc(all * sizeof(float)), *mid = malloc(all * sizeof(float));
  float *out = malloc(all * sizeof(float)), *out2 = malloc(all * sizeof(float));
  float *scratch = malloc(n * sizeof(float));
  for (size_t i = 0; i < all; ++i)
    in[i] = (float)((i * 37) % 101) / 8.0f;
  frames_sliced(in, mid, out, frames, n);
  frames_shared(in, scratch, out2, frames, n);
  long wrong = 0;
  double sum = 0;
  for (int f = 0; f < frames; ++f) {
    float gain = 0.5f * (float)(f + 1);
    for (long i = 0; i < n; ++i) {
      const float *x = in + (size_t)f * n;
      float l = x[i > 0 ? i - 1 : i] * gain, c = x[i] * gain, r = x[i < n - 1 ? i + 1 : i] * gain;
      float expect = 0.25f * l + 0.5f * c + 0.25f * r;
      wrong += out[(size_t)f * n + i] != expect;
      wrong += out2[(size_t)f * n + i] != expect;
      sum += out[(size_t)f * n + i];
    }
  }
  printf("stream: frames=%d n=%ld sum=%.2f wrong=%ld\n", frames, n, sum, wrong);
  free(in);
  free(mid);
  free(out);
  free(out2);
  free(scratch);
  return wrong != 0;
}
