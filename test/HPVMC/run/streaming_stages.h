// The two-stage streaming graph of streaming.c, also pushed over MPI ranks by
// test/Integration/Distributed/Inputs/buffers.c: each item is a frame (a buffer and its size),
// a buffer the first stage writes (one instance per pixel: scaled[i] = frame[i] * gain) and
// the frame's length; the second stage reads the written buffer. The including file defines
// the root's output, `Summary`, and the second stage, `Summary summarize(float *scaled,
// size_t bytes_scaled, long n)`, which returns three values.
#ifndef HPVMC_RUN_STREAMING_STAGES_H
#define HPVMC_RUN_STREAMING_STAGES_H

#include <hpvm/hpvm.h>
#include <stddef.h>

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

ScaleOut scale(float *frame, size_t bytes_frame, float *scaled, size_t bytes_scaled,
               float gain) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, frame, 1, scaled);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  scaled[i] = frame[i] * gain;
  __hpvm__return(2, scaled, bytes_scaled);
}

Summary pipeline_root(float *frame, size_t bytes_frame, float *scaled, size_t bytes_scaled,
                      float gain, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, frame, 1, scaled);
  void *s = __hpvm__createNodeND(1, scale, n);
  void *r = __hpvm__createNodeND(0, summarize);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindIn(s, i, i, 1);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 0, 0, 1);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 1, 1, 1);
  __hpvm__bindIn(r, 5, 2, 1);
  __hpvm__bindOut(r, 0, 0, 1);
  __hpvm__bindOut(r, 1, 1, 1);
  __hpvm__bindOut(r, 2, 2, 1);
}

#endif
