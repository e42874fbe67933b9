// Atomics: a 1-D leaf with one instance per input element counts the element
// in its bin with __hpvm__atomic_add, keeps the running minimum and maximum
// with __hpvm__atomic_min / __hpvm__atomic_max, counts the odd elements with
// __hpvm__atomic_inc, subtracts the even ones with __hpvm__atomic_sub, and
// folds every element into a checksum with __hpvm__atomic_xor.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define BINS 16

typedef struct __attribute__((__packed__)) {
  int *data;
  size_t bytes_data;
  int *bins;
  size_t bytes_bins;
  int *stats;
  size_t bytes_stats;
  int range;
  long n;
} RootIn;

void histogram_leaf(int *data, size_t bytes_data, int *bins, size_t bytes_bins, int *stats,
                    size_t bytes_stats, int range) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, data, 2, bins, stats);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  int v = data[i];
  __hpvm__atomic_add(&bins[v * BINS / range], 1);
  __hpvm__atomic_min(&stats[0], v);
  __hpvm__atomic_max(&stats[1], v);
  if (v & 1)
    __hpvm__atomic_inc(&stats[2]);
  else
    __hpvm__atomic_sub(&stats[3], v);
  __hpvm__atomic_xor(&stats[4], v);
}

void histogram_root(int *data, size_t bytes_data, int *bins, size_t bytes_bins, int *stats,
                    size_t bytes_stats, int range, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, data, 2, bins, stats);
  void *leaf = __hpvm__createNodeND(1, histogram_leaf, n);
  for (int i = 0; i < 7; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100003;
  int range = 1000;
  int *data = malloc(n * sizeof(int));
  unsigned seed = 12345;
  for (long i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (int)((seed >> 8) % (unsigned)range);
  }
  int bins[BINS] = {0};
  int stats[5] = {range, -1, 0, 0, 0};
  __hpvm__init();
  llvm_hpvm_track_mem(data, n * sizeof(int));
  llvm_hpvm_track_mem(bins, sizeof(bins));
  llvm_hpvm_track_mem(stats, sizeof(stats));
  RootIn *args = malloc(sizeof(RootIn));
  args->data = data;
  args->bytes_data = n * sizeof(int);
  args->bins = bins;
  args->bytes_bins = sizeof(bins);
  args->stats = stats;
  args->bytes_stats = sizeof(stats);
  args->range = range;
  args->n = n;
  void *dfg = __hpvm__launch(0, histogram_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(bins, sizeof(bins));
  llvm_hpvm_request_mem(stats, sizeof(stats));
  llvm_hpvm_untrack_mem(data);
  llvm_hpvm_untrack_mem(bins);
  llvm_hpvm_untrack_mem(stats);
  __hpvm__cleanup();

  int ref_bins[BINS] = {0};
  int ref_stats[5] = {range, -1, 0, 0, 0};
  for (long i = 0; i < n; ++i) {
    int v = data[i];
    ref_bins[v * BINS / range]++;
    if (v < ref_stats[0])
      ref_stats[0] = v;
    if (v > ref_stats[1])
      ref_stats[1] = v;
    if (v & 1)
      ref_stats[2]++;
    else
      ref_stats[3] -= v;
    ref_stats[4] ^= v;
  }
  int wrong = 0;
  long total = 0;
  for (int b = 0; b < BINS; ++b) {
    wrong += bins[b] != ref_bins[b];
    total += bins[b];
  }
  for (int s = 0; s < 5; ++s)
    wrong += stats[s] != ref_stats[s];
  printf("histogram: n=%ld total=%ld bin0=%d bin15=%d min=%d max=%d odd=%d even_sum=%d "
         "xor=%d wrong=%d\n",
         n, total, bins[0], bins[BINS - 1], stats[0], stats[1], stats[2], stats[3], stats[4],
         wrong);
  free(data);
  free(args);
  return wrong != 0;
}
