/* edge_gpu.c - frames per second of the edge-detection pipeline (examples/edge_detection.mlir,
 * a streaming graph: five per-pixel stages that become kernels with --target=gpu, and the
 * frame's maximum gradient, a sequential scan, on the CPU), on whatever the executable finds:
 * the GPU, or the CPU versions under HPVM_DEVICE=cpu. The buffers are tracked (they stay on
 * the device between stages, frames and runs); one untimed warm-up run, then RUNS timed runs
 * of FRAMES frames each, SLOTS in flight. Every edge map and maximum is then checked against
 * the sequential C reference (benchmarks/edge). Prints
 *   "edge WxH frames=F slots=S hpvm: min .. median .. max .. (R runs) checksum C" (C: the
 *   number of edge pixels) and "edge ...: frames/s X differing D wrong_maxima M"
 * Usage: edge_gpu [W H FRAMES SLOTS RUNS] */
#include "hpvm_examples.h"
#include <hpvm/hpvm.h>

#include "../release/bench_timer.h"
#include "edge_ref.h"

int main(int argc, char **argv) {
  int W = argc > 1 ? atoi(argv[1]) : 1920, H = argc > 2 ? atoi(argv[2]) : 1080;
  int frames = argc > 3 ? atoi(argv[3]) : 30, slots = argc > 4 ? atoi(argv[4]) : 4;
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  if (W < 1 || H < 1 || frames < 1 || slots < 1 || runs < 1) {
    fprintf(stderr, "usage: edge_gpu [W H FRAMES SLOTS RUNS], all positive\n");
    return 2;
  }
  long n = (long)W * H;
  size_t frames_bytes = sizeof(float) * n * frames, work_bytes = sizeof(float) * n * slots * 4;
  float *input = malloc(frames_bytes), *edges = calloc(n * frames, sizeof(float));
  float *work = malloc(work_bytes), *maxima = calloc(frames, sizeof(float));
  float w[EDGE_TAPS], *ref = malloc(sizeof(float) * n), *scratch = malloc(sizeof(float) * 4 * n);
  edge_gaussian_weights(w);
  for (int f = 0; f < frames; ++f)
    edge_frame(input + f * n, W, H, f);
  llvm_hpvm_track_mem(input, frames_bytes);
  llvm_hpvm_track_mem(edges, frames_bytes);
  llvm_hpvm_track_mem(work, work_bytes);
  llvm_hpvm_track_mem(w, sizeof w);
  double *times = malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { /* r = -1: the warm-up run (loads the kernels) */
    double t0 = bench_now_ms();
    hpvm_examples_detect_edges(input, edges, work, w, maxima, W, H, frames, slots);
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
  }
  llvm_hpvm_request_mem(edges, frames_bytes);
  long differing = 0, wrong_maxima = 0;
  double edge_pixels = 0;
  for (long i = 0; i < n * frames; ++i)
    edge_pixels += edges[i];
  for (int f = 0; f < frames; ++f) {
    float max_ref = edge_frame_seq(input + f * n, ref, scratch, w, W, H);
    differing += edge_check(edges + f * n, ref, n);
    wrong_maxima += maxima[f] != max_ref;
  }
  llvm_hpvm_untrack_mem(input);
  llvm_hpvm_untrack_mem(edges);
  llvm_hpvm_untrack_mem(work);
  llvm_hpvm_untrack_mem(w);
  char name[96];
  snprintf(name, sizeof name, "edge %dx%d frames=%d slots=%d", W, H, frames, slots);
  bench_report(name, "hpvm", times, runs, edge_pixels);
  printf("%s: frames/s %.1f differing %ld wrong_maxima %ld\n", name,
         frames * 1e3 / times[runs / 2], differing, wrong_maxima);
  return differing != 0 || wrong_maxima != 0;
}
