/* Leaves call auxiliary C functions (kept as ordinary functions, not inlined
 * here: noinline and recursive) and use a global lookup table. */
#include <hpvm.h>
#include <stdio.h>
#include <stdlib.h>

static const int weights[4] = {3, 1, 4, 1};

__attribute__((noinline)) long gcd(long a, long b) { return b == 0 ? a : gcd(b, a % b); }

__attribute__((noinline)) static long weigh(long i, long v) { return v * weights[i & 3]; }

void leaf(long *in, size_t bytes_in, long *out, size_t bytes_out) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  out[i] = weigh(i, gcd(in[i], 360));
}

void root(long *in, size_t bytes_in, long *out, size_t bytes_out, long n) {
  __hpvm__hint(CPU_TARGET);
  void *node = __hpvm__createNodeND(1, leaf, n);
  for (int p = 0; p < 4; ++p)
    __hpvm__bindIn(node, p, p, 0);
}

typedef struct __attribute__((__packed__)) {
  long *in;
  size_t bytes_in;
  long *out;
  size_t bytes_out;
  long n;
} RootIn;

int main(void) {
  long n = 100, wrong = 0, sum = 0;
  long *in = malloc(n * sizeof(long)), *out = calloc(n, sizeof(long));
  for (long i = 0; i < n; ++i)
    in[i] = i * 7 + 1;
  RootIn args = {in, n * sizeof(long), out, n * sizeof(long), n};
  llvm_hpvm_track_mem(in, args.bytes_in);
  llvm_hpvm_track_mem(out, args.bytes_out);
  __hpvm__wait(__hpvm__launch(0, root, &args));
  llvm_hpvm_request_mem(out, args.bytes_out);
  for (long i = 0; i < n; ++i) {
    wrong += out[i] != weigh(i, gcd(in[i], 360));
    sum += out[i];
  }
  printf("aux_functions: n=%ld sum=%ld wrong=%ld\n", n, sum, wrong);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(out);
  free(in), free(out);
  return wrong != 0;
}
