// inline_template_kernel.cpp - a GPU-hinted loop calling a C++ template function (linkonce_odr, in a comdat).
#include <heterocc.h>
#include <stdio.h>
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
void root(float *a, size_t na, long n) {
  void *s = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 2, a, na, n, 1, a, na, "twice_loop");
    __hetero_hint(DEVICE);
    a[i] = twice(a[i]);
  }
  __hetero_section_end(s);
}
int main() {
  float a[8];
  for (int i = 0; i < 8; ++i) a[i] = i;
  __hetero_wait(__hetero_launch((void *)root, 2, a, sizeof a, 8L, 1, a, sizeof a));
  for (int i = 0; i < 8; ++i) printf("%g ", a[i]);
  printf("\n");
}
