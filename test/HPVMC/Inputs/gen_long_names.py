"""Writes an HPVM-C program whose host function has local values with names of
more than 1024 bytes sharing their first 1024 (as clang names the phis of the
release's resnet50_imagenet main): LLVM cuts local names at 1024 bytes and
makes them unique with a suffix, so a textual module of it does not parse back
("multiple definition of local value"). hpvm-cc must not depend on that."""
import sys

prefix = "activation_of_block_" + "x" * 1100
print(f"""#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {{
  size_t bytes_out;
}} LeafOut;

LeafOut twice(float *in, size_t bytes_in, float *out, size_t bytes_out) {{
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  out[i] = 2.0f * in[i];
  __hpvm__return(1, bytes_out);
}}

void root(float *in, size_t bytes_in, float *out, size_t bytes_out, long n) {{
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *node = __hpvm__createNodeND(1, twice, n);
  for (int p = 0; p < 4; ++p)
    __hpvm__bindIn(node, p, p, 0);
}}

int main(int argc, char **argv) {{
  long {prefix}_one = argc * 3;
  long {prefix}_two = argc * 5;
  for (int i = 0; i < argc + 3; ++i) {{
    {prefix}_one += i * {prefix}_two;
    {prefix}_two ^= {prefix}_one;
  }}
  long n = 64;
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  for (long i = 0; i < n; ++i)
    in[i] = (float)(i + {prefix}_one % 7);
  struct __attribute__((__packed__)) {{
    float *in;
    size_t bytes_in;
    float *out;
    size_t bytes_out;
    long n;
  }} args = {{in, n * sizeof(float), out, n * sizeof(float), n}};
  llvm_hpvm_track_mem(in, args.bytes_in);
  llvm_hpvm_track_mem(out, args.bytes_out);
  void *graph = __hpvm__launch(0, root, &args);
  __hpvm__wait(graph);
  llvm_hpvm_request_mem(out, args.bytes_out);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(out);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += out[i] != 2.0f * in[i];
  printf("long_names: %ld %ld wrong=%ld\\n", {prefix}_one, {prefix}_two, wrong);
  return wrong != 0;
}}""")
