// Edges between siblings. A 0-D leaf `prepare` finds the range of x and
// sends the scale (float), the minimum (int) and the output buffer (a
// pointer, with its size) over all-to-all edges to every instance of the 1-D
// leaf `normalize`. Each instance of `normalize` gives a float and an int to
// the same instance of the 1-D leaf `store` over one-to-one edges, together
// with the output pointer it received, and `store` writes the result.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float scale;
  int lo;
  float *out;
  size_t bytes_out;
} PrepareOut;

typedef struct __attribute__((__packed__)) {
  float value;
  int bucket;
  float *out;
} NormalizeOut;

typedef struct __attribute__((__packed__)) {
  int *x;
  size_t bytes_x;
  float *out;
  size_t bytes_out;
  int *buckets;
  size_t bytes_buckets;
  long n;
} RootIn;

PrepareOut prepare(int *x, size_t bytes_x, float *out, size_t bytes_out, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  int lo = x[0], hi = x[0];
  for (long i = 1; i < n; ++i) {
    if (x[i] < lo)
      lo = x[i];
    if (x[i] > hi)
      hi = x[i];
  }
  __hpvm__return(4, 1.0f / (float)(hi - lo), lo, out, bytes_out);
}

NormalizeOut normalize(int *x, size_t bytes_x, float scale, int lo, float *out) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  float value = (float)(x[i] - lo) * scale;
  __hpvm__return(3, value, (int)(value * 4.0f), out);
}

void store(float value, int bucket, float *out, size_t bytes_out, int *buckets,
           size_t bytes_buckets) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 2, out, buckets);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  out[i] = value;
  buckets[i] = bucket;
}

void edges_root(int *x, size_t bytes_x, float *out, size_t bytes_out, int *buckets,
                size_t bytes_buckets, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 2, out, buckets);
  void *p = __hpvm__createNodeND(0, prepare);
  void *m = __hpvm__createNodeND(1, normalize, n);
  void *s = __hpvm__createNodeND(1, store, n);
  __hpvm__bindIn(p, 0, 0, 0);
  __hpvm__bindIn(p, 1, 1, 0);
  __hpvm__bindIn(p, 2, 2, 0);
  __hpvm__bindIn(p, 3, 3, 0);
  __hpvm__bindIn(p, 6, 4, 0);
  __hpvm__bindIn(m, 0, 0, 0);
  __hpvm__bindIn(m, 1, 1, 0);
  __hpvm__edge(p, m, HPVM_ALL_TO_ALL, 0, 2, 0);
  __hpvm__edge(p, m, HPVM_ALL_TO_ALL, 1, 3, 0);
  __hpvm__edge(p, m, HPVM_ALL_TO_ALL, 2, 4, 0);
  __hpvm__edge(m, s, HPVM_ONE_TO_ONE, 0, 0, 0);
  __hpvm__edge(m, s, HPVM_ONE_TO_ONE, 1, 1, 0);
  __hpvm__edge(m, s, HPVM_ONE_TO_ONE, 2, 2, 0);
  __hpvm__edge(p, s, HPVM_ALL_TO_ALL, 3, 3, 0);
  __hpvm__bindIn(s, 4, 4, 0);
  __hpvm__bindIn(s, 5, 5, 0);
}

int main(void) {
  long n = 777;
  int *x = malloc(n * sizeof(int));
  float *out = malloc(n * sizeof(float));
  int *buckets = malloc(n * sizeof(int));
  for (long i = 0; i < n; ++i) {
    x[i] = (int)((i * 7919) % 1009) - 500;
    out[i] = -1.0f;
    buckets[i] = -1;
  }
  __hpvm__init();
  llvm_hpvm_track_mem(x, n * sizeof(int));
  llvm_hpvm_track_mem(out, n * sizeof(float));
  llvm_hpvm_track_mem(buckets, n * sizeof(int));
  RootIn *args = malloc(sizeof(RootIn));
  args->x = x;
  args->bytes_x = n * sizeof(int);
  args->out = out;
  args->bytes_out = n * sizeof(float);
  args->buckets = buckets;
  args->bytes_buckets = n * sizeof(int);
  args->n = n;
  void *dfg = __hpvm__launch(0, edges_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, n * sizeof(float));
  llvm_hpvm_request_mem(buckets, n * sizeof(int));

  int lo = x[0], hi = x[0];
  for (long i = 1; i < n; ++i) {
    if (x[i] < lo)
      lo = x[i];
    if (x[i] > hi)
      hi = x[i];
  }
  float scale = 1.0f / (float)(hi - lo);
  long wrong = 0, count[5] = {0, 0, 0, 0, 0};
  for (long i = 0; i < n; ++i) {
    float value = (float)(x[i] - lo) * scale;
    int bucket = (int)(value * 4.0f);
    wrong += out[i] != value || buckets[i] != bucket;
    if (buckets[i] >= 0 && buckets[i] < 5)
      count[buckets[i]]++;
  }
  printf("edges: n=%ld lo=%d hi=%d buckets=%ld,%ld,%ld,%ld,%ld wrong=%ld\n", n, lo, hi,
         count[0], count[1], count[2], count[3], count[4], wrong);
  llvm_hpvm_untrack_mem(x);
  llvm_hpvm_untrack_mem(out);
  llvm_hpvm_untrack_mem(buckets);
  __hpvm__cleanup();
  free(x), free(out), free(buckets), free(args);
  return wrong != 0;
}
