/* edge_ref.h - reference 6-stage edge-detection pipeline (HPVM paper) that HPVM's pipeline is checked against. */
#ifndef HPVM_EDGE_REF_H
#define HPVM_EDGE_REF_H

/*
 * Images are float, row-major, index = y*W + x. Every neighbourhood read clamps coordinates to
 * the image (clamp-to-edge). Stage outputs: S smoothed, L Laplacian estimate, Z zero crossings
 * (0/1), G gradient magnitude, maxG, E edge map (0/1). See benchmarks/README.md for the contract.
 */

#define EDGE_RADIUS 3                 /* 7x7 Gaussian */
#define EDGE_TAPS 49
#define EDGE_SIGMA 1.4                /* double: the weights are computed in double, then rounded */
#define EDGE_THETA 0.1f

/* Floats of scratch space edge_frame_seq/omp need: S, L, Z and G, W*H each. */
#define EDGE_WORK_FLOATS(W, H) (4L * (long)(W) * (long)(H))

/* w[(dy+3)*7 + (dx+3)] = exp(-(dx^2+dy^2)/(2 sigma^2)) / sum, in double, rounded to float. */
void edge_gaussian_weights(float w[EDGE_TAPS]);

/* Synthetic frame f: smooth ramp plus three moving filled shapes, values in [0, 1]. */
void edge_frame(float *img, int W, int H, int f);

/* Per-pixel bodies: one HPVM leaf instance each. */
float edge_gaussian_px(const float *I, const float *w, int W, int H, int x, int y);
float edge_laplacian_px(const float *S, int W, int H, int x, int y);
float edge_zerocross_px(const float *L, int W, int H, int x, int y);
float edge_gradient_px(const float *S, int W, int H, int x, int y);
float edge_reject_px(float z, float g, float maxG);

/* Stages over a whole image, sequential. */
void edge_gaussian(const float *I, float *S, const float *w, int W, int H); /* stage 1 */
void edge_laplacian(const float *S, float *L, int W, int H);                /* stage 2 */
void edge_zerocross(const float *L, float *Z, int W, int H);                /* stage 3 */
void edge_gradient(const float *S, float *G, int W, int H);                 /* stage 4 */
float edge_maxg(const float *G, long n);                                     /* stage 5 */
void edge_reject(const float *Z, const float *G, float maxG, float *E, long n); /* stage 6 */

/* The same stages with every per-pixel loop under `omp parallel for`, stage 5 a max reduction. */
void edge_gaussian_omp(const float *I, float *S, const float *w, int W, int H);
void edge_laplacian_omp(const float *S, float *L, int W, int H);
void edge_zerocross_omp(const float *L, float *Z, int W, int H);
void edge_gradient_omp(const float *S, float *G, int W, int H);
float edge_maxg_omp(const float *G, long n);
void edge_reject_omp(const float *Z, const float *G, float maxG, float *E, long n);

/* Whole pipeline for one frame I -> E; work holds EDGE_WORK_FLOATS(W, H) floats. Returns maxG. */
float edge_frame_seq(const float *I, float *E, float *work, const float *w, int W, int H);
float edge_frame_omp(const float *I, float *E, float *work, const float *w, int W, int H);

/* Number of pixels whose edge-map values differ. */
long edge_check(const float *E, const float *ref, long n);
/* For intermediate stages: count of |a - ref| > tolerance * max(|ref|, 1); NaN always counts. */
long edge_check_float(const float *a, const float *ref, long n, float tolerance);

#endif
