// The hpvm-cava camera pipeline as the release writes it: seven stages (scale, demosaic,
// denoise, transform, gamut map, tone map, descale), each a wrapper node over a 2-D grid of
// tiles whose leaf is one tile of pixels and returns the size of what it wrote
// (__hpvm__return(1, bytes)); edges carry that size to the next stage, ordering them.
//   hpvm-cc -O3 cava.c -o cava && ./cava ROWS COLS FRAMES RUNS
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "cava_point.h"

typedef struct {
  size_t bytes;
} Out;

/* A stage: its leaf (one pixel per instance: x is the column, y the row) and its wrapper. */
#define CAVA_STAGE(NAME, SRC_T, DST_T, FN)                                                       \
  Out NAME##_leaf(SRC_T *src, size_t bytes_src, DST_T *dst, size_t bytes_dst, long rows,        \
                  long cols) {                                                                   \
    __hpvm__hint(DEVICE);                                                                        \
    __hpvm__attributes(2, src, dst, 1, dst);                                                     \
    void *self = __hpvm__getNode(), *parent = __hpvm__getParentNode(self);                      \
    long c = __hpvm__getNodeInstanceID_x(parent) * __hpvm__getNumNodeInstances_x(self) +         \
             __hpvm__getNodeInstanceID_x(self);                                                  \
    long r = __hpvm__getNodeInstanceID_y(parent) * __hpvm__getNumNodeInstances_y(self) +         \
             __hpvm__getNodeInstanceID_y(self);                                                  \
    FN(src, dst, rows, cols, r, c);                                                              \
    __hpvm__return(1, bytes_dst);                                                                \
  }                                                                                              \
  Out NAME##_wrapper(SRC_T *src, size_t bytes_src, DST_T *dst, size_t bytes_dst, long rows,     \
                     long cols, long tile_x, long tile_y) {                                      \
    __hpvm__hint(CPU_TARGET);                                                                    \
    __hpvm__attributes(2, src, dst, 1, dst);                                                     \
    void *node = __hpvm__createNodeND(2, NAME##_leaf, tile_x, tile_y);                           \
    for (int p = 0; p < 6; ++p)                                                                  \
      __hpvm__bindIn(node, p, p, 0);                                                             \
    __hpvm__bindOut(node, 0, 0, 0);                                                              \
  }

CAVA_STAGE(scale, uint8_t, float, cava_scale)
CAVA_STAGE(demosaic, float, float, cava_demosaic)
CAVA_STAGE(denoise, float, float, cava_denoise)
CAVA_STAGE(transform, float, float, cava_transform)
CAVA_STAGE(gamut, float, float, cava_gamut)
CAVA_STAGE(tone, float, float, cava_tone)
CAVA_STAGE(descale, float, uint8_t, cava_descale)

typedef struct __attribute__((__packed__)) {
  uint8_t *raw;
  size_t bytes_raw;
  float *m;
  size_t bytes_m;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  uint8_t *rgb;
  size_t bytes_rgb;
  long rows, cols, tile_x, tile_y;
} RootIn;

/* Root ports: raw 0, m 2, b 4, c 6, rgb 8 (each followed by its size), rows 10, cols 11,
 * tile_x 12, tile_y 13. A stage reads buffer S and writes buffer D; after the first, its
 * input size comes over an edge from the stage before. */
#define CAVA_BIND_COMMON(node, D)                                                               \
  __hpvm__bindIn(node, D, 2, 0);                                                                 \
  __hpvm__bindIn(node, D + 1, 3, 0);                                                             \
  __hpvm__bindIn(node, 10, 4, 0);                                                                \
  __hpvm__bindIn(node, 11, 5, 0);                                                                \
  __hpvm__bindIn(node, 12, 6, 0);                                                                \
  __hpvm__bindIn(node, 13, 7, 0)
#define CAVA_BIND_FIRST(node, S, D)                                                             \
  __hpvm__bindIn(node, S, 0, 0);                                                                 \
  __hpvm__bindIn(node, S + 1, 1, 0);                                                             \
  CAVA_BIND_COMMON(node, D)
#define CAVA_BIND_NEXT(node, prev, S, D)                                                        \
  __hpvm__bindIn(node, S, 0, 0);                                                                 \
  __hpvm__edge(prev, node, 1, 0, 1, 0);                                                          \
  CAVA_BIND_COMMON(node, D)

Out CamPipe(uint8_t *raw, size_t bytes_raw, float *m, size_t bytes_m, float *b, size_t bytes_b,
            float *c, size_t bytes_c, uint8_t *rgb, size_t bytes_rgb, long rows, long cols,
            long tile_x, long tile_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(4, raw, m, b, c, 4, m, b, c, rgb);
  long grid_x = (cols + tile_x - 1) / tile_x, grid_y = (rows + tile_y - 1) / tile_y;
  void *scale = __hpvm__createNodeND(2, scale_wrapper, grid_x, grid_y);
  void *demosaic = __hpvm__createNodeND(2, demosaic_wrapper, grid_x, grid_y);
  void *denoise = __hpvm__createNodeND(2, denoise_wrapper, grid_x, grid_y);
  void *transform = __hpvm__createNodeND(2, transform_wrapper, grid_x, grid_y);
  void *gamut = __hpvm__createNodeND(2, gamut_wrapper, grid_x, grid_y);
  void *tone = __hpvm__createNodeND(2, tone_wrapper, grid_x, grid_y);
  void *descale = __hpvm__createNodeND(2, descale_wrapper, grid_x, grid_y);
  CAVA_BIND_FIRST(scale, 0, 2);
  CAVA_BIND_NEXT(demosaic, scale, 2, 4);
  CAVA_BIND_NEXT(denoise, demosaic, 4, 6);
  CAVA_BIND_NEXT(transform, denoise, 6, 4);
  CAVA_BIND_NEXT(gamut, transform, 4, 6);
  CAVA_BIND_NEXT(tone, gamut, 6, 4);
  CAVA_BIND_NEXT(descale, tone, 4, 8);
  __hpvm__bindOut(descale, 0, 0, 0);
}

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 480, cols = argc > 2 ? atol(argv[2]) : 640;
  int frames = argc > 3 ? atoi(argv[3]) : 4, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t pixels = (size_t)rows * cols;
  size_t bytes_raw = pixels, bytes_plane3 = sizeof(float) * 3 * pixels, bytes_rgb = 3 * pixels;
  uint8_t *raw = malloc(bytes_raw), *rgb = malloc(bytes_rgb);
  float *m = malloc(sizeof(float) * pixels), *b = malloc(bytes_plane3), *c = malloc(bytes_plane3);
  double *times = malloc(sizeof(double) * runs);
  RootIn *args = malloc(sizeof(RootIn));
  cava_make_raw(raw, rows, cols);
  __hpvm__init();
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    llvm_hpvm_track_mem(raw, bytes_raw);
    llvm_hpvm_track_mem(m, sizeof(float) * pixels);
    llvm_hpvm_track_mem(b, bytes_plane3);
    llvm_hpvm_track_mem(c, bytes_plane3);
    llvm_hpvm_track_mem(rgb, bytes_rgb);
    double start = bench_now_ms();
    for (int f = 0; f < frames; ++f) {
      *args = (RootIn){raw, bytes_raw, m, sizeof(float) * pixels, b, bytes_plane3, c,
                       bytes_plane3, rgb, bytes_rgb, rows, cols, CAVA_TILE_X, CAVA_TILE_Y};
      void *dfg = __hpvm__launch(0, CamPipe, (void *)args);
      __hpvm__wait(dfg);
    }
    llvm_hpvm_request_mem(rgb, bytes_rgb);
    times[r] = bench_now_ms() - start;
    checksum = cava_checksum(rgb, rows, cols);
    llvm_hpvm_untrack_mem(raw);
    llvm_hpvm_untrack_mem(m);
    llvm_hpvm_untrack_mem(b);
    llvm_hpvm_untrack_mem(c);
    llvm_hpvm_untrack_mem(rgb);
  }
  bench_report("cava", "hpvm", times, runs, checksum);
  __hpvm__cleanup();
  free(raw), free(rgb), free(m), free(b), free(c), free(times), free(args);
  return 0;
}
