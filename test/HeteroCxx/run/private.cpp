// __hetero_priv: each instance of a parallel loop works on its own copy of a
// scratch buffer (shared, the instances would race on it); the shared buffer
// is left as it was.
#include <heterocc.h>
#include <stdio.h>
void root(float *a, size_t na, float *tmp, size_t nt, long n) {
  void *s = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 3, a, na, tmp, nt, n, 1, a, na, "scale");
    __hetero_priv(1, tmp, nt);
    // Scratch space of 4 floats per instance: shared, the instances would race.
    for (int k = 0; k < 4; ++k)
      tmp[k] = a[i] * (float)(k + 1);
    a[i] = tmp[0] + tmp[1] + tmp[2] + tmp[3];
  }
  __hetero_section_end(s);
}
int main() {
  float a[1000], tmp[4] = {7, 7, 7, 7};
  for (int i = 0; i < 1000; ++i) a[i] = (float)i;
  __hetero_wait(__hetero_launch((void *)root, 3, a, sizeof a, tmp, sizeof tmp, 1000L, 1, a, sizeof a));
  long wrong = 0;
  for (int i = 0; i < 1000; ++i) wrong += a[i] != (float)i * 10.0f;
  printf("priv: wrong=%ld tmp=%.0f\n", wrong, tmp[0]);
  return wrong != 0;
}
