// The release's special functions (__hpvm__floor, __hpvm__rsqrt,
// __hpvm__sqrt, __hpvm__sin, __hpvm__cos) in a 1-D leaf, checked against libm,
// and __hpvm__atomic_cmpxchg: every instance claims a slot that only the first
// claimant gets, and increments a counter with a compare-and-swap loop.
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *x;
  size_t bytes_x;
  float *y;
  size_t bytes_y;
  int *shared;
  size_t bytes_shared;
  long n;
} RootIn;

void math_leaf(float *x, size_t bytes_x, float *y, size_t bytes_y, int *shared,
               size_t bytes_shared) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, x, shared, 2, y, shared);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  float v = x[i];
  float a = v < 0 ? -v : v;
  y[5 * i + 0] = __hpvm__floor(v);
  y[5 * i + 1] = __hpvm__rsqrt(a + 1.0f);
  y[5 * i + 2] = __hpvm__sqrt(a);
  y[5 * i + 3] = __hpvm__sin(v);
  y[5 * i + 4] = __hpvm__cos(v);
  // shared[0]: the slot, -1 until claimed; shared[1]: claims that saw -1;
  // shared[2]: the counter incremented by compare-and-swap.
  if (__hpvm__atomic_cmpxchg(&shared[0], -1, (int)i) == -1)
    __hpvm__atomic_add(&shared[1], 1);
  int old;
  do
    old = __hpvm__atomic_add(&shared[2], 0);
  while (__hpvm__atomic_cmpxchg(&shared[2], old, old + 1) != old);
}

void math_root(float *x, size_t bytes_x, float *y, size_t bytes_y, int *shared,
               size_t bytes_shared, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, x, shared, 2, y, shared);
  void *leaf = __hpvm__createNodeND(1, math_leaf, n);
  for (int i = 0; i < 6; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10007;
  float *x = malloc(n * sizeof(float)), *y = malloc(5 * n * sizeof(float));
  for (long i = 0; i < n; ++i)
    x[i] = (float)(i % 2001 - 1000) / 37.0f;
  int shared[3] = {-1, 0, 0};
  RootIn args = {x, n * sizeof(float), y, 5 * n * sizeof(float), shared, sizeof(shared), n};
  __hpvm__wait(__hpvm__launch(0, math_root, &args));

  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    float v = x[i], a = fabsf(v);
    float ref[5] = {floorf(v), 1.0f / sqrtf(a + 1.0f), sqrtf(a), sinf(v), cosf(v)};
    for (int k = 0; k < 5; ++k) {
      // floor and sqrt are exact; rsqrt, sin and cos may round differently.
      float tolerance = k == 0 || k == 2 ? 0.0f : 1e-6f;
      if (fabsf(y[5 * i + k] - ref[k]) > tolerance)
        ++wrong;
      sum += y[5 * i + k];
    }
  }
  int claimed = shared[0] >= 0 && shared[0] < n;
  wrong += !claimed + (shared[1] != 1) + (shared[2] != n);
  printf("math_cmpxchg: n=%ld sum=%.3f claims=%d count=%d wrong=%ld\n", n, sum, shared[1],
         shared[2], wrong);
  free(x), free(y);
  return wrong != 0;
}
