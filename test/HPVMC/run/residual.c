/* A residual block's shape: outputs that feed several nodes (fan-out), as the
 * release's resnet programs wire them with two __hpvm__edge calls from one
 * output port.
 *
 *   stats (0-D) --mean--> act, skip          (a scalar feeds two nodes)
 *   act   (1-D) --h, bytes_h--> conv, skip   (a buffer feeds two nodes)
 *   conv  (1-D) --g, bytes_g--> skip
 *   skip  (1-D): y = g + h - mean
 *   root outputs: act's bytes (also feeding two edges) and skip's bytes.
 *
 * act -> conv is all_to_all (conv reads neighbours of h), conv -> skip is
 * one_to_one (hpvm-fuse-nodes may fuse them; act and skip are joined through
 * conv and are not fused). Checked against the same block in C. */
#include <hpvm/hpvm.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float mean;
} StatsOut;

typedef struct __attribute__((__packed__)) {
  float *h;
  size_t bytes_h;
} ActOut;

typedef struct __attribute__((__packed__)) {
  float *g;
  size_t bytes_g;
} ConvOut;

typedef struct __attribute__((__packed__)) {
  size_t bytes_y;
} SkipOut;

typedef struct __attribute__((__packed__)) {
  size_t bytes_h;
  size_t bytes_y;
} RootOut;

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes_x;
  float *h;
  size_t bytes_h;
  float *g;
  size_t bytes_g;
  float *y;
  size_t bytes_y;
  long n;
  RootOut out;
} RootIn;

StatsOut stats(float *x, size_t bytes_x, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  float s = 0;
  for (long i = 0; i < n; ++i)
    s += x[i];
  __hpvm__return(1, s / (float)n);
}

ActOut act(float *x, size_t bytes_x, float *h, size_t bytes_h, float mean) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, h);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  float v = x[i] - mean;
  h[i] = v > 0 ? v : 0.125f * v;
  __hpvm__return(2, h, bytes_h);
}

ConvOut conv(float *h, size_t bytes_h, float *g, size_t bytes_g, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, h, 1, g);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  /* Edges replicated, without branches: one block, which fusion needs. */
  long left = i - (i > 0), right = i + (i + 1 < n);
  g[i] = 0.25f * h[left] + 0.5f * h[i] + 0.25f * h[right];
  __hpvm__return(2, g, bytes_g);
}

SkipOut skip(float *g, size_t bytes_g, float *h, size_t bytes_h, float mean, float *y,
             size_t bytes_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, g, h, 1, y);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  y[i] = g[i] + h[i] - mean;
  __hpvm__return(1, bytes_y);
}

RootOut root(float *x, size_t bytes_x, float *h, size_t bytes_h, float *g, size_t bytes_g,
             float *y, size_t bytes_y, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(4, x, h, g, y, 3, h, g, y);
  void *s = __hpvm__createNodeND(0, stats);
  void *a = __hpvm__createNodeND(1, act, n);
  void *c = __hpvm__createNodeND(1, conv, n);
  void *k = __hpvm__createNodeND(1, skip, n);
  __hpvm__bindIn(s, 0, 0, 0);
  __hpvm__bindIn(s, 1, 1, 0);
  __hpvm__bindIn(s, 8, 2, 0);
  __hpvm__bindIn(a, 0, 0, 0);
  __hpvm__bindIn(a, 1, 1, 0);
  __hpvm__bindIn(a, 2, 2, 0);
  __hpvm__bindIn(a, 3, 3, 0);
  __hpvm__edge(s, a, HPVM_ALL_TO_ALL, 0, 4, 0);
  /* h and its size feed conv and skip. */
  __hpvm__edge(a, c, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(a, c, HPVM_ALL_TO_ALL, 1, 1, 0);
  __hpvm__edge(a, k, HPVM_ONE_TO_ONE, 0, 2, 0);
  __hpvm__edge(a, k, HPVM_ONE_TO_ONE, 1, 3, 0);
  __hpvm__bindIn(c, 4, 2, 0);
  __hpvm__bindIn(c, 5, 3, 0);
  __hpvm__bindIn(c, 8, 4, 0);
  __hpvm__edge(c, k, HPVM_ONE_TO_ONE, 0, 0, 0);
  __hpvm__edge(c, k, HPVM_ONE_TO_ONE, 1, 1, 0);
  /* The mean feeds act and skip. */
  __hpvm__edge(s, k, HPVM_ALL_TO_ALL, 0, 4, 0);
  __hpvm__bindIn(k, 6, 5, 0);
  __hpvm__bindIn(k, 7, 6, 0);
  /* act's size is also an output of the root. */
  __hpvm__bindOut(a, 1, 0, 0);
  __hpvm__bindOut(k, 0, 1, 0);
}

static int check(long n) {
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *h = malloc(bytes), *g = malloc(bytes), *y = malloc(bytes);
  float *rh = malloc(bytes), *rg = malloc(bytes), *ry = malloc(bytes);
  for (long i = 0; i < n; ++i)
    x[i] = (float)((i * 37) % 23) - 9.5f;
  RootIn *args = malloc(sizeof(RootIn));
  args->x = x;
  args->bytes_x = bytes;
  args->h = h;
  args->bytes_h = bytes;
  args->g = g;
  args->bytes_g = bytes;
  args->y = y;
  args->bytes_y = bytes;
  args->n = n;
  llvm_hpvm_track_mem(x, bytes);
  llvm_hpvm_track_mem(h, bytes);
  llvm_hpvm_track_mem(g, bytes);
  llvm_hpvm_track_mem(y, bytes);
  void *dfg = __hpvm__launch(0, root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(y, bytes);
  llvm_hpvm_request_mem(h, bytes);
  llvm_hpvm_untrack_mem(x);
  llvm_hpvm_untrack_mem(h);
  llvm_hpvm_untrack_mem(g);
  llvm_hpvm_untrack_mem(y);

  float s = 0;
  for (long i = 0; i < n; ++i)
    s += x[i];
  float mean = s / (float)n;
  for (long i = 0; i < n; ++i) {
    float v = x[i] - mean;
    rh[i] = v > 0 ? v : 0.125f * v;
  }
  for (long i = 0; i < n; ++i) {
    long left = i - (i > 0), right = i + (i + 1 < n);
    rg[i] = 0.25f * rh[left] + 0.5f * rh[i] + 0.25f * rh[right];
  }
  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    ry[i] = rg[i] + rh[i] - mean;
    wrong += y[i] != ry[i] || h[i] != rh[i];
    sum += y[i];
  }
  wrong += args->out.bytes_h != bytes || args->out.bytes_y != bytes;
  printf("residual: n=%ld mean=%.4f sum=%.4f wrong=%ld\n", n, mean, sum, wrong);
  free(x), free(h), free(g), free(y), free(rh), free(rg), free(ry), free(args);
  return wrong != 0;
}

int main(void) {
  int failed = 0;
  failed |= check(1000);
  failed |= check(33);
  failed |= check(1);
  return failed;
}
