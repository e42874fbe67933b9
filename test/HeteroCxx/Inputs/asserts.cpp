// An assert in a parallel loop's body (its failure path, a call of
// __assert_fail and then unreachable, leaves the loop for LoopInfo but is the
// body's own). ./asserts ok runs clean; ./asserts bad fails the assert.
#include <assert.h>
#include <heterocc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void halve(int *a, size_t bytes, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 2, a, bytes, n, 1, a, bytes, "halve_element");
    assert(a[i] % 2 == 0 && "only even values are halved");
    a[i] /= 2;
  }
  __hetero_section_end(section);
}

int main(int argc, char **argv) {
  long n = 1000;
  int *a = (int *)malloc(n * sizeof(int));
  for (long i = 0; i < n; ++i)
    a[i] = (int)(2 * i);
  if (argc > 1 && strcmp(argv[1], "bad") == 0)
    a[n / 2] = 3;
  void *graph = __hetero_launch((void *)halve, 2, a, n * sizeof(int), n, 1, a, n * sizeof(int));
  __hetero_wait(graph);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += a[i] != (int)i;
  printf("asserts: wrong=%ld\n", wrong);
  free(a);
  return wrong != 0;
}
