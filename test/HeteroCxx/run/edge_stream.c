// The edge-detection pipeline of pipeline.c (blur -> gradient -> threshold) as a
// stream: a frame loop whose body is a __hetero_launch_begin/end region over
// the frame's slices of `restrict` arrays, so the loop becomes one streaming
// launch with a push per frame and the three stages overlap across frames.
// Checked against a plain C reference (exact) and with -fhetero-sequential.
#include <hetero.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void edges(const float *restrict images, float *restrict blurred,
                  float *restrict gradient, int *restrict masks, int frames, int w, int h,
                  float threshold) {
  size_t pixels = (size_t)w * h, bytes = pixels * sizeof(float), mask_bytes = pixels * sizeof(int);
  for (int f = 0; f < frames; ++f) {
    const float *image = images + f * pixels;
    float *blur = blurred + f * pixels, *grad = gradient + f * pixels;
    int *mask = masks + f * pixels;
    void *launch = __hetero_launch_begin(7, image, bytes, blur, bytes, grad, bytes, mask,
                                         mask_bytes, w, h, threshold, 3, blur, bytes, grad,
                                         bytes, mask, mask_bytes);
    void *section = __hetero_section_begin();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        __hetero_parallel_loop(2, 4, image, bytes, blur, bytes, w, h, 1, blur, bytes, "blur");
        __hetero_hint(DEVICE);
        float sum = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
            int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
            sum += image[yy * w + xx];
          }
        blur[y * w + x] = sum / 9.0f;
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        __hetero_parallel_loop(2, 4, blur, bytes, grad, bytes, w, h, 1, grad, bytes, "gradient");
        __hetero_hint(DEVICE);
        int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
        int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
        float gx = blur[y * w + xr] - blur[y * w + xl];
        float gy = blur[yd * w + x] - blur[yu * w + x];
        grad[y * w + x] = sqrtf(gx * gx + gy * gy);
      }
    for (int i = 0; i < w * h; ++i) {
      __hetero_parallel_loop(1, 4, grad, bytes, mask, mask_bytes, w, threshold, 1, mask,
                             mask_bytes, "threshold");
      __hetero_hint(DEVICE);
      mask[i] = grad[i] > threshold;
    }
    __hetero_section_end(section);
    __hetero_launch_end(launch);
  }
}

int main(void) {
  int frames = 12, w = 64, h = 48;
  size_t pixels = (size_t)w * h, all = pixels * frames;
  float *images = malloc(all * sizeof(float)), *blurred = malloc(all * sizeof(float));
  float *gradient = malloc(all * sizeof(float));
  int *masks = malloc(all * sizeof(int));
  for (size_t i = 0; i < all; ++i)
    images[i] = (float)((i * 37) % 101) / 10.0f + ((i / w) % 9 == 0 ? 8.0f : 0.0f);
  edges(images, blurred, gradient, masks, frames, w, h, 1.5f);
  long wrong = 0, total = 0;
  float *b = malloc(pixels * sizeof(float)), *g = malloc(pixels * sizeof(float));
  for (int f = 0; f < frames; ++f) {
    const float *image = images + f * pixels;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float sum = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
            int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
            sum += image[yy * w + xx];
          }
        b[y * w + x] = sum / 9.0f;
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
        int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
        float gx = b[y * w + xr] - b[y * w + xl], gy = b[yd * w + x] - b[yu * w + x];
        g[y * w + x] = sqrtf(gx * gx + gy * gy);
      }
    for (size_t i = 0; i < pixels; ++i) {
      int expect = g[i] > 1.5f;
      wrong += masks[f * pixels + i] != expect;
      total += expect;
    }
  }
  printf("edge_stream: frames=%d %dx%d edges=%ld wrong=%ld\n", frames, w, h, total, wrong);
  free(images);
  free(blurred);
  free(gradient);
  free(masks);
  free(b);
  free(g);
  return wrong != 0;
}
