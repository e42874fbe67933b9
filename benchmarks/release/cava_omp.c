// The same camera pipeline as cava.c: each stage's pixel function called over the same grids
// (tiles, then the pixels of a tile, x innermost) by an OpenMP loop nest, stage after stage.
#include <stdio.h>
#include <stdlib.h>

#include "bench_timer.h"
#include "cava_point.h"

#define CAVA_OMP_STAGE(FN, SRC, DST)                                                            \
  _Pragma("omp parallel for collapse(2) schedule(static)")                                       \
  for (long gy = 0; gy < grid_y; ++gy)                                                           \
    for (long gx = 0; gx < grid_x; ++gx)                                                         \
      for (long ly = 0; ly < CAVA_TILE_Y; ++ly)                                                  \
        for (long lx = 0; lx < CAVA_TILE_X; ++lx)                                                \
          FN(SRC, DST, rows, cols, gy * CAVA_TILE_Y + ly, gx * CAVA_TILE_X + lx);

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 480, cols = argc > 2 ? atol(argv[2]) : 640;
  int frames = argc > 3 ? atoi(argv[3]) : 4, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t pixels = (size_t)rows * cols;
  uint8_t *raw = malloc(pixels), *rgb = malloc(3 * pixels);
  float *m = malloc(sizeof(float) * pixels), *b = malloc(sizeof(float) * 3 * pixels),
        *c = malloc(sizeof(float) * 3 * pixels);
  double *times = malloc(sizeof(double) * runs);
  long grid_x = (cols + CAVA_TILE_X - 1) / CAVA_TILE_X, grid_y = (rows + CAVA_TILE_Y - 1) / CAVA_TILE_Y;
  cava_make_raw(raw, rows, cols);
  double checksum = 0;
  for (int r = 0; r < runs; ++r) {
    double start = bench_now_ms();
    for (int f = 0; f < frames; ++f) {
      CAVA_OMP_STAGE(cava_scale, raw, m)
      CAVA_OMP_STAGE(cava_demosaic, m, b)
      CAVA_OMP_STAGE(cava_denoise, b, c)
      CAVA_OMP_STAGE(cava_transform, c, b)
      CAVA_OMP_STAGE(cava_gamut, b, c)
      CAVA_OMP_STAGE(cava_tone, c, b)
      CAVA_OMP_STAGE(cava_descale, b, rgb)
    }
    times[r] = bench_now_ms() - start;
    checksum = cava_checksum(rgb, rows, cols);
  }
  bench_report("cava", "openmp", times, runs, checksum);
  free(raw), free(rgb), free(m), free(b), free(c), free(times);
  return 0;
}
