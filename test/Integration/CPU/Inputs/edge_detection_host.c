/* Host of examples/edge_detection.mlir: streams generated frames through the pipeline and compares
 * every edge map and maximum gradient with the sequential reference of benchmarks/edge. */
#include "hpvm_examples.h"
#include <stdio.h>
#include <stdlib.h>

#include "edge_ref.h"


int main(int argc, char **argv) {
  int W = argc > 1 ? atoi(argv[1]) : 96, H = argc > 2 ? atoi(argv[2]) : 64;
  int frames = argc > 3 ? atoi(argv[3]) : 6, slots = argc > 4 ? atoi(argv[4]) : 3;
  long n = (long)W * H;
  float *input = malloc(sizeof(float) * n * frames), *edges = calloc(n * frames, sizeof(float));
  float *work = malloc(sizeof(float) * n * slots * 4), *maxima = calloc(frames, sizeof(float));
  float w[EDGE_TAPS], *ref = malloc(sizeof(float) * n), *scratch = malloc(sizeof(float) * 4 * n);
  edge_gaussian_weights(w);
  for (int f = 0; f < frames; ++f)
    edge_frame(input + f * n, W, H, f);
  hpvm_examples_detect_edges(input, edges, work, w, maxima, W, H, frames, slots);
  long differing = 0, wrong_maxima = 0, edge_pixels = 0;
  for (int f = 0; f < frames; ++f) {
    float max_ref = edge_frame_seq(input + f * n, ref, scratch, w, W, H);
    differing += edge_check(edges + f * n, ref, n);
    wrong_maxima += maxima[f] != max_ref;
    for (long i = 0; i < n; ++i)
      edge_pixels += ref[i] > 0.0f;
  }
  printf("edge detection %dx%d frames=%d slots=%d edge_pixels=%s differing=%ld wrong_maxima=%ld\n",
         W, H, frames, slots, edge_pixels > 0 ? "some" : "none", differing, wrong_maxima);
  return differing != 0 || wrong_maxima != 0;
}
