/* sgemm_bench.c - examples/sgemm.mlir (2-level HPVM graph) against the OpenMP and sequential C
 * sgemm of benchmarks/sgemm, same algorithm, in one process. Usage: sgemm_bench [M N K] [--runs R]
 * [--no-seq]. */
#include "hpvm_examples.h"

#include "bench_versions.h"
#include "sgemm_ref.h"


typedef struct {
  int M, N, K;
  float *A, *B, *C[VERSION_COUNT];
} sgemm_state;

static void run_hpvm(void *p) {
  sgemm_state *s = p;
  hpvm_memref_f32_2d_t a = hpvm_memref_f32_2d(s->A, s->M, s->K),
                       b = hpvm_memref_f32_2d(s->B, s->K, s->N),
                       c = hpvm_memref_f32_2d(s->C[VERSION_HPVM], s->M, s->N);
  _mlir_ciface_sgemm(&a, &b, &c);
}
static void run_omp(void *p) {
  sgemm_state *s = p;
  sgemm_omp(s->A, s->B, s->C[VERSION_OMP], s->M, s->N, s->K);
}
static void run_seq(void *p) {
  sgemm_state *s = p;
  sgemm_seq(s->A, s->B, s->C[VERSION_SEQ], s->M, s->N, s->K);
}

int main(int argc, char **argv) {
  int runs = 5, with_seq = 1, sizes[3] = {1024, 1024, 1024}, count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-seq"))
      with_seq = 0;
    else if (count < 3)
      sizes[count++] = atoi(argv[i]);
  }
  sgemm_state s = {sizes[0], sizes[1], sizes[2], NULL, NULL, {NULL}};
  s.A = bench_alloc(sizeof(float) * (size_t)s.M * s.K);
  s.B = bench_alloc(sizeof(float) * (size_t)s.K * s.N);
  for (int v = 0; v < VERSION_COUNT; ++v)
    s.C[v] = bench_alloc(sizeof(float) * (size_t)s.M * s.N);
  sgemm_init(s.A, s.B, s.M, s.N, s.K);
  version_fn fns[VERSION_COUNT] = {run_hpvm, run_omp, with_seq ? run_seq : NULL};
  bench_range_t ms[VERSION_COUNT], ratio;
  time_versions(fns, &s, runs, ms, &ratio);
  /* Exact inputs: every version must agree bit for bit. */
  int mismatches = sgemm_check(s.C[VERSION_HPVM], s.C[VERSION_OMP], s.M, s.N, 0.0f);
  double flops = 2.0 * s.M * s.N * s.K;
  for (int v = 0; v < VERSION_COUNT; ++v)
    if (fns[v])
      printf("sgemm %s M=%d N=%d K=%d runs=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f "
             "gflops=%.2f\n",
             version_names[v], s.M, s.N, s.K, runs, ms[v].median, ms[v].min, ms[v].max,
             flops / (ms[v].median * 1e6));
  printf("sgemm ratio hpvm/omp=%.3f min=%.3f max=%.3f%s check=%s\n", ratio.median, ratio.min,
         ratio.max, with_seq ? "" : " (seq skipped)", mismatches ? "MISMATCH" : "ok");
  return mismatches != 0;
}
