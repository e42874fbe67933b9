// HPVM 2.x's earlier spellings of the markers (__hpvm_launch,
// __hpvm_parallel_section_begin, __hpvm_task_begin, __hpvm_parallel_loop,
// __hpvm_priv, __hpvm_launch_begin, ...), declared by the program itself
// without noexcept, as HPVM 2.x's heterocc.h declared them, before and after
// hetero.h; targets as HPVM 2.x's numbers (5: CPU_OR_GPU_TARGET).
#include <stdio.h>
#include <stdlib.h>
extern "C" {
void *__hpvm_launch(void *, ...);
void __hpvm_wait(void *);
void *__hpvm_parallel_section_begin();
void __hpvm_parallel_section_end(void *);
void *__hpvm_task_begin(unsigned, ...);
void __hpvm_task_end(void *);
void __hpvm_parallel_loop(unsigned, ...);
void *__hpvm_launch_begin(unsigned, ...);
void __hpvm_launch_end(void *);
void __hpvm_priv(unsigned, ...);
void __hetero_hint(int);
}
#include <heterocc.h>
extern "C" void *__hetero_section_begin();
extern "C" void __hetero_section_end(void *);

void root(float *a, size_t na, float *tmp, size_t nt, float *sum, size_t ns, long n) {
  void *s = __hpvm_parallel_section_begin();
  for (long i = 0; i < n; ++i) {
    __hpvm_parallel_loop(1, 3, a, na, tmp, nt, n, 1, a, na, "release_scale");
    __hpvm_priv(1, tmp, nt);
    __hetero_hint(5);
    for (int k = 0; k < 4; ++k)
      tmp[k] = a[i] * (float)(k + 1);
    a[i] = tmp[0] + tmp[1] + tmp[2] + tmp[3];
  }
  void *t = __hpvm_task_begin(3, a, na, sum, ns, n, 1, sum, ns, "release_sum");
  __hetero_hint(1);
  float total = 0;
  for (long i = 0; i < n; ++i)
    total += a[i];
  sum[0] = total;
  __hpvm_task_end(t);
  __hpvm_parallel_section_end(s);
}

int main() {
  enum { N = 1000 };
  float *a = (float *)malloc(N * sizeof(float)), tmp[4] = {7, 7, 7, 7}, sum[1] = {0};
  for (int i = 0; i < N; ++i) a[i] = (float)(i % 10);
  void *graph = __hpvm_launch((void *)root, 4, a, N * sizeof(float), tmp, sizeof tmp, sum,
                              sizeof sum, (long)N, 2, a, N * sizeof(float), sum, sizeof sum);
  __hpvm_wait(graph);
  // A launched region, in the earlier spelling.
  void *region = __hpvm_launch_begin(2, a, N * sizeof(float), (long)N, 1, a, N * sizeof(float));
  for (long i = 0; i < N; ++i) a[i] = a[i] / 10.0f;
  __hpvm_launch_end(region);
  long wrong = 0;
  for (int i = 0; i < N; ++i) wrong += a[i] != (float)(i % 10);
  printf("release_spellings: sum=%.1f wrong=%ld\n", sum[0], wrong);
  free(a);
  return wrong != 0;
}
