// A kernel filling a local table with a byte known only at run time (LLVM makes the stores a
// memset of a variable value), then reading it at indexes known only at run time.
#include <heterocc.h>
#include <stdio.h>

void fill_rows(unsigned char *in, size_t in_bytes, long *out, size_t out_bytes, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 3, in, in_bytes, out, out_bytes, n, 1, out, out_bytes, "rows");
    __hetero_hint(DEVICE);
    unsigned char row[16];
    for (int j = 0; j < 16; ++j)
      row[j] = in[i];
    row[in[i] % 16] = 7;
    long sum = 0;
    for (int j = 0; j < 16; ++j)
      sum += row[(5 * j + in[i]) % 16] * (j + 1);
    out[i] = sum;
  }
  __hetero_section_end(section);
}

int main() {
  unsigned char in[8];
  long out[8] = {0};
  for (int i = 0; i < 8; ++i)
    in[i] = (unsigned char)(3 * i + 1);
  __hetero_wait(__hetero_launch((void *)fill_rows, 3, in, sizeof in, out, sizeof out, 8L, 1, out,
                                sizeof out));
  for (int i = 0; i < 8; ++i)
    printf("%ld ", out[i]);
  printf("\n");
  return 0;
}
