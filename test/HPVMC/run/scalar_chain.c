// 0-D nodes only: a chain of single-instance leaves connected by one-to-one
// edges carrying scalars (long, int, float, double) and a pointer. The first
// leaf has three outputs of different kinds (float, int, pointer); the root
// has four outputs (float, int, pointer, double) that the host reads from the
// trailing field of the launch's argument struct after __hpvm__wait.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float mean;
  int count;
  float *max_at;
} StatsOut;

typedef struct __attribute__((__packed__)) {
  double scaled;
  int above;
} ScaleOut;

typedef struct __attribute__((__packed__)) {
  float mean;
  int above;
  float *max_at;
  double scaled;
} RootOut;

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes_x;
  int n;
  double factor;
  RootOut out;
} RootIn;

// mean, element count and the address of the maximum of x[0..n).
StatsOut stats(float *x, size_t bytes_x, int n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  float sum = 0.0f;
  float *max_at = x;
  for (int i = 0; i < n; ++i) {
    sum += x[i];
    if (x[i] > *max_at)
      max_at = x + i;
  }
  __hpvm__return(3, sum / n, n, max_at);
}

// The mean times factor, and how many elements lie above the mean.
ScaleOut scale(float mean, int count, float *x, size_t bytes_x, double factor) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  int above = 0;
  for (int i = 0; i < count; ++i)
    above += x[i] > mean;
  __hpvm__return(2, mean * factor, above);
}

RootOut chain_root(float *x, size_t bytes_x, int n, double factor) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  void *s = __hpvm__createNodeND(0, stats);
  void *t = __hpvm__createNodeND(0, scale);
  __hpvm__bindIn(s, 0, 0, 0);
  __hpvm__bindIn(s, 1, 1, 0);
  __hpvm__bindIn(s, 2, 2, 0);
  __hpvm__edge(s, t, HPVM_ONE_TO_ONE, 0, 0, 0); // mean
  __hpvm__edge(s, t, HPVM_ONE_TO_ONE, 1, 1, 0); // count
  __hpvm__bindIn(t, 0, 2, 0);
  __hpvm__bindIn(t, 1, 3, 0);
  __hpvm__bindIn(t, 3, 4, 0);
  __hpvm__bindOut(s, 0, 0, 0); // mean
  __hpvm__bindOut(t, 1, 1, 0); // above
  __hpvm__bindOut(s, 2, 2, 0); // max_at
  __hpvm__bindOut(t, 0, 3, 0); // scaled
}

int main(void) {
  int n = 1000;
  float *x = malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i)
    x[i] = (float)((i * 37) % 101);
  __hpvm__init();
  llvm_hpvm_track_mem(x, n * sizeof(float));
  RootIn *args = malloc(sizeof(RootIn));
  args->x = x;
  args->bytes_x = n * sizeof(float);
  args->n = n;
  args->factor = 2.5;
  args->out.mean = -1;
  args->out.above = -1;
  args->out.max_at = NULL;
  args->out.scaled = -1;
  void *dfg = __hpvm__launch(0, chain_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_untrack_mem(x);
  __hpvm__cleanup();

  float sum = 0.0f;
  float *max_at = x;
  for (int i = 0; i < n; ++i) {
    sum += x[i];
    if (x[i] > *max_at)
      max_at = x + i;
  }
  float mean = sum / n;
  int above = 0;
  for (int i = 0; i < n; ++i)
    above += x[i] > mean;
  double scaled = mean * 2.5;
  int wrong = (args->out.mean != mean) + (args->out.above != above) +
              (args->out.max_at != max_at) + (args->out.scaled != scaled);
  printf("scalar_chain: n=%d mean=%.4f above=%d max_index=%ld scaled=%.4f wrong=%d\n", n,
         args->out.mean, args->out.above, (long)(args->out.max_at - x), args->out.scaled, wrong);
  free(x);
  free(args);
  return wrong != 0;
}
