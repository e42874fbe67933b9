/* stencil_main.c - times stencil_seq / stencil_omp and checks the OpenMP result against the sequential one. */
#include "../common/bench_common.h"
#include "stencil_ref.h"

#include "../common/omp_compat.h"

typedef float *(*stencil_fn)(float *, float *, int, int, int, int);

struct grid {
  int nx, ny, nz, iters;
  long n;
  const float *init;
};

/* Each run restarts from the initial grid; the copy is outside the timed region. */
static double time_runs(stencil_fn fn, const struct grid *g, float *a, float *b, float **result,
                        int runs) {
  double *t = bench_alloc(sizeof(double) * (size_t)runs);
  for (int r = -1; r < runs; r++) { /* r == -1 is the untimed warm-up */
    memcpy(a, g->init, sizeof(float) * (size_t)g->n);
    double t0 = bench_now_ms();
    *result = fn(a, b, g->nx, g->ny, g->nz, g->iters);
    if (r >= 0) t[r] = bench_now_ms() - t0;
  }
  double med = bench_median(t, runs);
  free(t);
  return med;
}

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv, "nx ny nz iterations");
  struct grid g;
  g.nx = o.npos > 0 ? (int)o.pos[0] : 128;
  g.ny = o.npos > 1 ? (int)o.pos[1] : g.nx;
  g.nz = o.npos > 2 ? (int)o.pos[2] : g.nx;
  g.iters = o.npos > 3 ? (int)o.pos[3] : 100;
  g.n = (long)g.nx * g.ny * g.nz;
  size_t bytes = sizeof(float) * (size_t)g.n;
  float *init = bench_alloc(bytes);
  stencil_init(init, g.nx, g.ny, g.nz);
  g.init = init;
  float *sa = bench_alloc(bytes), *sb = bench_alloc(bytes);
  float *pa = bench_alloc(bytes), *pb = bench_alloc(bytes);
  long interior = (long)(g.nx > 2 ? g.nx - 2 : 0) * (g.ny > 2 ? g.ny - 2 : 0) * (g.nz > 2 ? g.nz - 2 : 0);
  double flop = 8.0 * (double)interior * g.iters; /* 5 adds + 2 muls + 1 sub per interior point */
  float *ref, *out;

  if (o.do_seq) {
    double ms = time_runs(stencil_seq, &g, sa, sb, &ref, o.runs);
    printf("stencil seq nx=%d ny=%d nz=%d iters=%d runs=%d median_ms=%.1f gflops=%.2f check=ref\n",
           g.nx, g.ny, g.nz, g.iters, o.runs, ms, flop / ms * 1e-6);
  } else {
    memcpy(sa, init, bytes);
    ref = stencil_seq(sa, sb, g.nx, g.ny, g.nz, g.iters);
  }
  fflush(stdout);
  if (o.dump) bench_dump(o.dump, ref, (size_t)g.n);

  int bad = 0;
  if (o.do_omp) {
    double ms = time_runs(stencil_omp, &g, pa, pb, &out, o.runs);
    bad = stencil_check(out, ref, g.n, 0.0f); /* identical per-point expression: exact match expected */
    printf("stencil omp nx=%d ny=%d nz=%d iters=%d threads=%d runs=%d median_ms=%.1f gflops=%.2f check=%s",
           g.nx, g.ny, g.nz, g.iters, bench_omp_threads(), o.runs, ms, flop / ms * 1e-6,
           bad ? "FAIL" : "ok");
    if (bad) printf(" mismatches=%d", bad);
    printf("\n");
  }
  free(init), free(sa), free(sb), free(pa), free(pb);
  return bad ? 1 : 0;
}
