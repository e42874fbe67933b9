// The same graph launched again and again from a host loop: each launch
// smooths a 1-D signal (a replicated leaf, in -> out) and a 0-D leaf, ordered
// after it by an edge carrying the output pointer, sums the result and
// counts the launch. The host swaps the buffers between launches and reads
// the root outputs (double sum, int launch number) after every __hpvm__wait.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define LAUNCHES 6

typedef struct __attribute__((__packed__)) {
  float *out;
  size_t bytes_out;
} SmoothOut;

typedef struct __attribute__((__packed__)) {
  double sum;
  int launch;
} RootOut;

typedef struct __attribute__((__packed__)) {
  float *in;
  size_t bytes_in;
  float *out;
  size_t bytes_out;
  long n;
  int launch;
  RootOut result;
} RootIn;

SmoothOut smooth(float *in, size_t bytes_in, float *out, size_t bytes_out, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  float left = i > 0 ? in[i - 1] : in[i];
  float right = i + 1 < n ? in[i + 1] : in[i];
  out[i] = 0.25f * left + 0.5f * in[i] + 0.25f * right;
  __hpvm__return(2, out, bytes_out);
}

RootOut checksum(float *out, size_t bytes_out, long n, int launch) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, out, 0);
  double sum = 0;
  for (long i = 0; i < n; ++i)
    sum += out[i] * (double)((i * i) % 13);
  __hpvm__return(2, sum, launch + 1);
}

RootOut smooth_root(float *in, size_t bytes_in, float *out, size_t bytes_out, long n,
                    int launch) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *s = __hpvm__createNodeND(1, smooth, n);
  void *c = __hpvm__createNodeND(0, checksum);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindIn(s, i, i, 0);
  __hpvm__edge(s, c, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(s, c, HPVM_ALL_TO_ALL, 1, 1, 0);
  __hpvm__bindIn(c, 4, 2, 0);
  __hpvm__bindIn(c, 5, 3, 0);
  __hpvm__bindOut(c, 0, 0, 0);
  __hpvm__bindOut(c, 1, 1, 0);
}

int main(void) {
  long n = 1001;
  size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *ra = malloc(bytes), *rb = malloc(bytes);
  for (long i = 0; i < n; ++i)
    a[i] = ra[i] = (i % 10 == 0) ? 64.0f : 0.0f;
  __hpvm__init();
  llvm_hpvm_track_mem(a, bytes);
  llvm_hpvm_track_mem(b, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  int wrong = 0;
  for (int launch = 0; launch < LAUNCHES; ++launch) {
    args->in = a;
    args->bytes_in = bytes;
    args->out = b;
    args->bytes_out = bytes;
    args->n = n;
    args->launch = launch;
    void *dfg = __hpvm__launch(0, smooth_root, args);
    __hpvm__wait(dfg);
    llvm_hpvm_request_mem(b, bytes);
    // The reference step.
    for (long i = 0; i < n; ++i) {
      float left = i > 0 ? ra[i - 1] : ra[i];
      float right = i + 1 < n ? ra[i + 1] : ra[i];
      rb[i] = 0.25f * left + 0.5f * ra[i] + 0.25f * right;
    }
    double sum = 0;
    long bad = 0;
    for (long i = 0; i < n; ++i) {
      sum += rb[i] * (double)((i * i) % 13);
      bad += b[i] != rb[i];
    }
    bad += args->result.sum != sum || args->result.launch != launch + 1;
    wrong += bad != 0;
    printf("repeated_launch: launch=%d sum=%.6f count=%d\n", launch, args->result.sum,
           args->result.launch);
    float *t = a;
    a = b;
    b = t;
    t = ra;
    ra = rb;
    rb = t;
  }
  printf("repeated_launch: n=%ld launches=%d wrong=%d\n", n, LAUNCHES, wrong);
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(b);
  __hpvm__cleanup();
  free(a);
  free(b);
  free(ra);
  free(rb);
  free(args);
  return wrong != 0;
}
