/* edge_main.c - times the edge-detection pipeline (frames/s), sequential vs OpenMP, and checks the edge maps. */
#include "../common/bench_common.h"
#include "edge_ref.h"

#include "../common/omp_compat.h"

typedef float (*frame_fn)(const float *, float *, float *, const float *, int, int);

/* Frames are generated before timing: the pipeline's input stream is not part of its cost. */
static double time_runs(frame_fn fn, const float *frames, float *edges, float *work, const float *w,
                        int W, int H, int nframes, int runs) {
  long n = (long)W * H;
  double *t = bench_alloc(sizeof(double) * (size_t)runs);
  for (int r = -1; r < runs; r++) { /* r == -1 is the untimed warm-up */
    double t0 = bench_now_ms();
    for (int f = 0; f < nframes; f++) fn(frames + f * n, edges + f * n, work, w, W, H);
    if (r >= 0) t[r] = bench_now_ms() - t0;
  }
  double med = bench_median(t, runs);
  free(t);
  return med;
}

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv, "W H frames");
  int W = o.npos > 0 ? (int)o.pos[0] : 1280;
  int H = o.npos > 1 ? (int)o.pos[1] : W;
  int F = o.npos > 2 ? (int)o.pos[2] : 4;
  long n = (long)W * H;
  float w[EDGE_TAPS];
  edge_gaussian_weights(w);
  float *frames = bench_alloc(sizeof(float) * (size_t)(n * F));
  float *ref = bench_alloc(sizeof(float) * (size_t)(n * F));
  float *edges = bench_alloc(sizeof(float) * (size_t)(n * F));
  float *work = bench_alloc(sizeof(float) * (size_t)EDGE_WORK_FLOATS(W, H));
  for (int f = 0; f < F; f++) edge_frame(frames + f * n, W, H, f);

  if (o.do_seq) {
    double ms = time_runs(edge_frame_seq, frames, ref, work, w, W, H, F, o.runs);
    long on = 0;
    for (long i = 0; i < n * F; i++) on += ref[i] != 0.0f;
    printf("edge seq W=%d H=%d frames=%d runs=%d median_ms=%.1f fps=%.2f edge_px=%ld check=ref\n",
           W, H, F, o.runs, ms, F / ms * 1e3, on);
  } else {
    for (int f = 0; f < F; f++) edge_frame_seq(frames + f * n, ref + f * n, work, w, W, H);
  }
  fflush(stdout);
  if (o.dump) bench_dump(o.dump, ref, (size_t)(n * F));

  long bad = 0;
  if (o.do_omp) {
    double ms = time_runs(edge_frame_omp, frames, edges, work, w, W, H, F, o.runs);
    bad = edge_check(edges, ref, n * F);
    printf("edge omp W=%d H=%d frames=%d threads=%d runs=%d median_ms=%.1f fps=%.2f check=%s",
           W, H, F, bench_omp_threads(), o.runs, ms, F / ms * 1e3, bad ? "FAIL" : "ok");
    if (bad) printf(" mismatches=%ld", bad);
    printf("\n");
  }
  free(frames), free(ref), free(edges), free(work);
  return bad ? 1 : 0;
}
