/* __hpvm__return with integer literals for size_t, long, double, float,
 * short and pointer outputs (C passes them as int): each converts to its
 * field's type, as a C assignment would. The buffer comes with its size in
 * bytes, as HPVM-C asks of every pointer a device may copy. */
#include <hpvm.h>
#include <stdio.h>

typedef struct __attribute__((__packed__)) {
  size_t bytes;
  long count;
  double mean;
  float scale;
  short tag;
  long *data;
} Summary;

Summary summarize(long *data, size_t bytes_data, long n) {
  __hpvm__hint(CPU_TARGET);
  if (n <= 0) {
    __hpvm__return(6, 0, -1, 0, 1, 7, 0);
    return;
  }
  long sum = 0;
  for (long i = 0; i < n; ++i)
    sum += data[i];
  __hpvm__return(6, (size_t)n * sizeof(long), n, (double)sum / n, 0.5f, (short)-2, data);
}

Summary root(long *data, size_t bytes_data, long n) {
  void *s = __hpvm__createNodeND(0, summarize);
  __hpvm__bindIn(s, 0, 0, 0);
  __hpvm__bindIn(s, 1, 1, 0);
  __hpvm__bindIn(s, 2, 2, 0);
  for (int i = 0; i < 6; ++i)
    __hpvm__bindOut(s, i, i, 0);
}

typedef struct __attribute__((__packed__)) {
  long *data;
  size_t bytes_data;
  long n;
  Summary out;
} Args;

int main(void) {
  long data[4] = {4, 8, 15, 16};
  Args full = {data, sizeof(data), 4}, empty = {data, sizeof(data), 0};
  __hpvm__wait(__hpvm__launch(0, root, &full));
  __hpvm__wait(__hpvm__launch(0, root, &empty));
  Args *cases[2] = {&full, &empty};
  for (int c = 0; c < 2; ++c) {
    Summary s = cases[c]->out;
    printf("return_literals: bytes=%zu count=%ld mean=%.2f scale=%.2f tag=%d data=%s\n",
           s.bytes, s.count, s.mean, s.scale, s.tag,
           s.data == data ? "data" : s.data ? "other" : "null");
  }
  int wrong = full.out.bytes != 32 || full.out.count != 4 || full.out.mean != 10.75 ||
              full.out.scale != 0.5f || full.out.tag != -2 || full.out.data != data ||
              empty.out.bytes != 0 || empty.out.count != -1 || empty.out.mean != 0 ||
              empty.out.scale != 1 || empty.out.tag != 7 || empty.out.data != NULL;
  printf("return_literals: wrong=%d\n", wrong);
  return wrong;
}
