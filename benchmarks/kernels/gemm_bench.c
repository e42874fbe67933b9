// gemm_bench.c - the runtime's two products at the machine's limit, against OpenBLAS (the same
// inputs; run.sh alternates the versions' processes):
//   contract  hpvm_rt_contract_f32 with a fused step: what a compiled naive HPVM-C sgemm calls
//             (C = A B, row-major, the leaf's sequential fold, bit for bit)
//   matmul    hpvm_rt_tensor_matmul_f32 (the tensor nodes' product; no bias, no activation)
//   blas      cblas_sgemm (threads: OPENBLAS_NUM_THREADS)
// and the machine's peaks: multiply-adds per second with the widest vectors the CPU has, on
// every thread (`peak`), and the memory bandwidth of a triad (`bandwidth`).
//
//   ./gemm_bench product VERSION M N K RUNS   one line: min/median/max ms over RUNS calls,
//                                            GFLOP/s of the median and of the best, and whether
//                                            the result matched the sequential fold (contract:
//                                            bit for bit)
//   ./gemm_bench peak                         GFLOP/s of independent FMA chains (f32)
//   ./gemm_bench bandwidth                    GB/s of a[i] = b[i] + s * c[i] over 3 x 128 MiB
// The ISA of the runtime's kernels is HPVM_TENSOR_ISA's (avx512, avx2, generic; default: the
// CPU's best).
#include "bench_common.h"

#include "hpvm/hpvm_rt.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static float step_fused(float a, float b, float acc) { return fmaf(a, b, acc); }

typedef struct {
  int m, n, k;
  const float *a, *b;
  float *c;
} problem_t;

static void run_contract(const problem_t *p) {
  // s[y][x] = sum over kk of A[y][kk] * B[kk][x]: p = A (rows y, depth along a row), q = B.
  if (hpvm_rt_contract_f32(p->a, p->k, 1, p->b, 1, p->n, p->m, p->n, p->k, 0.0f, step_fused,
                           p->c, p->n)) {
    fprintf(stderr, "gemm_bench: hpvm_rt_contract_f32 refused the product\n");
    exit(1);
  }
}

static void run_matmul(const problem_t *p) {
  hpvm_rt_tensor_matmul_f32(p->a, p->b, NULL, p->c, 1, p->m, p->n, p->k, 0, 0.0);
}

static void run_blas(const problem_t *p) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p->m, p->n, p->k, 1.0f, p->a, p->k,
              p->b, p->n, 0.0f, p->c, p->n);
}

typedef struct {
  const char *name;
  void (*run)(const problem_t *);
  double *times;
} version_t;

// The sequential fold of element (y, x): what contract must give bit for bit.
static float fold(const problem_t *p, int y, int x) {
  float acc = 0.0f;
  for (int kk = 0; kk < p->k; ++kk)
    acc = fmaf(p->a[(long)y * p->k + kk], p->b[(long)kk * p->n + x], acc);
  return acc;
}

// One version, RUNS timed calls after one warm-up (threads started, pages touched). Each
// version runs in a process of its own: a library's threads that spin after a call (OpenBLAS's
// do) would otherwise slow whatever runs next in the same process.
static int products(const char *which, int m, int n, int k, int runs) {
  version_t versions[] = {{"contract", run_contract, NULL},
                          {"matmul", run_matmul, NULL},
                          {"openblas", run_blas, NULL}};
  int v = -1;
  for (int i = 0; i < 3; ++i)
    if (!strcmp(which, versions[i].name))
      v = i;
  if (v < 0) {
    fprintf(stderr, "gemm_bench: no version %s (contract, matmul, openblas)\n", which);
    return 2;
  }
  problem_t p = {m, n, k, NULL, NULL, NULL};
  float *a = bench_alloc(sizeof(float) * (size_t)m * k);
  float *b = bench_alloc(sizeof(float) * (size_t)k * n);
  p.c = bench_alloc(sizeof(float) * (size_t)m * n);
  for (long i = 0; i < (long)m * k; ++i)
    a[i] = (float)((i * 7) % 23) / 8.0f - 1.0f;
  for (long i = 0; i < (long)k * n; ++i)
    b[i] = (float)((i * 11) % 19) / 4.0f - 2.0f;
  p.a = a, p.b = b;
  double *times = bench_alloc(sizeof(double) * (size_t)runs);
  versions[v].run(&p);
  for (int r = 0; r < runs; ++r) {
    double start = bench_now_ms();
    versions[v].run(&p);
    times[r] = bench_now_ms() - start;
  }
  // The result against the sequential fold on a sample: bit for bit for contract, within
  // rounding for the others (their sums are in another order).
  long wrong = 0;
  for (long s = 0; s < 2048; ++s) {
    long e = (s * 2654435761L) % ((long)m * n);
    float want = fold(&p, (int)(e / n), (int)(e % n));
    if (v == 0 ? memcmp(&want, &p.c[e], sizeof(float)) != 0
               : fabsf(want - p.c[e]) > 1e-3f * (1.0f + fabsf(want)))
      ++wrong;
  }
  double flops = 2.0 * m * n * k;
  const char *isa = getenv("HPVM_TENSOR_ISA");
  bench_range_t range = bench_range(times, runs);
  printf("%s %dx%dx%d: min %.2f median %.2f max %.2f ms (%d calls), %.1f GFLOP/s (best %.1f), "
         "%s%s\n",
         versions[v].name, m, n, k, range.min, range.median, range.max, runs,
         flops / range.median * 1e-6, flops / range.min * 1e-6,
         v == 2 ? "openblas" : isa && *isa ? isa : "best isa",
         wrong ? ", WRONG" : v == 0 ? ", exact" : ", correct");
  free(a), free(b), free(p.c), free(times);
  return wrong ? 1 : 0;
}

// ---- peaks -------------------------------------------------------------------------------

enum { SCALAR_CHAINS = 8 };

typedef struct {
  long iterations;
  double flops;
  float sink;
} peak_arg_t;

// CHAINS independent multiply-add chains per thread (16 in the 32 zmm registers, 12 in the 16
// ymm ones: no spill): FMA latency x ports <= CHAINS on every x86 CPU of the last decade, so
// the chains measure throughput. One function per ISA (target attributes), so that one binary
// measures each vector width the CPU has.
#define PEAK_BODY(vec, set1, fmadd, add, storeu, lanes, CHAINS)                                  \
  vec acc[CHAINS], x = set1(0.999999f), y = set1(1e-7f);                                         \
  for (int i = 0; i < CHAINS; ++i)                                                               \
    acc[i] = set1((float)i);                                                                     \
  for (long it = 0; it < t->iterations; ++it) {                                                  \
    _Pragma("GCC unroll 16") for (int i = 0; i < CHAINS; ++i) acc[i] = fmadd(acc[i], x, y);      \
  }                                                                                              \
  float out[lanes];                                                                              \
  vec sum = acc[0];                                                                              \
  for (int i = 1; i < CHAINS; ++i)                                                               \
    sum = add(sum, acc[i]);                                                                      \
  storeu(out, sum);                                                                              \
  t->flops = 2.0 * lanes * CHAINS * t->iterations;                                               \
  t->sink = out[0];                                                                              \
  return NULL;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static void *peak_avx512(void *arg) {
  peak_arg_t *t = arg;
  PEAK_BODY(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16, 16)
}
__attribute__((target("avx2,fma"))) static void *peak_avx2(void *arg) {
  peak_arg_t *t = arg;
  PEAK_BODY(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8, 12)
}
#endif

static void *peak_scalar(void *arg) {
  peak_arg_t *t = arg;
  float acc[SCALAR_CHAINS];
  for (int i = 0; i < SCALAR_CHAINS; ++i)
    acc[i] = (float)i;
  for (long it = 0; it < t->iterations; ++it)
    for (int i = 0; i < SCALAR_CHAINS; ++i)
      acc[i] = fmaf(acc[i], 0.999999f, 1e-7f);
  t->flops = 2.0 * SCALAR_CHAINS * t->iterations;
  t->sink = acc[0];
  return NULL;
}

static int threads_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

// Runs body(&args[i]) (args: `threads` elements of `size` bytes) on `threads` threads at once;
// the milliseconds from the first start to the last join.
static double on_threads(void *(*body)(void *), void *args, size_t size, int threads) {
  pthread_t ids[256];
  double start = bench_now_ms();
  for (int i = 0; i < threads; ++i)
    pthread_create(&ids[i], NULL, body, (char *)args + i * size);
  for (int i = 0; i < threads; ++i)
    pthread_join(ids[i], NULL);
  return bench_now_ms() - start;
}

static double peak_of(void *(*body)(void *), long iterations) {
  int threads = threads_online();
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    peak_arg_t args[256];
    for (int i = 0; i < threads; ++i)
      args[i] = (peak_arg_t){iterations, 0, 0};
    double ms = on_threads(body, args, sizeof(args[0]), threads), flops = 0;
    for (int i = 0; i < threads; ++i)
      flops += args[i].flops;
    if (flops / ms * 1e-6 > best)
      best = flops / ms * 1e-6;
  }
  return best;
}

static int peak(void) {
  int threads = threads_online(), vector = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  vector = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (__builtin_cpu_supports("avx512f"))
    printf("peak f32 multiply-add avx512: %.1f GFLOP/s on %d threads (best of 5)\n",
           peak_of(peak_avx512, 20000000), threads);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    printf("peak f32 multiply-add avx2: %.1f GFLOP/s on %d threads (best of 5)\n",
           peak_of(peak_avx2, 20000000), threads);
#endif
  if (!vector)
    printf("peak f32 multiply-add scalar: %.1f GFLOP/s on %d threads (best of 5)\n",
         peak_of(peak_scalar, 2000000), threads);
  return 0;
}

typedef struct {
  float *a;
  const float *b, *c;
  long begin, end;
} triad_arg_t;

static void *triad_thread(void *arg) {
  triad_arg_t *t = arg;
  for (long i = t->begin; i < t->end; ++i)
    t->a[i] = t->b[i] + 3.0f * t->c[i];
  return NULL;
}

static int bandwidth(void) {
  long n = 32L << 20; // 128 MiB per array
  float *a = bench_alloc(sizeof(float) * n), *b = bench_alloc(sizeof(float) * n),
        *c = bench_alloc(sizeof(float) * n);
  for (long i = 0; i < n; ++i)
    a[i] = 0, b[i] = (float)(i % 7), c[i] = (float)(i % 5);
  int threads = threads_online();
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    triad_arg_t args[256];
    for (int i = 0; i < threads; ++i)
      args[i] = (triad_arg_t){a, b, c, n * i / threads, n * (i + 1) / threads};
    double ms = on_threads(triad_thread, args, sizeof(args[0]), threads);
    double gbs = 3.0 * sizeof(float) * n / ms * 1e-6;
    if (gbs > best)
      best = gbs;
  }
  printf("memory bandwidth (triad, 3 x 128 MiB): %.1f GB/s on %d threads (best of 5; a[%ld] = "
         "%g)\n",
         best, threads, n / 2, a[n / 2]);
  free(a), free(b), free(c);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 7 && !strcmp(argv[1], "product")) {
    int m = atoi(argv[3]), n = atoi(argv[4]), k = atoi(argv[5]), runs = atoi(argv[6]);
    if (m > 0 && n > 0 && k > 0 && runs > 0)
      return products(argv[2], m, n, k, runs);
  } else if (argc == 2 && !strcmp(argv[1], "peak")) {
    return peak();
  } else if (argc == 2 && !strcmp(argv[1], "bandwidth")) {
    return bandwidth();
  }
  fprintf(stderr, "usage: gemm_bench product contract|matmul|openblas M N K RUNS | peak | "
                  "bandwidth\n");
  return 2;
}
