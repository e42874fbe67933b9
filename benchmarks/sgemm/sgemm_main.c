/* sgemm_main.c - times sgemm_seq / sgemm_omp and checks the OpenMP result against the sequential one. */
#include "../common/bench_common.h"
#include "sgemm_ref.h"

#include "../common/omp_compat.h"

typedef void (*sgemm_fn)(const float *, const float *, float *, int, int, int);

static double time_runs(sgemm_fn fn, const float *A, const float *B, float *C, int M, int N, int K,
                        int runs) {
  double *t = bench_alloc(sizeof(double) * (size_t)runs);
  fn(A, B, C, M, N, K); /* warm-up: page faults and thread-pool start-up are not the kernel */
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_ms();
    fn(A, B, C, M, N, K);
    t[r] = bench_now_ms() - t0;
  }
  double med = bench_median(t, runs);
  free(t);
  return med;
}

/*
 * Independent check of the reference itself: with sgemm_init's inputs every result is exact, so a
 * double-precision dot product must agree bit for bit. Samples a strided set plus the corners.
 */
static int spot_check(const float *A, const float *B, const float *C, int M, int N, int K) {
  int bad = 0;
  for (int s = 0; s < 67; s++) {
    int i = s == 0 ? 0 : (s == 1 ? M - 1 : (int)((s * 7919L) % M));
    int j = s == 0 ? 0 : (s == 1 ? N - 1 : (int)((s * 104729L) % N));
    double acc = 0.0;
    for (int k = 0; k < K; k++) acc += (double)A[(long)i * K + k] * (double)B[(long)k * N + j];
    bad += (double)C[(long)i * N + j] != acc;
  }
  return bad;
}

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv, "M N K");
  int M = o.npos > 0 ? (int)o.pos[0] : 1024;
  int N = o.npos > 1 ? (int)o.pos[1] : M;
  int K = o.npos > 2 ? (int)o.pos[2] : M;
  float *A = bench_alloc(sizeof(float) * (size_t)M * K);
  float *B = bench_alloc(sizeof(float) * (size_t)K * N);
  float *ref = bench_alloc(sizeof(float) * (size_t)M * N);
  float *C = bench_alloc(sizeof(float) * (size_t)M * N);
  sgemm_init(A, B, M, N, K);
  double flop = 2.0 * M * N * K;

  if (o.do_seq) {
    double ms = time_runs(sgemm_seq, A, B, ref, M, N, K, o.runs);
    int sbad = spot_check(A, B, ref, M, N, K);
    printf("sgemm seq M=%d N=%d K=%d runs=%d median_ms=%.1f gflops=%.2f check=%s\n", M, N, K,
           o.runs, ms, flop / ms * 1e-6, sbad ? "FAIL" : "ok");
    if (sbad) return 1;
  } else {
    sgemm_seq(A, B, ref, M, N, K);
  }
  fflush(stdout);
  if (o.dump) bench_dump(o.dump, ref, (size_t)M * N);

  int bad = 0;
  if (o.do_omp) {
    double ms = time_runs(sgemm_omp, A, B, C, M, N, K, o.runs);
    bad = sgemm_check(C, ref, M, N, 0.0f); /* same per-element order, so exact equality is expected */
    printf("sgemm omp M=%d N=%d K=%d threads=%d runs=%d median_ms=%.1f gflops=%.2f check=%s",
           M, N, K, bench_omp_threads(), o.runs, ms, flop / ms * 1e-6, bad ? "FAIL" : "ok");
    if (bad) printf(" mismatches=%d", bad);
    printf("\n");
  }
  free(A), free(B), free(C), free(ref);
  return bad ? 1 : 0;
}
