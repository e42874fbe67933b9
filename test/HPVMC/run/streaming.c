// A streaming graph: __hpvm__launch(1, ...) starts a two-stage pipeline
// connected by streaming edges, the host pushes several frames before it pops
// any (items in flight), pops the root outputs in push order (each a malloc'd
// struct the program frees) and finally __hpvm__wait ends the stream.
//   stage 1 (1-D, one instance per pixel): scaled[i] = frame[i] * gain
//   stage 2 (0-D): sum, maximum and position of the maximum of scaled
// (the item and stage 1: streaming_stages.h)
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAMES 7
#define IN_FLIGHT 4

typedef struct __attribute__((__packed__)) {
  float sum;
  float max;
  int argmax;
} Summary;

Summary summarize(float *scaled, size_t bytes_scaled, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, scaled, 0);
  float sum = 0.0f, max = scaled[0];
  int argmax = 0;
  for (long i = 0; i < n; ++i) {
    sum += scaled[i];
    if (scaled[i] > max) {
      max = scaled[i];
      argmax = (int)i;
    }
  }
  __hpvm__return(3, sum, max, argmax);
}

#include "streaming_stages.h"

int main(void) {
  long n = 4099;
  size_t bytes = n * sizeof(float);
  float *frames[FRAMES], *scaled[FRAMES];
  Item items[FRAMES];
  for (int f = 0; f < FRAMES; ++f) {
    frames[f] = malloc(bytes);
    scaled[f] = malloc(bytes);
    for (long i = 0; i < n; ++i)
      frames[f][i] = (float)((i * (f + 3)) % 257) * 0.125f;
    items[f].frame = frames[f];
    items[f].bytes_frame = bytes;
    items[f].scaled = scaled[f];
    items[f].bytes_scaled = bytes;
    items[f].gain = (float)(f + 1);
    items[f].n = n;
  }
  __hpvm__init();
  Item *launch_args = malloc(sizeof(Item));
  *launch_args = items[0];
  void *dfg = __hpvm__launch(1, pipeline_root, launch_args);
  Summary results[FRAMES];
  int pushed = 0, popped = 0;
  while (popped < FRAMES) {
    // Keep up to IN_FLIGHT frames in the pipeline.
    while (pushed < FRAMES && pushed - popped < IN_FLIGHT)
      __hpvm__push(dfg, &items[pushed++]);
    Summary *out = __hpvm__pop(dfg);
    results[popped++] = *out;
    free(out);
  }
  __hpvm__wait(dfg);
  __hpvm__cleanup();

  int wrong = 0;
  for (int f = 0; f < FRAMES; ++f) {
    float sum = 0.0f, max = frames[f][0] * items[f].gain;
    int argmax = 0;
    for (long i = 0; i < n; ++i) {
      float v = frames[f][i] * items[f].gain;
      sum += v;
      if (v > max) {
        max = v;
        argmax = (int)i;
      }
    }
    int bad = results[f].sum != sum || results[f].max != max || results[f].argmax != argmax;
    wrong += bad;
    printf("streaming: frame=%d sum=%.3f max=%.3f argmax=%d%s\n", f, results[f].sum,
           results[f].max, results[f].argmax, bad ? " WRONG" : "");
  }
  printf("streaming: frames=%d in_flight=%d wrong=%d\n", FRAMES, IN_FLIGHT, wrong);
  for (int f = 0; f < FRAMES; ++f) {
    free(frames[f]);
    free(scaled[f]);
  }
  free(launch_args);
  return wrong != 0;
}
