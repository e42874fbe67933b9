// An edge-detection pipeline in Hetero-C (C, not C++): __hetero_launch_begin /
// __hetero_launch_end around a section of three tasks that pass buffers on
// (blur -> gradient -> threshold: edges between the tasks), the first two
// holding sections with 2-D parallel loops (internal nodes), the last a plain
// loop with a scalar result in a one-element buffer. The image is processed
// once per frame in a host loop; a plain C reference checks every pixel.
#include <hetero.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void reference(const float *image, float *blurred, float *gradient, int *mask,
                      int *count, int w, int h, float threshold) {
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float sum = 0.0f;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
          int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
          sum += image[yy * w + xx];
        }
      blurred[y * w + x] = sum / 9.0f;
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
      int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
      float gx = blurred[y * w + xr] - blurred[y * w + xl];
      float gy = blurred[yd * w + x] - blurred[yu * w + x];
      gradient[y * w + x] = sqrtf(gx * gx + gy * gy);
    }
  int edges = 0;
  for (int i = 0; i < w * h; ++i) {
    mask[i] = gradient[i] > threshold;
    edges += mask[i];
  }
  *count = edges;
}

static int frame(int w, int h, int t, float threshold) {
  size_t bytes = (size_t)w * h * sizeof(float), mask_bytes = (size_t)w * h * sizeof(int);
  float *image = malloc(bytes), *blurred = malloc(bytes), *gradient = malloc(bytes);
  float *r_blurred = malloc(bytes), *r_gradient = malloc(bytes);
  int *mask = malloc(mask_bytes), *r_mask = malloc(mask_bytes);
  int *count = malloc(sizeof(int)), r_count = 0;
  size_t count_bytes = sizeof(int);
  for (int i = 0; i < w * h; ++i)
    image[i] = (float)(((i + t * 7) * 37) % 101) / 10.0f + ((i / w + t) % 9 == 0 ? 8.0f : 0.0f);

  void *launch = __hetero_launch_begin(8, image, bytes, blurred, bytes, gradient, bytes, mask,
                                       mask_bytes, count, count_bytes, w, h, threshold, 2,
                                       mask, mask_bytes, count, count_bytes);
  void *section = __hetero_section_begin();

  void *blur = __hetero_task_begin(4, image, bytes, blurred, bytes, w, h, 1, blurred, bytes,
                                   "blur");
  void *blur_section = __hetero_section_begin();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      __hetero_parallel_loop(2, 4, image, bytes, blurred, bytes, w, h, 1, blurred, bytes,
                             "blur_pixel");
      __hetero_hint(DEVICE);
      float sum = 0.0f;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
          int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
          sum += image[yy * w + xx];
        }
      blurred[y * w + x] = sum / 9.0f;
    }
  __hetero_section_end(blur_section);
  __hetero_task_end(blur);

  void *grad = __hetero_task_begin(4, blurred, bytes, gradient, bytes, w, h, 1, gradient,
                                   bytes, "gradient");
  void *grad_section = __hetero_section_begin();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      __hetero_parallel_loop(2, 4, blurred, bytes, gradient, bytes, w, h, 1, gradient, bytes,
                             "gradient_pixel");
      __hetero_hint(DEVICE);
      int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
      int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
      float gx = blurred[y * w + xr] - blurred[y * w + xl];
      float gy = blurred[yd * w + x] - blurred[yu * w + x];
      gradient[y * w + x] = sqrtf(gx * gx + gy * gy);
    }
  __hetero_section_end(grad_section);
  __hetero_task_end(grad);

  void *mark = __hetero_task_begin(6, gradient, bytes, mask, mask_bytes, count, count_bytes, w,
                                   h, threshold, 2, mask, mask_bytes, count, count_bytes,
                                   "threshold");
  int edges = 0;
  for (int i = 0; i < w * h; ++i) {
    mask[i] = gradient[i] > threshold;
    edges += mask[i];
  }
  *count = edges;
  __hetero_task_end(mark);

  __hetero_section_end(section);
  __hetero_launch_end(launch);

  reference(image, r_blurred, r_gradient, r_mask, &r_count, w, h, threshold);
  long wrong = *count != r_count;
  for (int i = 0; i < w * h; ++i)
    wrong += mask[i] != r_mask[i];
  printf("pipeline: frame=%d %dx%d edges=%d wrong=%ld\n", t, w, h, *count, wrong);
  free(image);
  free(blurred);
  free(gradient);
  free(r_blurred);
  free(r_gradient);
  free(mask);
  free(r_mask);
  free(count);
  return wrong != 0;
}

int main(void) {
  int failed = 0;
  for (int t = 0; t < 3; ++t)
    failed += frame(64, 48, t, 1.5f);
  failed += frame(1, 1, 0, 0.5f) + frame(7, 3, 1, 0.25f);
  return failed;
}
