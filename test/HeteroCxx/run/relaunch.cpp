// One root launched from two places (the second launch finds the node the
// first one made), with an empty and a negative trip count (no instances).
#include <heterocc.h>
#include <stdio.h>

void fill(float *a, size_t bytes, long n, float value) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 3, a, bytes, n, value, 1, a, bytes, "fill");
    __hetero_hint(DEVICE);
    a[i] = value + (float)i;
  }
  __hetero_section_end(section);
}

int main() {
  float a[8] = {0};
  __hetero_wait(__hetero_launch((void *)fill, 3, a, sizeof a, 8L, 1.0f, 1, a, sizeof a));
  __hetero_wait(__hetero_launch((void *)fill, 3, a, sizeof a, 0L, 5.0f, 1, a, sizeof a));
  __hetero_wait(__hetero_launch((void *)fill, 3, a, sizeof a, -3L, 5.0f, 1, a, sizeof a));
  __hetero_wait(__hetero_launch((void *)fill, 3, a, sizeof a, 2L, 10.0f, 1, a, sizeof a));
  printf("relaunch: %g %g %g %g\n", a[0], a[1], a[2], a[7]);
  return !(a[0] == 10 && a[1] == 11 && a[2] == 3 && a[7] == 8);
}
