// Indices that keep the low bits of the instance id (x & (2^k - 1), as clang
// writes a non-negative int widened to long): the lanes of a group stay
// consecutive until they cross a multiple of 2^k, where the vector variant
// declines and the group runs instance by instance. (x + 5) & 255 crosses 256
// inside a group of lanes; (int)x widened after a sign test is clang's
// x & 0x7fffffff; x & 6 keeps bits that are not the low ones (gathered).
// Prints the same with and without lanes (lanes.test).
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *in;
  size_t bytes_in;
  float *out;
  size_t bytes_out;
  long n;
} RootIn;

void bits_leaf(float *in, size_t bytes_in, float *out, size_t bytes_out) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  int x = (int)i;
  if (x < 0)
    return;
  long wrapped = (i + 5) & 255, widened = (long)x, holes = i & 6;
  out[widened] = in[wrapped] * 2.0f + (float)wrapped + in[holes];
}

void bits_root(float *in, size_t bytes_in, float *out, size_t bytes_out, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *leaf = __hpvm__createNodeND(1, bits_leaf, n);
  for (int p = 0; p < 4; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

static int run(long n) {
  size_t bytes_in = 256 * sizeof(float), bytes_out = n * sizeof(float);
  float *in = malloc(bytes_in), *out = malloc(bytes_out);
  for (long i = 0; i < 256; ++i)
    in[i] = (float)i * 0.5f - 7.0f;
  for (long i = 0; i < n; ++i)
    out[i] = -1.0f;
  llvm_hpvm_track_mem(in, bytes_in);
  llvm_hpvm_track_mem(out, bytes_out);
  RootIn args = {in, bytes_in, out, bytes_out, n};
  void *dfg = __hpvm__launch(0, bits_root, (void *)&args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, bytes_out);
  long wrong = 0;
  double total = 0;
  for (long i = 0; i < n; ++i) {
    long w = (i + 5) & 255;
    wrong += out[i] != in[w] * 2.0f + (float)w + in[i & 6];
    total += out[i];
  }
  printf("low bits: n=%ld total=%.2f wrong=%ld\n", n, total, wrong);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(out);
  free(in);
  free(out);
  return wrong != 0;
}

int main(void) {
  int failed = 0;
  failed |= run(1000);
  failed |= run(37);
  return failed;
}
