/* half_bench.c - the precision knobs of products (hpvm_rt_tensor_matmul_half, fp16 and bf16
 * storage) against the f32 product (hpvm_rt_tensor_matmul_f32) on fully connected layers: a
 * few rows times a large weight matrix, which streams the weights from memory (the case half
 * storage is for), and a square product that is compute-bound (where it should cost little).
 * The weights are converted once beforehand, as the compiler converts a constant; the rows are
 * converted on every call (hpvm_rt_tensor_narrow_f32, as for an input) and that time is
 * included. Per shape the three variants run in turn, ROUNDS times, each round timing a batch
 * of calls; the median per-call time is reported with the speedup over f32 and the error
 * against the f32 result, ||half - f32|| / ||f32|| in L1 and L2. Inputs uniform in [-1, 1].
 *
 *     half_bench [ROUNDS]   (benchmarks/tensor/run_approx.sh builds and runs it) */
#include "hpvm/hpvm_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct shape_t {
  const char *name;
  int64_t m, k, n;
} shape_t;

static const shape_t shapes[] = {
    {"fc 1 x 4096 * 4096 x 4096 (64 MB of f32 weights)", 1, 4096, 4096},
    {"fc 8 x 4096 * 4096 x 4096", 8, 4096, 4096},
    {"fc 32 x 2048 * 2048 x 1000", 32, 2048, 1000},
    {"square 512 x 512 * 512 x 512 (compute-bound)", 512, 512, 512},
};

enum { F32, FP16, BF16, VARIANTS };
static const char *const variant_names[VARIANTS] = {"f32", "fp16", "bf16"};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t seed = 77;
static float uniform(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)((seed >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct run_t {
  const shape_t *s;
  float *a, *b, *c;
  uint16_t *a16, *b16[VARIANTS];
} run_t;

static void call(const run_t *r, int variant) {
  const shape_t *s = r->s;
  if (variant == F32) {
    hpvm_rt_tensor_matmul_f32(r->a, r->b, NULL, r->c, 1, s->m, s->n, s->k, 0, 0.0);
    return;
  }
  int64_t format = variant == FP16 ? HPVM_RT_TENSOR_FP16 : HPVM_RT_TENSOR_BF16;
  hpvm_rt_tensor_narrow_f32(r->a, r->a16, s->m * s->k, format);
  hpvm_rt_tensor_matmul_half(r->a16, r->b16[variant], NULL, r->c, 1, s->m, s->n, s->k, 0, 0.0,
                             format);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 15;
  if (rounds < 1)
    rounds = 1;
  printf("# half-precision products: median ms per call of %d rounds, variants alternated; "
         "%d threads\n", rounds, hpvm_rt_thread_count());
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); ++i) {
    const shape_t *s = &shapes[i];
    run_t r = {s, NULL, NULL, NULL, NULL, {NULL, NULL, NULL}};
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->k * s->n), nc = (size_t)(s->m * s->n);
    r.a = malloc(sizeof(float) * na), r.b = malloc(sizeof(float) * nb);
    r.c = malloc(sizeof(float) * nc);
    float *reference = malloc(sizeof(float) * nc);
    r.a16 = malloc(sizeof(uint16_t) * na);
    r.b16[FP16] = malloc(sizeof(uint16_t) * nb), r.b16[BF16] = malloc(sizeof(uint16_t) * nb);
    if (!r.a || !r.b || !r.c || !reference || !r.a16 || !r.b16[FP16] || !r.b16[BF16]) {
      fprintf(stderr, "half_bench: out of memory\n");
      return 1;
    }
    for (size_t j = 0; j < na; ++j)
      r.a[j] = uniform();
    for (size_t j = 0; j < nb; ++j)
      r.b[j] = uniform();
    hpvm_rt_tensor_narrow_f32(r.b, r.b16[FP16], (int64_t)nb, HPVM_RT_TENSOR_FP16);
    hpvm_rt_tensor_narrow_f32(r.b, r.b16[BF16], (int64_t)nb, HPVM_RT_TENSOR_BF16);

    double errors[VARIANTS][2] = {{0}};
    call(&r, F32);
    for (size_t j = 0; j < nc; ++j)
      reference[j] = r.c[j];
    for (int v = FP16; v < VARIANTS; ++v) {
      call(&r, v);
      double l1 = 0, l1_ref = 0, l2 = 0, l2_ref = 0;
      for (size_t j = 0; j < nc; ++j) {
        double d = (double)r.c[j] - reference[j];
        l1 += fabs(d), l1_ref += fabs(reference[j]);
        l2 += d * d, l2_ref += (double)reference[j] * reference[j];
      }
      errors[v][0] = l1 / l1_ref, errors[v][1] = sqrt(l2 / l2_ref);
    }

    /* Calls per round: about 50 ms of the f32 product. */
    double start = now();
    call(&r, F32);
    int iters = (int)(0.05 / (now() - start + 1e-9)) + 1;
    double *times[VARIANTS];
    for (int v = 0; v < VARIANTS; ++v)
      times[v] = malloc(sizeof(double) * (size_t)rounds);
    for (int round = 0; round < rounds; ++round)
      for (int v = 0; v < VARIANTS; ++v) {
        start = now();
        for (int it = 0; it < iters; ++it)
          call(&r, v);
        times[v][round] = (now() - start) / iters;
      }
    printf("%s\n", s->name);
    double f32_median = 0;
    for (int v = 0; v < VARIANTS; ++v) {
      qsort(times[v], (size_t)rounds, sizeof(double), compare_doubles);
      double median = times[v][rounds / 2];
      if (v == F32)
        f32_median = median;
      double bytes = (double)(nb * (v == F32 ? 4 : 2));
      printf("  %-5s %9.3f ms  %5.2fx  weights %6.1f GB/s  error L1 %.2e L2 %.2e\n",
             variant_names[v], 1e3 * median, f32_median / median, bytes / median * 1e-9,
             errors[v][0], errors[v][1]);
      free(times[v]);
    }
    free(r.a), free(r.b), free(r.c), free(reference), free(r.a16);
    free(r.b16[FP16]), free(r.b16[BF16]);
  }
  hpvm_rt_shutdown();
  return 0;
}
