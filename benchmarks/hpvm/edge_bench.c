/* edge_bench.c - examples/edge_detection.mlir (a streaming graph, frames in flight) against the
 * OpenMP and sequential C pipeline of benchmarks/edge, frame by frame, in one process.
 * Usage: edge_bench [W H frames slots] [--runs R]. */
#include "hpvm_examples.h"

#include "bench_versions.h"
#include "edge_ref.h"


typedef struct {
  int W, H, frames, slots;
  long n;
  float *input, *edges[VERSION_COUNT], *work, *maxima, w[EDGE_TAPS];
} edge_state;

static void run_hpvm(void *p) {
  edge_state *s = p;
  hpvm_examples_detect_edges(s->input, s->edges[VERSION_HPVM], s->work, s->w, s->maxima, s->W,
                             s->H, s->frames, s->slots);
}
static void run_omp(void *p) {
  edge_state *s = p;
  for (int f = 0; f < s->frames; ++f)
    edge_frame_omp(s->input + f * s->n, s->edges[VERSION_OMP] + f * s->n, s->work, s->w, s->W,
                   s->H);
}
static void run_seq(void *p) {
  edge_state *s = p;
  for (int f = 0; f < s->frames; ++f)
    edge_frame_seq(s->input + f * s->n, s->edges[VERSION_SEQ] + f * s->n, s->work, s->w, s->W,
                   s->H);
}

int main(int argc, char **argv) {
  int runs = 5, sizes[4] = {1280, 1280, 8, 4}, count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (count < 4)
      sizes[count++] = atoi(argv[i]);
  }
  edge_state s = {sizes[0], sizes[1], sizes[2], sizes[3], 0, NULL, {NULL}, NULL, NULL, {0}};
  s.n = (long)s.W * s.H;
  s.input = bench_alloc(sizeof(float) * (size_t)(s.n * s.frames));
  for (int v = 0; v < VERSION_COUNT; ++v)
    s.edges[v] = bench_alloc(sizeof(float) * (size_t)(s.n * s.frames));
  s.work = bench_alloc(sizeof(float) * (size_t)(s.n * 4 * (s.slots > 1 ? s.slots : 1)));
  s.maxima = bench_alloc(sizeof(float) * (size_t)s.frames);
  edge_gaussian_weights(s.w);
  for (int f = 0; f < s.frames; ++f)
    edge_frame(s.input + f * s.n, s.W, s.H, f);
  version_fn fns[VERSION_COUNT] = {run_hpvm, run_omp, run_seq};
  bench_range_t ms[VERSION_COUNT], ratio;
  time_versions(fns, &s, runs, ms, &ratio);
  long differing = edge_check(s.edges[VERSION_HPVM], s.edges[VERSION_SEQ], s.n * s.frames);
  for (int v = 0; v < VERSION_COUNT; ++v)
    printf("edge %s %dx%d frames=%d runs=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f "
           "frames_per_s=%.2f\n",
           version_names[v], s.W, s.H, s.frames, runs, ms[v].median, ms[v].min, ms[v].max,
           s.frames / (ms[v].median * 1e-3));
  printf("edge ratio hpvm/omp=%.3f min=%.3f max=%.3f check=%s\n", ratio.median, ratio.min,
         ratio.max, differing ? "MISMATCH" : "ok");
  return differing != 0;
}
