/* Leaves with __hpvm__return on several paths that clang merges into one
 * llvm.return: a switch whose cases return early, an early return for an
 * empty input (followed by a C `return` that fills the sret slot), and a
 * 4-field return struct that clang returns through an sret pointer. Static
 * node functions; two launches of one root in flight at once, and a second
 * graph launched from a helper function. */
#include <hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  double sum, min, max;
  long count;
} Stats; /* 32 bytes: returned through sret */

typedef struct __attribute__((__packed__)) {
  long code;
  int kind;
} Class;

static Stats stats(double *x, size_t bytes_x, long n) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(1, x, 0);
  if (n <= 0) {
    __hpvm__return(4, 0.0, 0.0, 0.0, 0L);
    return (Stats){0};
  }
  double sum = 0, min = x[0], max = x[0];
  for (long i = 0; i < n; ++i) {
    sum += x[i];
    min = x[i] < min ? x[i] : min;
    max = x[i] > max ? x[i] : max;
  }
  __hpvm__return(4, sum, min, max, n);
}

static Stats stats_root(double *x, size_t bytes_x, long n) {
  void *s = __hpvm__createNodeND(0, stats);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(s, i, i, 0);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindOut(s, i, i, 0);
}

typedef struct __attribute__((__packed__)) {
  double *x;
  size_t bytes_x;
  long n;
  Stats out;
} StatsArgs;

static Class classify(long v) {
  __hpvm__hint(CPU_TARGET);
  switch (v % 4) {
  case 0:
    __hpvm__return(2, v * 10, 0);
    return;
  case 1:
    __hpvm__return(2, v + 100, 1);
    return;
  case 2:
    if (v > 10) {
      __hpvm__return(2, -v, 2);
      return;
    }
    break;
  default:
    break;
  }
  __hpvm__return(2, v, 3);
}

static Class classify_root(long v) {
  void *c = __hpvm__createNodeND(0, classify);
  __hpvm__bindIn(c, 0, 0, 0);
  __hpvm__bindOut(c, 0, 0, 0);
  __hpvm__bindOut(c, 1, 1, 0);
}

typedef struct __attribute__((__packed__)) {
  long v;
  Class out;
} ClassArgs;

static Class run_classify(long v) {
  ClassArgs args = {v, {0, -1}};
  void *graph = __hpvm__launch(0, classify_root, &args);
  __hpvm__wait(graph);
  return args.out;
}

int main(void) {
  double xs[6] = {3, -1, 4, 1, 5, -9};
  StatsArgs all = {xs, sizeof xs, 6, {0}}, some = {xs + 1, 3 * sizeof(double), 3, {0}},
            none = {xs, 0, 0, {1, 1, 1, 1}};
  void *g1 = __hpvm__launch(0, stats_root, &all);
  void *g2 = __hpvm__launch(0, stats_root, &some);
  void *g3 = __hpvm__launch(0, stats_root, &none);
  __hpvm__wait(g2);
  __hpvm__wait(g1);
  __hpvm__wait(g3);
  int wrong = 0;
  StatsArgs *cases[3] = {&all, &some, &none};
  for (int c = 0; c < 3; ++c) {
    Stats s = cases[c]->out;
    printf("return_paths: stats n=%ld sum=%.1f min=%.1f max=%.1f\n", s.count, s.sum, s.min,
           s.max);
  }
  wrong += all.out.sum != 3 || all.out.min != -9 || all.out.max != 5 || all.out.count != 6;
  wrong += some.out.sum != 4 || some.out.min != -1 || some.out.max != 4 || some.out.count != 3;
  wrong += none.out.sum != 0 || none.out.min != 0 || none.out.max != 0 || none.out.count != 0;
  long codes = 0;
  for (long v = 0; v < 16; ++v) {
    Class c = run_classify(v);
    long code = v % 4 == 0 ? v * 10 : v % 4 == 1 ? v + 100 : v % 4 == 2 && v > 10 ? -v : v;
    int kind = v % 4 == 0 ? 0 : v % 4 == 1 ? 1 : v % 4 == 2 && v > 10 ? 2 : 3;
    wrong += c.code != code || c.kind != kind;
    codes += c.code * (c.kind + 1);
  }
  printf("return_paths: codes=%ld wrong=%d\n", codes, wrong);
  return wrong != 0;
}
