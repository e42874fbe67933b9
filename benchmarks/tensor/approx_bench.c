/* approx_bench.c - the approximate convolutions (hpvm_rt_tensor_conv2d_approx_f32) against the
 * exact one on two layers: LeNet's conv2 (64 x 6 x 14 x 14 * 16 x 6 x 5 x 5) and a 3 x 3 layer
 * (8 x 32 x 28 x 28 * 64 x 32 x 3 x 3, pad 1), each with a bias and relu.
 *
 * For each layer every variant (exact; the approximate path skipping nothing; perforated rows
 * and columns at rates 2 and 3; filter sampling at rates 2 and 4) runs in turn, ROUNDS times, each
 * round timing a batch of calls; the best per-call time of a variant is reported with its speedup
 * over exact, the fraction of the exact multiply-adds it does, and its error against the exact
 * output:
 * ||approx - exact|| / ||exact|| in L1 and L2. Inputs and weights are uniform in [-1, 1]
 * (no spatial correlation: perforation's error is larger than on images).
 *
 *     approx_bench [ROUNDS [--all]]   (benchmarks/tensor/run_approx.sh builds and runs it)
 *
 * --all adds layers off the fast paths' sweet spot: few filters, stride 2, depthwise. */
#include "hpvm/hpvm_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct layer_t {
  const char *name;
  int64_t n, c, h, w, f, kh, kw, pad, stride, groups;
} layer_t;

typedef struct variant_t {
  const char *name;
  int64_t knob, rate, offset;
} variant_t;

static const layer_t layers[] = {
    {"LeNet conv2 64x6x14x14 * 16x6x5x5", 64, 6, 14, 14, 16, 5, 5, 0, 1, 1},
    {"3x3 conv 8x32x28x28 * 64x32x3x3 pad 1", 8, 32, 28, 28, 64, 3, 3, 1, 1, 1},
};

/* With --all: shapes off the fast paths' sweet spot (few filters, strides, depthwise). */
static const layer_t extra_layers[] = {
    {"LeNet conv1 64x1x28x28 * 6x1x5x5 pad 2", 64, 1, 28, 28, 6, 5, 5, 2, 1, 1},
    {"3x3 conv, 8 filters 8x16x28x28 * 8x16x3x3 pad 1", 8, 16, 28, 28, 8, 3, 3, 1, 1, 1},
    {"3x3 conv stride 2 8x32x28x28 * 64x32x3x3 pad 1", 8, 32, 28, 28, 64, 3, 3, 1, 2, 1},
    {"depthwise 3x3 8x32x56x56 pad 1", 8, 32, 56, 56, 32, 3, 3, 1, 1, 32},
};

/* Perforation skips odd rows / columns at rate 2 (offset 1: the first one is computed), and
 * every third from the second at rate 3; sampling drops elements k % rate == 0. */
static const variant_t variants[] = {
    {"exact", HPVM_RT_TENSOR_KNOB_EXACT, 0, 0},
    /* The approximate path with nothing to skip (no row y % 1000 == 999): its own cost of the
     * whole convolution, which tells the kernels' speed apart from the work skipped. */
    {"approx path, nothing skipped", HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS, 1000, 999},
    {"rows rate 2", HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS, 2, 1},
    {"rows rate 3", HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS, 3, 1},
    {"cols rate 2", HPVM_RT_TENSOR_KNOB_PERFORATE_COLS, 2, 1},
    {"cols rate 3", HPVM_RT_TENSOR_KNOB_PERFORATE_COLS, 3, 1},
    {"sample rate 2", HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER, 2, 0},
    {"sample rate 4", HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER, 4, 0},
};
enum { VARIANTS = sizeof(variants) / sizeof(variants[0]) };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t seed = 7;
static float *random_array(int64_t count) {
  float *data = malloc(sizeof(float) * (size_t)count);
  if (!data) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return data;
}

typedef struct run_t {
  const layer_t *l;
  const float *input, *filter, *bias;
  int64_t oh, ow;
} run_t;

static void call(const run_t *r, const variant_t *v, float *output) {
  const layer_t *l = r->l;
  hpvm_rt_tensor_conv2d_approx_f32(r->input, r->filter, r->bias, output, l->n, l->c, l->h, l->w,
                                   l->f, l->kh, l->kw, r->oh, r->ow, l->pad, l->pad, l->stride,
                                   l->stride, l->groups, HPVM_RT_TENSOR_RELU, 0.0, v->knob, v->rate,
                                   v->offset);
}

/* The fraction of the exact multiply-adds a variant does (outputs or taps it keeps). */
static double work_fraction(const run_t *r, const variant_t *v) {
  int64_t extent = v->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS   ? r->oh
                   : v->knob == HPVM_RT_TENSOR_KNOB_PERFORATE_COLS ? r->ow
                   : v->knob == HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER
                       ? r->l->c / r->l->groups * r->l->kh * r->l->kw
                       : 0;
  if (extent == 0)
    return 1.0;
  int64_t kept = 0;
  for (int64_t i = 0; i < extent; ++i)
    kept += i % v->rate != v->offset;
  return (double)kept / (double)extent;
}

static void bench_layer(const layer_t *l, int rounds) {
  run_t r = {l,
             NULL,
             NULL,
             NULL,
             (l->h + 2 * l->pad - l->kh) / l->stride + 1,
             (l->w + 2 * l->pad - l->kw) / l->stride + 1};
  float *input = random_array(l->n * l->c * l->h * l->w);
  float *filter = random_array(l->f * (l->c / l->groups) * l->kh * l->kw);
  float *bias = random_array(l->f);
  r.input = input, r.filter = filter, r.bias = bias;
  int64_t count = l->n * l->f * r.oh * r.ow;
  float *outputs[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v) {
    outputs[v] = random_array(count);
    call(&r, &variants[v], outputs[v]); /* warm-up, and the output compared below */
  }
  /* A batch of calls lasts about 20 ms (from the exact call's time). */
  double start = now();
  call(&r, &variants[0], outputs[0]);
  int iters = (int)(0.02 / (now() - start + 1e-9)) + 1;
  double best[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v)
    best[v] = 1e30;
  for (int round = 0; round < rounds; ++round)
    for (int v = 0; v < VARIANTS; ++v) {
      start = now();
      for (int i = 0; i < iters; ++i)
        call(&r, &variants[v], outputs[v]);
      double t = (now() - start) / iters;
      if (t < best[v])
        best[v] = t;
    }
  printf("\n%s (%d rounds of %d calls, %u threads)\n", l->name, rounds, iters,
         hpvm_rt_thread_count());
  printf("| variant | time (us) | speedup | MACs done | rel. L1 error | rel. L2 error |\n");
  printf("|---|---:|---:|---:|---:|---:|\n");
  for (int v = 0; v < VARIANTS; ++v) {
    double l1 = 0, l1_exact = 0, l2 = 0, l2_exact = 0;
    for (int64_t i = 0; i < count; ++i) {
      double e = outputs[0][i], d = (double)outputs[v][i] - e;
      l1 += fabs(d), l1_exact += fabs(e), l2 += d * d, l2_exact += e * e;
    }
    printf("| %s | %.1f | %.2fx | %.0f%% | %.4f | %.4f |\n", variants[v].name, best[v] * 1e6,
           best[0] / best[v], 100.0 * work_fraction(&r, &variants[v]), l1 / l1_exact,
           sqrt(l2 / l2_exact));
  }
  for (int v = 0; v < VARIANTS; ++v)
    free(outputs[v]);
  free(input), free(filter), free(bias);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 30;
  if (rounds < 1)
    rounds = 1;
  for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); ++i)
    bench_layer(&layers[i], rounds);
  for (size_t i = 0; argc > 2 && strcmp(argv[2], "--all") == 0 &&
                     i < sizeof(extra_layers) / sizeof(extra_layers[0]);
       ++i)
    bench_layer(&extra_layers[i], rounds);
  hpvm_rt_shutdown();
  return 0;
}
