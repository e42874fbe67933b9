/* stencil_bench.c - examples/stencil.mlir (one HPVM launch per iteration) against the OpenMP and
 * sequential C stencil of benchmarks/stencil, in one process. Usage: stencil_bench [nx ny nz
 * iterations] [--runs R]. */
#include "hpvm_examples.h"

#include "bench_versions.h"
#include "stencil_ref.h"


typedef struct {
  int nx, ny, nz, iterations;
  long n;
  float *init, *a[VERSION_COUNT], *b[VERSION_COUNT], *result[VERSION_COUNT];
} stencil_state;

static void reset(stencil_state *s, int v) {
  memcpy(s->a[v], s->init, sizeof(float) * (size_t)s->n);
  memcpy(s->b[v], s->init, sizeof(float) * (size_t)s->n);
}
static void run_hpvm(void *p) {
  stencil_state *s = p;
  hpvm_memref_f32_1d_t a = hpvm_memref_f32_1d(s->a[VERSION_HPVM], s->n),
                       b = hpvm_memref_f32_1d(s->b[VERSION_HPVM], s->n);
  _mlir_ciface_stencil(&a, &b, s->nx, s->ny, s->nz, s->iterations);
  s->result[VERSION_HPVM] = s->iterations % 2 == 0 ? s->a[VERSION_HPVM] : s->b[VERSION_HPVM];
}
static void run_omp(void *p) {
  stencil_state *s = p;
  s->result[VERSION_OMP] =
      stencil_omp(s->a[VERSION_OMP], s->b[VERSION_OMP], s->nx, s->ny, s->nz, s->iterations);
}
static void run_seq(void *p) {
  stencil_state *s = p;
  s->result[VERSION_SEQ] =
      stencil_seq(s->a[VERSION_SEQ], s->b[VERSION_SEQ], s->nx, s->ny, s->nz, s->iterations);
}

int main(int argc, char **argv) {
  int runs = 5, sizes[4] = {128, 128, 128, 100}, count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (count < 4)
      sizes[count++] = atoi(argv[i]);
  }
  stencil_state s = {sizes[0], sizes[1], sizes[2], sizes[3], 0, NULL, {NULL}, {NULL}, {NULL}};
  s.n = (long)s.nx * s.ny * s.nz;
  s.init = bench_alloc(sizeof(float) * (size_t)s.n);
  stencil_init(s.init, s.nx, s.ny, s.nz);
  for (int v = 0; v < VERSION_COUNT; ++v) {
    s.a[v] = bench_alloc(sizeof(float) * (size_t)s.n);
    s.b[v] = bench_alloc(sizeof(float) * (size_t)s.n);
    reset(&s, v);
  }
  version_fn fns[VERSION_COUNT] = {run_hpvm, run_omp, run_seq};
  bench_range_t ms[VERSION_COUNT], ratio;
  /* Each run restarts from the initial grid; the copy is outside the timed call. */
  time_versions(fns, &s, runs, ms, &ratio);
  for (int v = 0; v < VERSION_COUNT; ++v)
    reset(&s, v);
  for (int v = 0; v < VERSION_COUNT; ++v)
    fns[v](&s);
  long mismatches = stencil_check(s.result[VERSION_HPVM], s.result[VERSION_SEQ], s.n, 0.0f);
  double interior = (double)(s.nx - 2) * (s.ny - 2) * (s.nz - 2);
  for (int v = 0; v < VERSION_COUNT; ++v)
    printf("stencil %s %dx%dx%d iterations=%d runs=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f "
           "gflops=%.2f\n",
           version_names[v], s.nx, s.ny, s.nz, s.iterations, runs, ms[v].median, ms[v].min,
           ms[v].max, 8.0 * interior * s.iterations / (ms[v].median * 1e6));
  printf("stencil ratio hpvm/omp=%.3f min=%.3f max=%.3f check=%s\n", ratio.median, ratio.min,
         ratio.max, mismatches ? "MISMATCH" : "ok");
  return mismatches != 0;
}
