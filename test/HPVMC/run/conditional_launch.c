// Launches of a root chosen at run time, the way programs pick an algorithm
// from the command line: `c ? __hpvm__launch(..., f, ...) : __hpvm__launch(...,
// g, ...)` (clang makes it one launch of `select(c, f, g)`), an if/else with a
// launch on each side and one wait after it (the handles meet in a block
// argument), roots with outputs read after that wait (one struct for both
// launches, or a struct each), and a handle carried
// around a loop (each step waits for the previous launch, then starts the
// next, alternating roots).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes;
  long n;
} ScaleIn;

typedef struct __attribute__((__packed__)) {
  float value;
} Result;

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes;
  long n;
  Result result;
} ReduceIn;

void add_one(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  a[i] += 1.0f;
}

void twice(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  a[i] *= 2.0f;
}

void add_root(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *k = __hpvm__createNodeND(1, add_one, n);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(k, i, i, 0);
}

void twice_root(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *k = __hpvm__createNodeND(1, twice, n);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(k, i, i, 0);
}

Result sum_leaf(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 0);
  float s = 0.0f;
  for (long i = 0; i < n; ++i)
    s += a[i];
  __hpvm__return(1, s);
}

Result max_leaf(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 0);
  float m = a[0];
  for (long i = 1; i < n; ++i)
    m = a[i] > m ? a[i] : m;
  __hpvm__return(1, m);
}

Result sum_root(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 0);
  void *k = __hpvm__createNodeND(0, sum_leaf);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(k, i, i, 0);
  __hpvm__bindOut(k, 0, 0, 0);
}

Result max_root(float *a, size_t bytes, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, a, 0);
  void *k = __hpvm__createNodeND(0, max_leaf);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(k, i, i, 0);
  __hpvm__bindOut(k, 0, 0, 0);
}

/* Choices the compiler cannot fold (volatile), so that every launch below is
 * chosen at run time. */
static volatile int choice[2] = {0, 1};

/* The ternary: one launch of a root chosen by `add`. */
__attribute__((noinline)) static void scale_ternary(ScaleIn *in, int add) {
  void *g = add ? __hpvm__launch(0, add_root, in) : __hpvm__launch(0, twice_root, in);
  __hpvm__wait(g);
}

/* An if/else with work of its own on each side, its own argument struct each. */
__attribute__((noinline)) static void scale_branches(float *a, size_t bytes, long n, int add) {
  ScaleIn first = {a, bytes, n}, second = {a, bytes, n};
  void *g;
  if (add) {
    printf("conditional_launch: branches: add\n");
    g = __hpvm__launch(0, add_root, &first);
  } else {
    printf("conditional_launch: branches: twice\n");
    g = __hpvm__launch(0, twice_root, &second);
  }
  __hpvm__wait(g);
}

/* Roots with an output: the wait stores it into the one argument struct. */
__attribute__((noinline)) static float reduce(float *a, size_t bytes, long n, int sum) {
  ReduceIn in = {a, bytes, n, {-1.0f}};
  void *g;
  if (sum)
    g = __hpvm__launch(0, sum_root, &in);
  else
    g = __hpvm__launch(0, max_root, &in);
  __hpvm__wait(g);
  return in.result.value;
}

/* The same with a struct per root: the wait stores the output into the struct of the launch
 * that ran (the raised code carries it beside the handle). */
__attribute__((noinline)) static float reduce_apart(float *a, size_t bytes, long n, int sum) {
  ReduceIn for_sum = {a, bytes, n, {-1.0f}}, for_max = {a, bytes, n, {-1.0f}};
  void *g;
  if (sum)
    g = __hpvm__launch(0, sum_root, &for_sum);
  else
    g = __hpvm__launch(0, max_root, &for_max);
  __hpvm__wait(g);
  /* The other struct keeps its -1. */
  return for_sum.result.value + for_max.result.value + 1.0f;
}

/* A handle carried around a loop: wait for the previous step, start the next. */
__attribute__((noinline)) static void alternate(ScaleIn *in, int steps) {
  void *g = __hpvm__launch(0, add_root, in);
  for (int step = 1; step < steps; ++step) {
    __hpvm__wait(g);
    if (choice[step % 2])
      g = __hpvm__launch(0, twice_root, in);
    else
      g = __hpvm__launch(0, add_root, in);
  }
  __hpvm__wait(g);
}

static int check(const char *what, const float *a, const float *expected, long n) {
  int wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += a[i] != expected[i];
  printf("conditional_launch: %s a[1]=%.1f a[%ld]=%.1f wrong=%d\n", what, a[1], n - 1,
         a[n - 1], wrong);
  return wrong;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  if (n < 2)
    n = 2;
  size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *expected = malloc(bytes);
  for (long i = 0; i < n; ++i)
    a[i] = expected[i] = (float)(i % 7);
  ScaleIn in = {a, bytes, n};
  int wrong = 0;
  __hpvm__init();
  llvm_hpvm_track_mem(a, bytes);

  for (int k = 0; k < 2; ++k) {
    int add = choice[k];
    scale_ternary(&in, add);
    llvm_hpvm_request_mem(a, bytes);
    for (long i = 0; i < n; ++i)
      expected[i] = add ? expected[i] + 1.0f : expected[i] * 2.0f;
    wrong += check(add ? "ternary add" : "ternary twice", a, expected, n);
  }
  for (int k = 1; k >= 0; --k) {
    int add = choice[k];
    scale_branches(a, bytes, n, add);
    llvm_hpvm_request_mem(a, bytes);
    for (long i = 0; i < n; ++i)
      expected[i] = add ? expected[i] + 1.0f : expected[i] * 2.0f;
    wrong += check(add ? "branches add" : "branches twice", a, expected, n);
  }
  float sum = 0.0f, max = expected[0];
  for (long i = 0; i < n; ++i) {
    sum += expected[i];
    max = expected[i] > max ? expected[i] : max;
  }
  float got_sum = reduce(a, bytes, n, choice[1]), got_max = reduce(a, bytes, n, choice[0]);
  printf("conditional_launch: sum=%.1f max=%.1f\n", got_sum, got_max);
  wrong += got_sum != sum || got_max != max;
  got_sum = reduce_apart(a, bytes, n, choice[1]);
  got_max = reduce_apart(a, bytes, n, choice[0]);
  printf("conditional_launch: apart sum=%.1f max=%.1f\n", got_sum, got_max);
  wrong += got_sum != sum || got_max != max;
  alternate(&in, 5 + choice[0]); /* 5, unknown to the compiler: the loop stays */
  llvm_hpvm_request_mem(a, bytes);
  for (long i = 0; i < n; ++i)
    expected[i] = (((expected[i] + 1.0f) * 2.0f + 1.0f) * 2.0f) + 1.0f;
  wrong += check("alternate", a, expected, n);

  llvm_hpvm_untrack_mem(a);
  __hpvm__cleanup();
  printf("conditional_launch: wrong=%d\n", wrong);
  free(a);
  free(expected);
  return wrong != 0;
}
