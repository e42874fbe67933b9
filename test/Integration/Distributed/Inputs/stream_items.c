// A stream of scalar items through a two-stage pipeline: the host pushes N items (argv[1],
// default 10000), keeps up to 32 in flight, and prints every result as it pops it. Each
// result carries its item's index, so the output shows that every item came back once, in
// push order. argv[2] (default 0) iterations of extra arithmetic per item make it costlier
// (the benchmark's injected cost); the values stay bit-for-bit the same on any number of
// ranks. argv[3] = "quiet" prints the summary alone (the benchmark: mpirun forwards every
// line). The stream's duration goes to stderr (benchmarks/distributed).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IN_FLIGHT 32

typedef struct __attribute__((__packed__)) {
  long index;
  double x;
  long work;
} Item;

typedef struct __attribute__((__packed__)) {
  long index;
  double y;
} Result;

typedef struct __attribute__((__packed__)) {
  long index;
  double t;
} Stage1;

Stage1 transform(long index, double x, long work) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 0);
  double t = x * 1.5 + (double)index;
  for (long i = 0; i < work; ++i)
    t = t * 0.999999 + 1e-7;
  __hpvm__return(2, index, t);
}

Result finish(long index, double t) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 0);
  double y = t * t - (double)index / 3.0;
  __hpvm__return(2, index, y);
}

Result stream_root(long index, double x, long work) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 0);
  void *a = __hpvm__createNodeND(0, transform);
  void *b = __hpvm__createNodeND(0, finish);
  for (int i = 0; i < 3; ++i)
    __hpvm__bindIn(a, i, i, 1);
  __hpvm__edge(a, b, HPVM_ALL_TO_ALL, 0, 0, 1);
  __hpvm__edge(a, b, HPVM_ALL_TO_ALL, 1, 1, 1);
  __hpvm__bindOut(b, 0, 0, 1);
  __hpvm__bindOut(b, 1, 1, 1);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000;
  long work = argc > 2 ? atol(argv[2]) : 0;
  int quiet = argc > 3 && strcmp(argv[3], "quiet") == 0;
  Item *items = malloc(sizeof(Item) * (size_t)n);
  for (long k = 0; k < n; ++k)
    items[k] = (Item){k, (double)((k * 7919) % 1009) / 7.0, work};
  struct timespec start, end;
  __hpvm__init();
  clock_gettime(CLOCK_MONOTONIC, &start);
  // The launch's arguments are not an item: every item is pushed.
  void *dfg = __hpvm__launch(1, stream_root, &items[0]);
  long pushed = 0, popped = 0, misordered = 0;
  double sum = 0.0;
  while (popped < n) {
    while (pushed < n && pushed - popped < IN_FLIGHT)
      __hpvm__push(dfg, &items[pushed++]);
    Result *r = __hpvm__pop(dfg);
    misordered += r->index != popped;
    sum += r->y;
    if (!quiet)
      printf("item %ld %a\n", r->index, r->y);
    popped++;
    free(r);
  }
  __hpvm__wait(dfg);
  clock_gettime(CLOCK_MONOTONIC, &end);
  __hpvm__cleanup();
  fprintf(stderr, "stream: %.6f s\n",
          (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  printf("stream: items=%ld misordered=%ld sum=%a\n", n, misordered, sum);
  free(items);
  return misordered != 0;
}
