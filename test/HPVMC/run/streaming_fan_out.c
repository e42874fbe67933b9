// A streaming graph whose first stage's outputs fan out: each of its two
// output ports feeds two streaming edges (to the energy stage and to the
// summary stage), and the energy stage feeds the summary stage too. Frames in
// flight, popped in push order, as in streaming.c.
//   stage 1 (1-D, one instance per pixel): scaled[i] = frame[i] * gain
//   stage 2 (0-D): energy = sum of scaled[i]^2 / n
//   stage 3 (0-D): sum, maximum and position of the maximum of scaled, energy
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAMES 7
#define IN_FLIGHT 4

typedef struct __attribute__((__packed__)) {
  float *frame;
  size_t bytes_frame;
  float *scaled;
  size_t bytes_scaled;
  float gain;
  long n;
} Item;

typedef struct __attribute__((__packed__)) {
  float *scaled;
  size_t bytes_scaled;
} ScaleOut;

typedef struct __attribute__((__packed__)) {
  float energy;
} EnergyOut;

typedef struct __attribute__((__packed__)) {
  float sum;
  float max;
  int argmax;
  float energy;
} Summary;

ScaleOut scale(float *frame, size_t bytes_frame, float *scaled, size_t bytes_scaled,
               float gain) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, frame, 1, scaled);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  scaled[i] = frame[i] * gain;
  __hpvm__return(2, scaled, bytes_scaled);
}

EnergyOut energy(float *scaled, size_t bytes_scaled, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, scaled, 0);
  float e = 0.0f;
  for (long i = 0; i < n; ++i)
    e += scaled[i] * scaled[i];
  __hpvm__return(1, e / (float)n);
}

Summary summarize(float *scaled, size_t bytes_scaled, long n, float energy) {
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
  __hpvm__return(4, sum, max, argmax, energy);
}

Summary pipeline_root(float *frame, size_t bytes_frame, float *scaled, size_t bytes_scaled,
                      float gain, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, frame, 1, scaled);
  void *s = __hpvm__createNodeND(1, scale, n);
  void *e = __hpvm__createNodeND(0, energy);
  void *r = __hpvm__createNodeND(0, summarize);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindIn(s, i, i, 1);
  /* Both outputs of s go to e and to r. */
  __hpvm__edge(s, e, HPVM_ALL_TO_ALL, 0, 0, 1);
  __hpvm__edge(s, e, HPVM_ALL_TO_ALL, 1, 1, 1);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 0, 0, 1);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 1, 1, 1);
  __hpvm__bindIn(e, 5, 2, 1);
  __hpvm__bindIn(r, 5, 2, 1);
  __hpvm__edge(e, r, HPVM_ALL_TO_ALL, 0, 3, 1);
  __hpvm__bindOut(r, 0, 0, 1);
  __hpvm__bindOut(r, 1, 1, 1);
  __hpvm__bindOut(r, 2, 2, 1);
  __hpvm__bindOut(r, 3, 3, 1);
}

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
    float sum = 0.0f, max = frames[f][0] * items[f].gain, e = 0.0f;
    int argmax = 0;
    for (long i = 0; i < n; ++i) {
      float v = frames[f][i] * items[f].gain;
      sum += v;
      e += v * v;
      if (v > max) {
        max = v;
        argmax = (int)i;
      }
    }
    int bad = results[f].sum != sum || results[f].max != max || results[f].argmax != argmax ||
              results[f].energy != e / (float)n;
    wrong += bad;
    printf("streaming_fan_out: frame=%d sum=%.3f max=%.3f argmax=%d energy=%.3f%s\n", f,
           results[f].sum, results[f].max, results[f].argmax, results[f].energy,
           bad ? " WRONG" : "");
  }
  printf("streaming_fan_out: frames=%d in_flight=%d wrong=%d\n", FRAMES, IN_FLIGHT, wrong);
  for (int f = 0; f < FRAMES; ++f) {
    free(frames[f]);
    free(scaled[f]);
  }
  free(launch_args);
  return wrong != 0;
}
