// Launches the graph of across_graph.cpp, another translation unit (../across-files.test).
#include <heterocc.h>
#include <stdio.h>
#include <stdlib.h>
void scale(float *a, size_t bytes, float factor, long n);
int main() {
  long n = 1000;
  float *a = (float *)malloc(n * sizeof(float));
  for (long i = 0; i < n; ++i)
    a[i] = (float)i;
  void *graph = __hetero_launch((void *)scale, 3, a, n * sizeof(float), 2.0f, n, 1, a, n * sizeof(float));
  __hetero_wait(graph);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += a[i] != 2.0f * i;
  printf("across files: wrong=%ld\n", wrong);
  free(a);
  return wrong != 0;
}
