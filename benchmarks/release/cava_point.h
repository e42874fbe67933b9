// The stages of the hpvm-cava camera pipeline at one pixel: scale the raw Bayer mosaic to
// floats, demosaic (bilinear, RGGB), denoise (3x3 median per channel), colour transform (3x3
// matrix), gamut map (radial basis functions over CAVA_CONTROL_POINTS control points, the
// pipeline's dominant cost, as in the release), tone map (gamma lookup table) and descale to
// bytes. Images are planar: channel ch of pixel (r, c) is at [(ch * rows + r) * cols + c].
// The one definition that the HPVM-C leaves (cava.c) and the OpenMP loops (cava_omp.c) call.
#ifndef HPVM_BENCH_RELEASE_CAVA_POINT_H
#define HPVM_BENCH_RELEASE_CAVA_POINT_H
#include <math.h>
#include <stdint.h>

#define CAVA_CONTROL_POINTS 48
#define CAVA_TILE_X 32
#define CAVA_TILE_Y 4

static inline long cava_clamp(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline float cava_raw(const float *m, long rows, long cols, long r, long c) {
  return m[cava_clamp(r, 0, rows - 1) * cols + cava_clamp(c, 0, cols - 1)];
}
static inline float cava_at(const float *img, long rows, long cols, int ch, long r, long c) {
  return img[((long)ch * rows + cava_clamp(r, 0, rows - 1)) * cols + cava_clamp(c, 0, cols - 1)];
}

static inline void cava_scale(const uint8_t *raw, float *m, long rows, long cols, long r, long c) {
  if (r < rows && c < cols)
    m[r * cols + c] = raw[r * cols + c] * (1.0f / 255.0f);
}

static inline void cava_demosaic(const float *m, float *out, long rows, long cols, long r,
                                 long c) {
  if (r >= rows || c >= cols)
    return;
  float center = cava_raw(m, rows, cols, r, c);
  float cross = 0.25f * (cava_raw(m, rows, cols, r - 1, c) + cava_raw(m, rows, cols, r + 1, c) +
                         cava_raw(m, rows, cols, r, c - 1) + cava_raw(m, rows, cols, r, c + 1));
  float diag = 0.25f * (cava_raw(m, rows, cols, r - 1, c - 1) +
                        cava_raw(m, rows, cols, r - 1, c + 1) +
                        cava_raw(m, rows, cols, r + 1, c - 1) +
                        cava_raw(m, rows, cols, r + 1, c + 1));
  float horizontal = 0.5f * (cava_raw(m, rows, cols, r, c - 1) + cava_raw(m, rows, cols, r, c + 1));
  float vertical = 0.5f * (cava_raw(m, rows, cols, r - 1, c) + cava_raw(m, rows, cols, r + 1, c));
  float red, green, blue;
  if (r % 2 == 0 && c % 2 == 0) { /* R */
    red = center, green = cross, blue = diag;
  } else if (r % 2 == 1 && c % 2 == 1) { /* B */
    red = diag, green = cross, blue = center;
  } else if (r % 2 == 0) { /* G on a red row */
    red = horizontal, green = center, blue = vertical;
  } else { /* G on a blue row */
    red = vertical, green = center, blue = horizontal;
  }
  out[(0 * rows + r) * cols + c] = red;
  out[(1 * rows + r) * cols + c] = green;
  out[(2 * rows + r) * cols + c] = blue;
}

static inline void cava_denoise(const float *in, float *out, long rows, long cols, long r, long c) {
  if (r >= rows || c >= cols)
    return;
  for (int ch = 0; ch < 3; ++ch) {
    float v[9];
    int n = 0;
    for (int dr = -1; dr <= 1; ++dr)
      for (int dc = -1; dc <= 1; ++dc)
        v[n++] = cava_at(in, rows, cols, ch, r + dr, c + dc);
    for (int i = 0; i <= 4; ++i) /* partial selection sort: the median is v[4] */
      for (int j = i + 1; j < 9; ++j)
        if (v[j] < v[i]) {
          float t = v[i];
          v[i] = v[j];
          v[j] = t;
        }
    out[((long)ch * rows + r) * cols + c] = v[4];
  }
}

static inline void cava_transform(const float *in, float *out, long rows, long cols, long r,
                                  long c) {
  if (r >= rows || c >= cols)
    return;
  static const float matrix[3][3] = {
      {1.20f, -0.15f, -0.05f}, {-0.10f, 1.15f, -0.05f}, {-0.02f, -0.18f, 1.20f}};
  float p[3];
  for (int ch = 0; ch < 3; ++ch)
    p[ch] = in[((long)ch * rows + r) * cols + c];
  for (int ch = 0; ch < 3; ++ch)
    out[((long)ch * rows + r) * cols + c] =
        matrix[ch][0] * p[0] + matrix[ch][1] * p[1] + matrix[ch][2] * p[2];
}

static inline void cava_gamut(const float *in, float *out, long rows, long cols, long r, long c) {
  if (r >= rows || c >= cols)
    return;
  float p[3], acc[3] = {0.0f, 0.0f, 0.0f};
  for (int ch = 0; ch < 3; ++ch)
    p[ch] = in[((long)ch * rows + r) * cols + c];
  for (int i = 0; i < CAVA_CONTROL_POINTS; ++i) {
    float d0 = p[0] - (float)((i * 37) % 64) / 64.0f;
    float d1 = p[1] - (float)((i * 23) % 64) / 64.0f;
    float d2 = p[2] - (float)((i * 11) % 64) / 64.0f;
    float dist = sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
    for (int ch = 0; ch < 3; ++ch)
      acc[ch] += (float)((i * 7 + ch * 3) % 11 - 5) * (1.0f / 400.0f) * dist;
  }
  for (int ch = 0; ch < 3; ++ch)
    out[((long)ch * rows + r) * cols + c] = p[ch] + acc[ch];
}

static inline void cava_tone(const float *in, float *out, long rows, long cols, long r, long c) {
  if (r >= rows || c >= cols)
    return;
  for (int ch = 0; ch < 3; ++ch) {
    float v = in[((long)ch * rows + r) * cols + c];
    long index = cava_clamp((long)(v * 255.0f), 0, 255);
    /* gamma 1/2.2 at 256 steps, as the release's tone map table */
    out[((long)ch * rows + r) * cols + c] = powf((float)index / 255.0f, 1.0f / 2.2f);
  }
}

static inline void cava_descale(const float *in, uint8_t *rgb, long rows, long cols, long r,
                                long c) {
  if (r >= rows || c >= cols)
    return;
  for (int ch = 0; ch < 3; ++ch)
    rgb[(r * cols + c) * 3 + ch] =
        (uint8_t)cava_clamp((long)(in[((long)ch * rows + r) * cols + c] * 255.0f + 0.5f), 0, 255);
}

static inline void cava_make_raw(uint8_t *raw, long rows, long cols) {
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c)
      raw[r * cols + c] = (uint8_t)((r * 7 + c * 13 + (r * c) % 29) % 256);
}

static inline double cava_checksum(const uint8_t *rgb, long rows, long cols) {
  double sum = 0;
  for (long i = 0; i < rows * cols * 3; ++i)
    sum += rgb[i] * (double)(i % 7 + 1);
  return sum;
}
#endif
