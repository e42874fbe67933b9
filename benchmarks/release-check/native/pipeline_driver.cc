// pipeline_driver.cc - runs the release's edge-detection pipeline (pipeline/src/main.cc,
// unchanged) on generated frames, in both builds.
//
// The release's main needs a display and a video file, so it is compiled under another name
// (-Dmain=release_pipeline_main, never called) and this file's main runs the same streaming
// graph as it does: __hpvm__launch(1, edgeDetection, args) once, then per frame: set the input
// image, reset *maxG, track the buffers, __hpvm__push, __hpvm__pop, request the results,
// untrack; then __hpvm__wait. hpvm-cc builds it as it is; the native build (clang, -DRELEASE_
// CHECK_NATIVE, with hpvm_native.c) runs hpvm_native_root below, which runs the graph's
// leaves one instance after the other, mirroring edgeDetection's bindings and edges.
//
// Usage: pipeline SIZE FRAMES OUTPUT.bin
//   SIZE x SIZE frames (square: the release's leaves are created over an m x n grid but read
//   the x id as the column and the y id as the row, so a non-square frame is only partly
//   computed), SIZE * SIZE a multiple of 256 (the release's block_x). For each frame the
//   output file gets maxG, then Is, L, S, G and E (SIZE * SIZE float32 each).
//
// The release's computeMaxGradientLeaf has a race: instance 0 reads G[1 .. block_x - 1],
// which the other instances are rewriting, without a barrier. The result does not depend on
// the order of the instances when the largest gradient lies in G[0 .. block_x - 1]; the
// frames are made so (a sharp step in the first rows, low contrast elsewhere), and the driver
// checks it: *maxG must be the largest value of G after the run, otherwise it stops.
#include "main.cc"
#undef main

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef RELEASE_CHECK_NATIVE
#include "hpvm_native.h"


static void set2(long x, long y, long nx, long ny) { hpvm_native_set(0, x, y, 0, nx, ny, 1); }

// edgeDetection, one item: the six wrappers in an order that respects the edges
// (GS -> L -> CZC, GS -> CG -> CMG, CZC and CMG -> RZC).
static void run_edge_detection(void *argsp, void *outp) {
  const InStruct *a = static_cast<const InStruct *>(argsp);
  const long m = a->m, n = a->n;
  // WrapperGaussianSmoothing: a 2-D (m, n) grid of gaussianSmoothing(I, bytesI, Gs, bytesGs,
  // Is, bytesIs, m, n); outputs 0 and 1 (bytesIs) go to LNode and CGNode.
  for (long x = 0; x < m; x++)
    for (long y = 0; y < n; y++) {
      set2(x, y, m, n);
      gaussianSmoothing(a->I, a->bytesI, a->Gs, a->bytesGs, a->Is, a->bytesIs, m, n);
    }
  const size_t gs0 = hpvm_native_output(0), gs1 = hpvm_native_output(1);
  // WrapperlaplacianEstimate(Is, <GS out 0>, B, bytesB, L, bytesL, m, n)
  for (long x = 0; x < m; x++)
    for (long y = 0; y < n; y++) {
      set2(x, y, m, n);
      laplacianEstimate(a->Is, gs0, a->B, a->bytesB, a->L, a->bytesL, m, n);
    }
  const size_t l0 = hpvm_native_output(0);
  // WrapperComputeZeroCrossings(L, <L out 0>, B, bytesB, S, bytesS, m, n)
  for (long x = 0; x < m; x++)
    for (long y = 0; y < n; y++) {
      set2(x, y, m, n);
      computeZeroCrossings(a->L, l0, a->B, a->bytesB, a->S, a->bytesS, m, n);
    }
  const size_t czc0 = hpvm_native_output(0);
  // WrapperComputeGradient(Is, <GS out 1>, Sx, bytesSx, Sy, bytesSy, G, bytesG, m, n)
  for (long x = 0; x < m; x++)
    for (long y = 0; y < n; y++) {
      set2(x, y, m, n);
      computeGradient(a->Is, gs1, a->Sx, a->bytesSx, a->Sy, a->bytesSy, a->G, a->bytesG, m, n);
    }
  const size_t cg0 = hpvm_native_output(0);
  // WrapperComputeMaxGradient: grid_x instances of computeMaxGradientTB, each a 1-D grid of
  // block_x instances of computeMaxGradientLeaf(G, <CG out 0>, maxG, bytesMaxG, m, n).
  for (long tb = 0; tb < a->grid_x; tb++) {
    hpvm_native_set(1, tb, 0, 0, a->grid_x, 1, 1);
    for (long x = 0; x < a->block_x; x++) {
      hpvm_native_set(0, x, 0, 0, a->block_x, 1, 1);
      computeMaxGradientLeaf(a->G, cg0, a->maxG, a->bytesMaxG, m, n);
    }
  }
  const size_t cmg0 = hpvm_native_output(0);
  // WrapperRejectZeroCrossings(S, <CZC out 0>, G, bytesG, maxG, <CMG out 0>, E, bytesE, m, n);
  // its output 0 is the graph's output.
  for (long x = 0; x < m; x++)
    for (long y = 0; y < n; y++) {
      set2(x, y, m, n);
      rejectZeroCrossings(a->S, czc0, a->G, a->bytesG, a->maxG, cmg0, a->E, a->bytesE, m, n);
    }
  static_cast<OutStruct *>(outp)->ret = hpvm_native_output(0);
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "pipeline", reinterpret_cast<const void *>(&edgeDetection), 1, run_edge_detection,
    sizeof(OutStruct)};
#endif

namespace {
// A deterministic 8-bit grayscale frame, converted to float as the release's getNextFrame does
// (convertTo(CV_32F, 1.0 / 255.0)): low-contrast background, a moving soft disc, faint noise,
// and a sharp vertical step in the first rows (where the largest gradient must be).
void make_frame(std::vector<float> &img, long size, int frame) {
  uint32_t state = 12345u + 977u * (uint32_t)frame;
  const double cx = size * (0.3 + 0.08 * frame), cy = size * (0.55 + 0.03 * frame);
  const double r = size * 0.2;
  for (long y = 0; y < size; y++)
    for (long x = 0; x < size; x++) {
      state = state * 1664525u + 1013904223u;
      double v = 100 + 20 * std::sin(0.11 * x + 0.05 * frame) * std::cos(0.07 * y);
      double d = std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
      v += 30 / (1 + std::exp((d - r) / 2.0));
      v += (double)(state >> 28) - 7.5;
      if (y < 3)
        v = x < size / 3 + frame ? 0 : 255;
      int k = (int)std::lround(v);
      k = k < 0 ? 0 : k > 255 ? 255 : k;
      img[y * size + x] = (float)(k * (1.0 / 255.0));
    }
}

// The filters: a normalised 7 x 7 Gaussian (sigma 1.2), Sobel, and a full 3 x 3 structuring
// element.
void make_filters(float *gs, float *b, float *sx, float *sy) {
  double w[GAUSSIAN_SIZE * GAUSSIAN_SIZE], sum = 0;
  for (int i = 0; i < GAUSSIAN_SIZE; i++)
    for (int j = 0; j < GAUSSIAN_SIZE; j++) {
      double di = i - GAUSSIAN_RADIUS, dj = j - GAUSSIAN_RADIUS;
      sum += w[i * GAUSSIAN_SIZE + j] = std::exp(-(di * di + dj * dj) / (2 * 1.2 * 1.2));
    }
  for (int i = 0; i < GAUSSIAN_SIZE * GAUSSIAN_SIZE; i++)
    gs[i] = (float)(w[i] / sum);
  for (int i = 0; i < 9; i++) {
    int r = i / 3 - 1, c = i % 3 - 1;
    b[i] = 1;
    sx[i] = (float)(c * (r == 0 ? 2 : 1));
    sy[i] = (float)(r * (c == 0 ? 2 : 1));
  }
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s SIZE FRAMES OUTPUT.bin\n", argv[0]);
    return 2;
  }
  const long size = atol(argv[1]);
  const int frames = atoi(argv[2]);
  const long block_x = 256, grid_x = 1; // as the release's main
  if (size < 16 || (size * size) % block_x != 0 || frames < 1) {
    fprintf(stderr, "pipeline: SIZE * SIZE must be a multiple of %ld\n", block_x);
    return 2;
  }
  FILE *out = fopen(argv[3], "wb");
  if (!out) {
    perror(argv[3]);
    return 1;
  }
  const size_t pixels = size * size, bytes = pixels * sizeof(float);
  std::vector<float> src(pixels), Is(pixels), L(pixels), S(pixels), G(pixels), E(pixels);
  float Gs[GAUSSIAN_SIZE * GAUSSIAN_SIZE], B[9], Sx[9], Sy[9];
  make_filters(Gs, B, Sx, Sy);
  size_t bytesMaxG = sizeof(float);
  float *maxG = (float *)malloc(bytesMaxG);

  __hpvm__init();
  InStruct *args = (InStruct *)malloc(sizeof(InStruct));
  packData(args, src.data(), bytes, Is.data(), bytes, L.data(), bytes, S.data(), bytes,
           G.data(), bytes, maxG, bytesMaxG, E.data(), bytes, Gs, sizeof Gs, B, sizeof B, Sx,
           sizeof Sx, Sy, sizeof Sy, size, size, block_x, grid_x);
  void *DFG = __hpvm__launch(1, edgeDetection, (void *)args);
  double edges = 0;
  for (int f = 0; f < frames; f++) {
    make_frame(src, size, f);
    args->I = src.data();
    *maxG = 0.0;
    float *buffers[] = {src.data(), Is.data(), L.data(), S.data(), G.data(), E.data()};
    for (float *p : buffers)
      llvm_hpvm_track_mem(p, bytes);
    llvm_hpvm_track_mem(maxG, bytesMaxG);
    llvm_hpvm_track_mem(Gs, sizeof Gs);
    llvm_hpvm_track_mem(B, sizeof B);
    llvm_hpvm_track_mem(Sx, sizeof Sx);
    llvm_hpvm_track_mem(Sy, sizeof Sy);
    __hpvm__push(DFG, args);
    void *ret = __hpvm__pop(DFG);
    size_t framesize = ((OutStruct *)ret)->ret;
    llvm_hpvm_request_mem(maxG, bytesMaxG);
    for (float *p : buffers)
      llvm_hpvm_request_mem(p, bytes);
    for (float *p : buffers)
      llvm_hpvm_untrack_mem(p);
    llvm_hpvm_untrack_mem(maxG);
    llvm_hpvm_untrack_mem(Gs);
    llvm_hpvm_untrack_mem(B);
    llvm_hpvm_untrack_mem(Sx);
    llvm_hpvm_untrack_mem(Sy);
    if (framesize != bytes) {
      fprintf(stderr, "pipeline: frame %d: the graph returned %zu, expected %zu\n", f, framesize,
                      bytes);
      return 1;
    }
    float largest = G[0];
    for (size_t i = 1; i < pixels; i++)
      largest = G[i] > largest ? G[i] : largest;
    if (*maxG != largest) {
      fprintf(stderr, "pipeline: frame %d: maxG = %.9g but G holds %.9g: the frame's largest "
                      "gradient is not where the release's computeMaxGradientLeaf finds it "
                      "whatever the order of its instances\n", f, *maxG, largest);
      return 1;
    }
    fwrite(maxG, sizeof(float), 1, out);
    fwrite(Is.data(), sizeof(float), pixels, out);
    fwrite(L.data(), sizeof(float), pixels, out);
    fwrite(S.data(), sizeof(float), pixels, out);
    fwrite(G.data(), sizeof(float), pixels, out);
    fwrite(E.data(), sizeof(float), pixels, out);
    for (size_t i = 0; i < pixels; i++)
      edges += E[i];
  }
  __hpvm__wait(DFG);
  __hpvm__cleanup();
  fclose(out);
  printf("pipeline: %d frames of %ld x %ld, %.0f edge pixels\n", frames, size, size, edges);
  return 0;
}
