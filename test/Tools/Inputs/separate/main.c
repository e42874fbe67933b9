// Runs the graphs of scale.c compiled twice apart (run_a adds 1, run_b adds 3).
#include <hpvm/hpvm.h>
#include <stdio.h>
void run_a(float *x, long n);
void run_b(float *x, long n);
int main(void) {
  float x[100];
  for (int i = 0; i < 100; ++i) x[i] = i;
  __hpvm__init();
  run_a(x, 100);
  run_b(x, 100);
  __hpvm__cleanup();
  double s = 0; for (int i = 0; i < 100; ++i) s += x[i];
  printf("sum %.1f\n", s);
  return 0;
}
