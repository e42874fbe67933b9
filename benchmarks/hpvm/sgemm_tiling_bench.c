/* sgemm_tiling_bench.c - the untiled sgemm (examples/sgemm_flat.mlir: one leaf over the C grid)
 * against the same program after hpvm-tile-nodes, in one process: runs alternate, medians and
 * the ratio are printed, and both results must be bitwise equal. Usage: sgemm_tiling_bench
 * [M N K] [--runs R]. The two programs are compiled from .mlir files whose launch functions are
 * renamed @sgemm_flat and @sgemm_tiled (run_cpu.sh). */
#include "hpvm_examples.h"

#include "bench_versions.h"
#include "sgemm_ref.h"

void _mlir_ciface_sgemm_flat(hpvm_memref_f32_2d_t *a, hpvm_memref_f32_2d_t *b,
                             hpvm_memref_f32_2d_t *c);
void _mlir_ciface_sgemm_tiled(hpvm_memref_f32_2d_t *a, hpvm_memref_f32_2d_t *b,
                              hpvm_memref_f32_2d_t *c);

enum { UNTILED, TILED, COUNT };

typedef struct {
  int M, N, K;
  float *A, *B, *C[COUNT];
} tiling_state;

static void run(tiling_state *s, int which) {
  hpvm_memref_f32_2d_t a = hpvm_memref_f32_2d(s->A, s->M, s->K),
                       b = hpvm_memref_f32_2d(s->B, s->K, s->N),
                       c = hpvm_memref_f32_2d(s->C[which], s->M, s->N);
  if (which == TILED)
    _mlir_ciface_sgemm_tiled(&a, &b, &c);
  else
    _mlir_ciface_sgemm_flat(&a, &b, &c);
}

int main(int argc, char **argv) {
  int runs = 5, sizes[3] = {1024, 1024, 1024}, count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (count < 3)
      sizes[count++] = atoi(argv[i]);
  }
  tiling_state s = {sizes[0], sizes[1], sizes[2], NULL, NULL, {NULL}};
  s.A = bench_alloc(sizeof(float) * (size_t)s.M * s.K);
  s.B = bench_alloc(sizeof(float) * (size_t)s.K * s.N);
  for (int v = 0; v < COUNT; ++v)
    s.C[v] = bench_alloc(sizeof(float) * (size_t)s.M * s.N);
  sgemm_init(s.A, s.B, s.M, s.N, s.K);
  double *samples[COUNT];
  for (int v = 0; v < COUNT; ++v) {
    samples[v] = bench_alloc(sizeof(double) * (size_t)runs);
    run(&s, v); /* warm-up */
  }
  for (int r = 0; r < runs; ++r)
    for (int v = 0; v < COUNT; ++v) {
      pause_between_runs();
      double start = bench_now_ms();
      run(&s, v);
      samples[v][r] = bench_now_ms() - start;
    }
  /* Exact inputs: tiling must not change a single bit. */
  int mismatches = sgemm_check(s.C[TILED], s.C[UNTILED], s.M, s.N, 0.0f);
  double flops = 2.0 * s.M * s.N * s.K;
  static const char *const names[COUNT] = {"untiled", "tiled"};
  /* The speedup of each pair of runs (untiled run r against tiled run r, next to it). */
  double *speedups = bench_alloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < runs; ++r)
    speedups[r] = samples[UNTILED][r] / samples[TILED][r];
  bench_range_t speedup = bench_range(speedups, runs);
  for (int v = 0; v < COUNT; ++v) {
    bench_range_t ms = bench_range(samples[v], runs);
    printf("sgemm %s M=%d N=%d K=%d runs=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f gflops=%.2f\n",
           names[v], s.M, s.N, s.K, runs, ms.median, ms.min, ms.max, flops / (ms.median * 1e6));
    free(samples[v]);
  }
  printf("sgemm speedup untiled/tiled=%.2f min=%.2f max=%.2f check=%s\n", speedup.median,
         speedup.min, speedup.max, mismatches ? "MISMATCH" : "ok");
  free(speedups);
  return mismatches != 0;
}
