/* edge_ref.c - sequential and OpenMP stages of the edge-detection pipeline, sharing per-pixel bodies. */
#include "edge_ref.h"
#include "../common/omp_compat.h"

#include <math.h>

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

void edge_gaussian_weights(float w[EDGE_TAPS]) {
  double t[EDGE_TAPS], sum = 0.0;
  for (int dy = -EDGE_RADIUS; dy <= EDGE_RADIUS; dy++)
    for (int dx = -EDGE_RADIUS; dx <= EDGE_RADIUS; dx++) {
      double v = exp(-(double)(dx * dx + dy * dy) / (2.0 * EDGE_SIGMA * EDGE_SIGMA));
      t[(dy + EDGE_RADIUS) * 7 + (dx + EDGE_RADIUS)] = v;
      sum += v;
    }
  for (int i = 0; i < EDGE_TAPS; i++) w[i] = (float)(t[i] / sum);
}

/*
 * Shapes are decided with integer geometry and the ramp with plain float arithmetic, so the
 * frame is bit-identical on every IEEE machine. Shapes move by a few pixels per frame so that
 * consecutive frames differ (a pipeline that skips or reorders frames is caught).
 */
void edge_frame(float *img, int W, int H, int f) {
  int m = W < H ? W : H;
  long r1 = m / 8, r2 = m / 12;
  long c1x = W / 4 + (3L * f) % (W / 2 + 1), c1y = H / 3;
  long c2x = (3L * W) / 4 - (2L * f) % (W / 2 + 1), c2y = (2L * H) / 3 + (f % 7);
  long rx0 = W / 2 + (f % 11), rx1 = rx0 + W / 5, ry0 = H / 8 + 2L * (f % 5), ry1 = ry0 + H / 6;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float v = 0.1f + 0.4f * (float)(x + y) / (float)(W + H);
      long d1x = x - c1x, d1y = y - c1y, d2x = x - c2x, d2y = y - c2y;
      if (x >= rx0 && x < rx1 && y >= ry0 && y < ry1) v = 0.15f;
      if (d1x * d1x + d1y * d1y <= r1 * r1) v = 0.9f;
      if (d2x * d2x + d2y * d2y <= r2 * r2) v = 0.6f;
      img[(long)y * W + x] = v;
    }
}

/* Row-major over the window (dy outer, dx inner), one float accumulator: contract order. */
float edge_gaussian_px(const float *I, const float *w, int W, int H, int x, int y) {
  float acc = 0.0f;
  for (int dy = -EDGE_RADIUS; dy <= EDGE_RADIUS; dy++) {
    const float *row = I + (long)clampi(y + dy, 0, H - 1) * W;
    for (int dx = -EDGE_RADIUS; dx <= EDGE_RADIUS; dx++)
      acc += w[(dy + EDGE_RADIUS) * 7 + (dx + EDGE_RADIUS)] * row[clampi(x + dx, 0, W - 1)];
  }
  return acc;
}

/* Morphological Laplacian: dilate + erode - 2*centre with a 3x3 square element. */
float edge_laplacian_px(const float *S, int W, int H, int x, int y) {
  float mx = S[(long)y * W + x], mn = mx;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      float v = S[(long)clampi(y + dy, 0, H - 1) * W + clampi(x + dx, 0, W - 1)];
      mx = v > mx ? v : mx;
      mn = v < mn ? v : mn;
    }
  return (mx + mn) - 2.0f * S[(long)y * W + x];
}

/* dilate(B) - erode(B) of the sign image B = (L > 0): 1 iff the window holds both signs. */
float edge_zerocross_px(const float *L, int W, int H, int x, int y) {
  int any_pos = 0, any_nonpos = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      float v = L[(long)clampi(y + dy, 0, H - 1) * W + clampi(x + dx, 0, W - 1)];
      if (v > 0.0f) any_pos = 1; else any_nonpos = 1;
    }
  return (any_pos && any_nonpos) ? 1.0f : 0.0f;
}

static const float sobel_x[9] = {-1.0f, 0.0f, 1.0f, -2.0f, 0.0f, 2.0f, -1.0f, 0.0f, 1.0f};
static const float sobel_y[9] = {-1.0f, -2.0f, -1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 2.0f, 1.0f};

float edge_gradient_px(const float *S, int W, int H, int x, int y) {
  float gx = 0.0f, gy = 0.0f;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      float v = S[(long)clampi(y + dy, 0, H - 1) * W + clampi(x + dx, 0, W - 1)];
      gx += sobel_x[(dy + 1) * 3 + (dx + 1)] * v;
      gy += sobel_y[(dy + 1) * 3 + (dx + 1)] * v;
    }
  return sqrtf(gx * gx + gy * gy);
}

float edge_reject_px(float z, float g, float maxG) {
  return (z > 0.0f && g > EDGE_THETA * maxG) ? 1.0f : 0.0f;
}

/* The image loops are stamped out twice so the sequential build carries no OpenMP pragma at all. */
#define EDGE_IMAGE_LOOP(PRAGMA, OUT, EXPR)  \
  PRAGMA                                    \
  for (int y = 0; y < H; y++)               \
    for (int x = 0; x < W; x++)             \
      OUT[(long)y * W + x] = (EXPR);

#define NO_PRAGMA
#define OMP_ROWS BENCH_OMP("omp parallel for schedule(static)")

void edge_gaussian(const float *I, float *S, const float *w, int W, int H) {
  EDGE_IMAGE_LOOP(NO_PRAGMA, S, edge_gaussian_px(I, w, W, H, x, y))
}
void edge_laplacian(const float *S, float *L, int W, int H) {
  EDGE_IMAGE_LOOP(NO_PRAGMA, L, edge_laplacian_px(S, W, H, x, y))
}
void edge_zerocross(const float *L, float *Z, int W, int H) {
  EDGE_IMAGE_LOOP(NO_PRAGMA, Z, edge_zerocross_px(L, W, H, x, y))
}
void edge_gradient(const float *S, float *G, int W, int H) {
  EDGE_IMAGE_LOOP(NO_PRAGMA, G, edge_gradient_px(S, W, H, x, y))
}
float edge_maxg(const float *G, long n) {
  float m = 0.0f; /* G >= 0, so 0 is the identity of this max */
  for (long i = 0; i < n; i++) m = G[i] > m ? G[i] : m;
  return m;
}
void edge_reject(const float *Z, const float *G, float maxG, float *E, long n) {
  for (long i = 0; i < n; i++) E[i] = edge_reject_px(Z[i], G[i], maxG);
}

void edge_gaussian_omp(const float *I, float *S, const float *w, int W, int H) {
  EDGE_IMAGE_LOOP(OMP_ROWS, S, edge_gaussian_px(I, w, W, H, x, y))
}
void edge_laplacian_omp(const float *S, float *L, int W, int H) {
  EDGE_IMAGE_LOOP(OMP_ROWS, L, edge_laplacian_px(S, W, H, x, y))
}
void edge_zerocross_omp(const float *L, float *Z, int W, int H) {
  EDGE_IMAGE_LOOP(OMP_ROWS, Z, edge_zerocross_px(L, W, H, x, y))
}
void edge_gradient_omp(const float *S, float *G, int W, int H) {
  EDGE_IMAGE_LOOP(OMP_ROWS, G, edge_gradient_px(S, W, H, x, y))
}
float edge_maxg_omp(const float *G, long n) {
  float m = 0.0f;
BENCH_OMP("omp parallel for schedule(static) reduction(max : m)")
  for (long i = 0; i < n; i++) m = G[i] > m ? G[i] : m;
  return m;
}
void edge_reject_omp(const float *Z, const float *G, float maxG, float *E, long n) {
BENCH_OMP("omp parallel for schedule(static)")
  for (long i = 0; i < n; i++) E[i] = edge_reject_px(Z[i], G[i], maxG);
}

float edge_frame_seq(const float *I, float *E, float *work, const float *w, int W, int H) {
  long n = (long)W * H;
  float *S = work, *L = work + n, *Z = work + 2 * n, *G = work + 3 * n;
  edge_gaussian(I, S, w, W, H);
  edge_laplacian(S, L, W, H);
  edge_zerocross(L, Z, W, H);
  edge_gradient(S, G, W, H);
  float maxG = edge_maxg(G, n);
  edge_reject(Z, G, maxG, E, n);
  return maxG;
}

float edge_frame_omp(const float *I, float *E, float *work, const float *w, int W, int H) {
  long n = (long)W * H;
  float *S = work, *L = work + n, *Z = work + 2 * n, *G = work + 3 * n;
  edge_gaussian_omp(I, S, w, W, H);
  edge_laplacian_omp(S, L, W, H);
  edge_zerocross_omp(L, Z, W, H);
  edge_gradient_omp(S, G, W, H);
  float maxG = edge_maxg_omp(G, n);
  edge_reject_omp(Z, G, maxG, E, n);
  return maxG;
}

long edge_check(const float *E, const float *ref, long n) {
  long bad = 0;
  for (long i = 0; i < n; i++) bad += E[i] != ref[i];
  return bad;
}

long edge_check_float(const float *a, const float *ref, long n, float tolerance) {
  long bad = 0;
  for (long i = 0; i < n; i++) {
    float r = ref[i], d = fabsf(a[i] - r), scale = fabsf(r) > 1.0f ? fabsf(r) : 1.0f;
    if (!(d <= tolerance * scale)) bad++;
  }
  return bad;
}
