// A pipeline with buffers: the graph of the HPVM-C suite's streaming.c (its item and first
// stage: streaming_stages.h), whose second stage here sums the written buffer and returns the
// sum and the written buffer's pointer and size. The host checks that the
// pointer popped is its own buffer of that frame, then prints the sums and every written
// buffer's bytes (as a hash) after the stream ended. Frames alternate between a separate
// output buffer and an in-place one (the same pointer as input and output), and the last
// frame's buffers are empty.
#include <hpvm/hpvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES 96
#define IN_FLIGHT 8

typedef struct __attribute__((__packed__)) {
  float sum;
  float *scaled;
  size_t bytes_scaled;
} Summary;

Summary summarize(float *scaled, size_t bytes_scaled, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, scaled, 0);
  float sum = 0.0f;
  for (long i = 0; i < n; ++i)
    sum += scaled[i];
  __hpvm__return(3, sum, scaled, bytes_scaled);
}

#include "../../../HPVMC/run/streaming_stages.h"

static uint64_t hash(const void *data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
  return h;
}

int main(void) {
  static Item items[FRAMES];
  static float *frames[FRAMES], *scaled[FRAMES];
  for (int f = 0; f < FRAMES; ++f) {
    long n = f == FRAMES - 1 ? 0 : 1000 + 37 * f;
    size_t bytes = (size_t)n * sizeof(float);
    frames[f] = malloc(bytes + 1);
    for (long i = 0; i < n; ++i)
      frames[f][i] = (float)((i * (f + 3)) % 257) * 0.125f;
    scaled[f] = f % 2 ? frames[f] : calloc(1, bytes + 1);
    items[f] = (Item){frames[f], bytes, scaled[f], bytes, (float)(f % 5) + 0.25f, n};
  }
  __hpvm__init();
  void *dfg = __hpvm__launch(1, pipeline_root, &items[0]);
  float sums[FRAMES];
  int pushed = 0, popped = 0, wrong = 0;
  while (popped < FRAMES) {
    while (pushed < FRAMES && pushed - popped < IN_FLIGHT)
      __hpvm__push(dfg, &items[pushed++]);
    Summary *out = __hpvm__pop(dfg);
    wrong += out->scaled != scaled[popped] || out->bytes_scaled != items[popped].bytes_scaled;
    sums[popped++] = out->sum;
    free(out);
  }
  __hpvm__wait(dfg);
  __hpvm__cleanup();
  for (int f = 0; f < FRAMES; ++f)
    printf("frame %d sum %a scaled %016llx frame %016llx\n", f, sums[f],
           (unsigned long long)hash(scaled[f], items[f].bytes_scaled),
           (unsigned long long)hash(frames[f], items[f].bytes_frame));
  printf("buffers: frames=%d wrong_pointers=%d\n", FRAMES, wrong);
  for (int f = 0; f < FRAMES; ++f) {
    if (scaled[f] != frames[f])
      free(scaled[f]);
    free(frames[f]);
  }
  return wrong != 0;
}
