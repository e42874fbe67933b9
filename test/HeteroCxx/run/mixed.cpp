// Hetero-C++ and HPVM-C in one C++ program: a graph written with the HPVM-C
// API (scale) and one in Hetero-C++ (offset) over the same buffer, launched
// one after the other.
#include <heterocc.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *data;
  size_t bytes;
  float factor;
  long n;
} ScaleIn;

void scale_leaf(float *data, size_t bytes, float factor) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, data, 1, data);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  data[i] *= factor;
}

void scale_root(float *data, size_t bytes, float factor, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, data, 1, data);
  void *leaf = __hpvm__createNodeND(1, scale_leaf, n);
  __hpvm__bindIn(leaf, 0, 0, 0);
  __hpvm__bindIn(leaf, 1, 1, 0);
  __hpvm__bindIn(leaf, 2, 2, 0);
}

void offset_root(float *data, size_t bytes, float offset, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 3, data, bytes, offset, n, 1, data, bytes, "offset");
    __hetero_hint(DEVICE);
    data[i] += offset + (float)(i % 3);
  }
  __hetero_section_end(section);
}

int main() {
  long n = 1000;
  size_t bytes = n * sizeof(float);
  float *data = (float *)malloc(bytes);
  for (long i = 0; i < n; ++i)
    data[i] = (float)i;
  ScaleIn *args = (ScaleIn *)malloc(sizeof(ScaleIn));
  *args = ScaleIn{data, bytes, 0.5f, n};
  void *scaled = __hpvm__launch(0, scale_root, (void *)args);
  __hpvm__wait(scaled);
  void *offset = __hetero_launch((void *)offset_root, 3, data, bytes, 2.0f, n, 1, data, bytes);
  __hetero_wait(offset);
  long wrong = 0;
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    wrong += data[i] != (float)i * 0.5f + 2.0f + (float)(i % 3);
    sum += data[i];
  }
  printf("mixed: n=%ld sum=%.1f wrong=%ld\n", n, sum, wrong);
  free(args);
  free(data);
  return wrong != 0;
}
