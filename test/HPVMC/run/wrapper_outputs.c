// The hpvm-cava shape: each stage is a wrapper node over a 2-D grid of tiles whose leaf
// returns the size of the buffer it wrote (__hpvm__return(1, bytes)); the wrappers bind that
// output out and edges carry it to the next stage, ordering the stages. Nested grids with
// outputs still run as one parallel-for each (collapse-grids); the first instance publishes.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float *in;
  size_t bytes_in;
  float *mid;
  size_t bytes_mid;
  float *out;
  size_t bytes_out;
  long w, h, tile_x, tile_y;
} RootIn;

typedef struct {
  size_t bytes;
} Out;

Out scale_leaf(float *in, size_t bytes_in, float *mid, size_t bytes_mid, long w, long h) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, mid, 1, mid);
  void *self = __hpvm__getNode(), *parent = __hpvm__getParentNode(self);
  long x = __hpvm__getNodeInstanceID_x(parent) * __hpvm__getNumNodeInstances_x(self) +
           __hpvm__getNodeInstanceID_x(self);
  long y = __hpvm__getNodeInstanceID_y(parent) * __hpvm__getNumNodeInstances_y(self) +
           __hpvm__getNodeInstanceID_y(self);
  if (x < w && y < h)
    mid[y * w + x] = in[y * w + x] * 0.5f + 1.0f;
  __hpvm__return(1, bytes_mid);
}

Out scale_wrapper(float *in, size_t bytes_in, float *mid, size_t bytes_mid, long w, long h,
                  long tile_x, long tile_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, in, mid, 1, mid);
  void *node = __hpvm__createNodeND(2, scale_leaf, tile_x, tile_y);
  for (int p = 0; p < 6; ++p)
    __hpvm__bindIn(node, p, p, 0);
  __hpvm__bindOut(node, 0, 0, 0);
}

Out blur_leaf(float *mid, size_t bytes_mid, float *out, size_t bytes_out, long w, long h) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, mid, out, 1, out);
  void *self = __hpvm__getNode(), *parent = __hpvm__getParentNode(self);
  long x = __hpvm__getNodeInstanceID_x(parent) * __hpvm__getNumNodeInstances_x(self) +
           __hpvm__getNodeInstanceID_x(self);
  long y = __hpvm__getNodeInstanceID_y(parent) * __hpvm__getNumNodeInstances_y(self) +
           __hpvm__getNodeInstanceID_y(self);
  if (x < w && y < h) {
    float left = mid[y * w + (x > 0 ? x - 1 : x)], right = mid[y * w + (x + 1 < w ? x + 1 : x)];
    out[y * w + x] = (left + mid[y * w + x] + right) / 3.0f;
  }
  __hpvm__return(1, bytes_out);
}

Out blur_wrapper(float *mid, size_t bytes_mid, float *out, size_t bytes_out, long w, long h,
                 long tile_x, long tile_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, mid, out, 1, out);
  void *node = __hpvm__createNodeND(2, blur_leaf, tile_x, tile_y);
  for (int p = 0; p < 6; ++p)
    __hpvm__bindIn(node, p, p, 0);
  __hpvm__bindOut(node, 0, 0, 0);
}

Out root(float *in, size_t bytes_in, float *mid, size_t bytes_mid, float *out,
         size_t bytes_out, long w, long h, long tile_x, long tile_y) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, in, mid, out, 2, mid, out);
  long grid_x = (w + tile_x - 1) / tile_x, grid_y = (h + tile_y - 1) / tile_y;
  void *scale = __hpvm__createNodeND(2, scale_wrapper, grid_x, grid_y);
  void *blur = __hpvm__createNodeND(2, blur_wrapper, grid_x, grid_y);
  __hpvm__bindIn(scale, 0, 0, 0);
  __hpvm__bindIn(scale, 1, 1, 0);
  __hpvm__bindIn(scale, 2, 2, 0);
  __hpvm__bindIn(scale, 3, 3, 0);
  __hpvm__bindIn(scale, 6, 4, 0);
  __hpvm__bindIn(scale, 7, 5, 0);
  __hpvm__bindIn(scale, 8, 6, 0);
  __hpvm__bindIn(scale, 9, 7, 0);
  __hpvm__bindIn(blur, 2, 0, 0);
  __hpvm__edge(scale, blur, 1, 0, 1, 0); /* the scaled buffer's size orders the stages */
  __hpvm__bindIn(blur, 4, 2, 0);
  __hpvm__bindIn(blur, 5, 3, 0);
  __hpvm__bindIn(blur, 6, 4, 0);
  __hpvm__bindIn(blur, 7, 5, 0);
  __hpvm__bindIn(blur, 8, 6, 0);
  __hpvm__bindIn(blur, 9, 7, 0);
  __hpvm__bindOut(blur, 0, 0, 0);
}

static int run(long w, long h) {
  size_t bytes = sizeof(float) * w * h;
  float *in = malloc(bytes), *mid = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
  for (long i = 0; i < w * h; ++i)
    in[i] = (float)((i * 37) % 101) - 50.0f;
  llvm_hpvm_track_mem(in, bytes);
  llvm_hpvm_track_mem(mid, bytes);
  llvm_hpvm_track_mem(out, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){in, bytes, mid, bytes, out, bytes, w, h, 8, 4};
  void *dfg = __hpvm__launch(0, root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, bytes);
  long wrong = 0;
  double sum = 0;
  for (long y = 0; y < h; ++y)
    for (long x = 0; x < w; ++x) {
      float m = in[y * w + x] * 0.5f + 1.0f;
      float l = in[y * w + (x > 0 ? x - 1 : x)] * 0.5f + 1.0f;
      float r = in[y * w + (x + 1 < w ? x + 1 : x)] * 0.5f + 1.0f;
      ref[y * w + x] = (l + m + r) / 3.0f;
      wrong += ref[y * w + x] != out[y * w + x];
      sum += out[y * w + x];
    }
  printf("wrapper_outputs: %ldx%ld sum=%.3f wrong=%ld\n", w, h, sum, wrong);
  llvm_hpvm_untrack_mem(in);
  llvm_hpvm_untrack_mem(mid);
  llvm_hpvm_untrack_mem(out);
  free(in), free(mid), free(out), free(ref), free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(37, 21) + run(64, 8) + run(1, 1);
  __hpvm__cleanup();
  return failed;
}
