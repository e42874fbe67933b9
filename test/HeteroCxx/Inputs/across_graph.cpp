// A graph defined in this file and launched from across_host.cpp (../across-files.test).
#include <heterocc.h>
#include <stddef.h>
void scale(float *a, size_t bytes, float factor, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 3, a, bytes, factor, n, 1, a, bytes, "scale_element");
    a[i] = a[i] * factor;
  }
  __hetero_section_end(section);
}
