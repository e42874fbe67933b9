/* hpvm_examples.h - the C interfaces of the example programs in examples/, as hpvm-cc compiles
 * them: each public host function @f of an example is _mlir_ciface_f here. Test hosts and
 * benchmark drivers include this header instead of repeating the prototypes. */
#ifndef HPVM_EXAMPLES_H
#define HPVM_EXAMPLES_H

#include <hpvm/hpvm_memref.h>
#include <stdint.h>

HPVM_MEMREF_DEFINE(hpvm_examples_weights_t, float, 1);  /* memref<49xf32> */
HPVM_MEMREF_DEFINE(hpvm_examples_bins_t, int32_t, 1);   /* memref<256xi32> */

/* vector_add.mlir: c = a + b over n elements. */
void _mlir_ciface_vadd(hpvm_memref_f32_1d_t *a, hpvm_memref_f32_1d_t *b, hpvm_memref_f32_1d_t *c,
                       int64_t n);
/* sgemm.mlir: C = A x B (row-major, M x K times K x N). */
void _mlir_ciface_sgemm(hpvm_memref_f32_2d_t *a, hpvm_memref_f32_2d_t *b, hpvm_memref_f32_2d_t *c);
/* stencil.mlir: `iterations` Jacobi steps ping-ponging a and b (the result is in a after an
 * even number of iterations, in b otherwise). */
void _mlir_ciface_stencil(hpvm_memref_f32_1d_t *a, hpvm_memref_f32_1d_t *b, int64_t nx, int64_t ny,
                          int64_t nz, int64_t iterations);
/* histogram.mlir: bins[v] += number of bytes equal to v. */
void _mlir_ciface_histogram(hpvm_memref_u8_1d_t *data, hpvm_examples_bins_t *bins);
/* tile_reduction.mlir: sums[t] = sum of x[64 t .. 64 t + 63]. */
void _mlir_ciface_tile_sums(hpvm_memref_f32_1d_t *x, hpvm_memref_f32_1d_t *sums);
/* edge_detection.mlir: streams `count` frames [frames, height, width] through the 6-stage
 * pipeline with at most `slots` in flight (intermediate buffers are [slots, height, width]). */
void _mlir_ciface_detect_edges(hpvm_memref_f32_3d_t *input, hpvm_memref_f32_3d_t *edges,
                               hpvm_memref_f32_3d_t *smooth, hpvm_memref_f32_3d_t *laplace,
                               hpvm_memref_f32_3d_t *crossings, hpvm_memref_f32_3d_t *gradients,
                               hpvm_examples_weights_t *w, hpvm_memref_f32_1d_t *maxima,
                               int64_t count, int64_t slots);

/* detect_edges over plain arrays: `input` and `edges` hold `frames` frames of height x width,
 * `work` the four intermediate buffers of `slots` frames each (smoothed, Laplacian, zero
 * crossings, gradients, in that order), `w` the 49 weights, `maxima` one value per frame. */
static inline void hpvm_examples_detect_edges(float *input, float *edges, float *work, float *w,
                                              float *maxima, int width, int height, int frames,
                                              int slots) {
  long n = (long)width * height;
  hpvm_memref_f32_3d_t in = hpvm_memref_f32_3d(input, frames, height, width),
                       out = hpvm_memref_f32_3d(edges, frames, height, width),
                       s = hpvm_memref_f32_3d(work, slots, height, width),
                       l = hpvm_memref_f32_3d(work + n * slots, slots, height, width),
                       z = hpvm_memref_f32_3d(work + 2 * n * slots, slots, height, width),
                       g = hpvm_memref_f32_3d(work + 3 * n * slots, slots, height, width);
  hpvm_examples_weights_t weights = {w, w, 0, {49}, {1}};
  hpvm_memref_f32_1d_t m = hpvm_memref_f32_1d(maxima, frames);
  _mlir_ciface_detect_edges(&in, &out, &s, &l, &z, &g, &weights, &m, frames, slots);
}

#endif /* HPVM_EXAMPLES_H */
