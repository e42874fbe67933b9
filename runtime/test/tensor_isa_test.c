/* tensor_isa_test.c - the tensor kernels of every ISA the CPU has give the same bits: each ISA
 * (HPVM_TENSOR_ISA=generic, avx2, or the default, AVX-512 where the CPU has it) runs in a child
 * process of its own (the choice is made once per process) on the same convolutions (rows narrower
 * than a block: the kernel across filters, with partial blocks of positions; wide rows: the direct
 * kernel, or across filters with AVX-512; a pointwise one; strided ones: the tap lists, or across
 * filters with AVX-512, one image in blocks of rows; a strided one of 3 filters: the im2col
 * product), depthwise ones (16-float vectors with AVX-512), pools (2 x 2 at stride 2 with NaNs,
 * 3 x 3 padded; max, min and mean) and products (partial micro-tiles of 6 x 16 and 12 x 32, a depth
 * past one packed block), with bias and activations; the AVX2 and AVX-512 results must be equal bit
 * for bit, and the baseline's within rounding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hpvm/hpvm_rt.h"
#include "test_util.h"

enum { kFloats = 1 << 20 };

/* Every kernel's output, end to end, into out[]; returns the count. */
static int64_t compute(float *out) {
  int64_t used = 0;
  test_seed = 4242;
  /* Convolutions: narrow rows (5x5 images, 37 filters: partial blocks of filters and of
   * positions), wide rows (3 images of 40x41), pointwise, each with bias and an activation. */
  struct {
    int64_t n, c, h, w, f, kh, kw, pad, stride, activation;
  } convs[] = {{2, 19, 5, 5, 37, 3, 3, 1, 1, HPVM_RT_TENSOR_RELU},
               {3, 7, 40, 41, 13, 3, 3, 1, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
               {2, 33, 17, 18, 21, 1, 1, 0, 1, HPVM_RT_TENSOR_IDENTITY},
               /* strided: the tap lists across filters (partial blocks of positions) */
               {2, 9, 15, 17, 29, 3, 3, 1, 2, HPVM_RT_TENSOR_RELU},
               /* strided with 3 filters: a product on the im2col matrix, packed into the
                * micro-kernel's panels (16 or 32 columns) straight from the image */
               {2, 5, 23, 29, 3, 3, 3, 1, 2, HPVM_RT_TENSOR_CLIPPED_RELU},
               /* one image in blocks of rows (AVX-512: the wide kernel across filters,
                * partial blocks of 32 filters and of positions cut by the rows), strided and
                * not, 5 x 5, SiLU; 40 filters: the 16-filter kernel or the tap lists */
               {1, 6, 64, 70, 48, 3, 3, 1, 2, HPVM_RT_TENSOR_RELU},
               {1, 4, 30, 33, 32, 5, 5, 2, 1, HPVM_RT_TENSOR_SILU},
               {1, 3, 48, 50, 88, 3, 3, 1, 1, HPVM_RT_TENSOR_SIGMOID},
               {1, 6, 64, 70, 40, 3, 3, 1, 2, HPVM_RT_TENSOR_RELU},
               /* deep reductions: the wide direct kernel (AVX-512, blocks of
                * 12 filters, a partial one), pointwise (columns copied) and 3 x 3 */
               {1, 300, 9, 20, 29, 1, 1, 0, 1, HPVM_RT_TENSOR_IDENTITY},
               {1, 30, 12, 40, 22, 3, 3, 1, 1, HPVM_RT_TENSOR_RELU},
               /* deep 3 x 3 (AVX-512: the wide kernel over chunks of channels, a partial
                * last one, sums carried between them): 7 x 7 outputs in blocks of 7
                * positions, strided, a batch; 11 x 13 in blocks of 12 */
               {1, 75, 7, 7, 56, 3, 3, 1, 1, HPVM_RT_TENSOR_RELU},
               {2, 64, 14, 14, 64, 3, 3, 1, 2, HPVM_RT_TENSOR_SILU},
               {1, 70, 11, 13, 32, 3, 3, 1, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
               /* a batch of 3 x 3 images: blocks of positions across two images (their
                * tiles scattered position by position), and within one (a vector each) */
               {16, 8, 3, 3, 32, 3, 3, 1, 1, HPVM_RT_TENSOR_RELU},
               /* 1 x 1 over at most 64 positions: the wide kernel across filters, chunks
                * of a deep reduction, strided (gathered pixels) */
               {1, 600, 7, 7, 32, 1, 1, 0, 1, HPVM_RT_TENSOR_RELU},
               {2, 40, 8, 8, 56, 1, 1, 0, 1, HPVM_RT_TENSOR_SILU},
               {1, 24, 13, 13, 32, 1, 1, 0, 2, HPVM_RT_TENSOR_IDENTITY},
               /* 1 x 1 on 1 x 1 images: the skinny product by the transposed filters */
               {8, 70, 1, 1, 300, 1, 1, 0, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
               /* strided 1 x 1, padded: the pointwise kernel over the gathered pixels */
               {2, 24, 15, 17, 40, 1, 1, 1, 2, HPVM_RT_TENSOR_RELU}};
  for (size_t i = 0; i < sizeof convs / sizeof convs[0]; ++i) {
    int64_t n = convs[i].n, c = convs[i].c, h = convs[i].h, w = convs[i].w, f = convs[i].f;
    int64_t kh = convs[i].kh, kw = convs[i].kw, pad = convs[i].pad, stride = convs[i].stride;
    int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
    float *input = test_random_array(n * c * h * w);
    float *filter = test_random_array(f * c * kh * kw);
    float *bias = test_random_array(f);
    hpvm_rt_tensor_conv2d_f32(input, filter, bias, out + used, n, c, h, w, f, kh, kw, oh, ow,
                              pad, pad, stride, stride, 1, convs[i].activation, 0.75);
    used += n * f * oh * ow;
    free(input);
    free(filter);
    free(bias);
  }
  /* Depthwise: rows of 16 columns or more (AVX-512: 16-float vectors, blocks of 32 and 16, the
   * last one overlapping), strides 1 and 2, 3 x 3 and 5 x 5; rows narrower than 16 columns
   * (AVX-512: one masked vector each, 4 rows at a time and the rest one by one; 14 x 14 and
   * 7 x 7 planes, 5 x 5 windows, stride 2). */
  struct {
    int64_t n, c, h, w, k, pad, stride, activation;
  } depthwise[] = {{2, 5, 20, 37, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {1, 4, 23, 71, 3, 1, 2, HPVM_RT_TENSOR_CLIPPED_RELU},
                   {1, 3, 17, 50, 5, 2, 1, HPVM_RT_TENSOR_IDENTITY},
                   {2, 6, 9, 12, 3, 1, 1, HPVM_RT_TENSOR_SILU},
                   {1, 7, 14, 14, 5, 2, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
                   {2, 5, 7, 7, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {1, 6, 14, 13, 3, 1, 2, HPVM_RT_TENSOR_IDENTITY},
                   {1, 3, 15, 9, 5, 2, 2, HPVM_RT_TENSOR_SILU},
                   /* AVX-512's ring of padded rows: 4 output rows at a time (rows of 2
                    * vectors or less) and 2 (3 or 4 vectors a tile, the last clamped), with
                    * 3 and 1 rows left; stride 2 rows split by permutes with masked tails
                    * (odd widths, even padding); stride 3; 7 x 7 windows. */
                   {1, 3, 35, 61, 3, 1, 2, HPVM_RT_TENSOR_RELU},
                   {1, 2, 11, 100, 5, 2, 2, HPVM_RT_TENSOR_CLIPPED_RELU},
                   {1, 2, 19, 70, 3, 0, 3, HPVM_RT_TENSOR_IDENTITY},
                   {1, 2, 10, 130, 7, 3, 1, HPVM_RT_TENSOR_RELU},
                   {1, 2, 3, 40, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {1, 2, 7, 20, 3, 1, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
                   {1, 2, 6, 33, 3, 1, 1, HPVM_RT_TENSOR_IDENTITY},
                   /* 3 x 3 at stride 1 from aligned loads shifted by lanes: a row of one
                    * whole vector, a tile of 4 vectors then 2 (the last under a mask), rows of
                    * exactly 4 vectors without padding. */
                   {1, 2, 9, 16, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {1, 3, 5, 83, 3, 1, 1, HPVM_RT_TENSOR_IDENTITY},
                   {1, 2, 8, 66, 3, 0, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
                   /* ... and at stride 2 (the odd column phase loaded, the third column
                    * shifted): 4 vectors then 1 under a mask, 2 whole vectors unpadded. */
                   {1, 2, 9, 130, 3, 1, 2, HPVM_RT_TENSOR_IDENTITY},
                   {1, 3, 12, 65, 3, 0, 2, HPVM_RT_TENSOR_RELU},
                   /* Rows narrower than 16 at stride 1 in registers: padded rows past 16
                    * columns (the second vector), 4 + 2 + 1 rows, no padding. */
                   {1, 3, 11, 15, 5, 2, 1, HPVM_RT_TENSOR_IDENTITY},
                   {1, 2, 7, 15, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {1, 2, 9, 10, 3, 0, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
                   /* AVX-512's 16 narrow planes at once (a plane per lane): 16 and a rest,
                    * planes of two images in one vector (channels wrapping), stride 2,
                    * no padding, 7 x 7 windows, a logistic activation after them. */
                   {1, 20, 7, 7, 3, 1, 1, HPVM_RT_TENSOR_RELU},
                   {2, 17, 14, 13, 5, 2, 2, HPVM_RT_TENSOR_SILU},
                   {1, 32, 9, 9, 3, 0, 1, HPVM_RT_TENSOR_CLIPPED_RELU},
                   {1, 16, 5, 8, 7, 3, 1, HPVM_RT_TENSOR_IDENTITY}};
  for (size_t i = 0; i < sizeof depthwise / sizeof depthwise[0]; ++i) {
    int64_t n = depthwise[i].n, c = depthwise[i].c, h = depthwise[i].h, w = depthwise[i].w;
    int64_t k = depthwise[i].k, pad = depthwise[i].pad, stride = depthwise[i].stride;
    int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    float *input = test_random_array(n * c * h * w);
    float *filter = test_random_array(c * k * k);
    float *bias = test_random_array(c);
    hpvm_rt_tensor_conv2d_f32(input, filter, bias, out + used, n, c, h, w, c, k, k, oh, ow, pad,
                              pad, stride, stride, c, depthwise[i].activation, 0.75);
    used += n * c * oh * ow;
    free(input);
    free(filter);
    free(bias);
  }
  /* Pools: 2 x 2 at stride 2 (8 outputs at a time, a tail; NaNs that max and min keep),
   * 3 x 3 at stride 2 with padding, and over the whole plane, and narrow planes; each kind. */
  for (int64_t kind = HPVM_RT_TENSOR_POOL_MAX; kind <= HPVM_RT_TENSOR_POOL_MEAN; ++kind) {
    int64_t n = 2, c = 3, h = 14, w = 38;
    float *input = test_random_array(n * c * h * w);
    input[5] = input[w * 3 + 17] = __builtin_nanf("");
    hpvm_rt_tensor_pool_f32(input, out + used, kind, n, c, h, w, 2, 2, 2, 2, 0, 0, h / 2, w / 2);
    used += n * c * (h / 2) * (w / 2);
    int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) / 2 + 1;
    hpvm_rt_tensor_pool_f32(input, out + used, kind, n, c, h, w, 3, 3, 2, 2, 1, 1, oh, ow);
    used += n * c * oh * ow;
    /* 3 x 3 at stride 1, padded (inner outputs 8 at a time). */
    hpvm_rt_tensor_pool_f32(input, out + used, kind, n, c, h, w, 3, 3, 1, 1, 1, 1, h, w);
    used += n * c * h * w;
    /* The whole plane (a global pool), NaNs in one plane. */
    hpvm_rt_tensor_pool_f32(input, out + used, kind, n, c, h, w, h, w, 1, 1, 0, 0, 1, 1);
    used += n * c;
    free(input);
    /* Narrow planes (AVX-512: one masked vector a row, edges included): 3 x 3 at stride 1
     * over 7 x 7 and 14 x 13, at stride 2 over 14 x 13 and 9 x 9 (pads 1, 0), 2 x 2 at stride
     * 2 padded, 5 x 5 at stride 1 pad 2; NaNs. */
    int64_t narrow[][7] = {{7, 7, 3, 1, 1, 7, 7},   {14, 13, 3, 1, 1, 14, 13},
                           {14, 13, 3, 2, 1, 7, 7}, {9, 9, 3, 2, 0, 4, 4},
                           {9, 9, 2, 2, 1, 5, 5},   {13, 17, 5, 1, 2, 13, 17}};
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; ++i) {
      int64_t *v = narrow[i];
      float *plane = test_random_array(2 * v[0] * v[1]);
      plane[3] = plane[v[1] * 2 + 6] = __builtin_nanf("");
      hpvm_rt_tensor_pool_f32(plane, out + used, kind, 1, 2, v[0], v[1], v[2], v[2], v[3], v[3],
                              v[4], v[4], v[5], v[6]);
      used += 2 * v[5] * v[6];
      free(plane);
    }
    /* ceil_mode (end padding past the begin padding): 3 x 3 at stride 2 over 28 x 28 and 56
     * x 56, 2 x 2 at stride 2 over 7 x 9 (not the 2 x 2 kernel's), 3 x 3 at stride 1; NaNs.
     * h, w, window, stride, padding, end padding, oh, ow. */
    int64_t ceil[][8] = {{28, 28, 3, 2, 0, 1, 14, 14}, {56, 56, 3, 2, 0, 1, 28, 28},
                         {7, 9, 2, 2, 0, 1, 4, 5},     {14, 13, 3, 1, 1, 2, 15, 14}};
    for (size_t i = 0; i < sizeof ceil / sizeof ceil[0]; ++i) {
      int64_t *v = ceil[i];
      float *plane = test_random_array(2 * v[0] * v[1]);
      plane[v[1] - 1] = plane[(v[0] - 1) * v[1] + 2] = __builtin_nanf("");
      hpvm_rt_tensor_pool_f32(plane, out + used, kind, 1, 2, v[0], v[1], v[2], v[2], v[3], v[3],
                              v[4], v[4], v[6], v[7]);
      used += 2 * v[6] * v[7];
      free(plane);
    }
    /* Ties and NaNs: values from {+0, -0, 1, -1} and a few NaNs of two payloads, so that
     * which of the tied elements a window keeps (the first in the order of rows and then
     * columns) and which NaN (the last) show in the bits (AVX-512 goes row by row). Planes
     * of 3 vectors and a rest, strides 1, 2 and 3, 3 x 3, 5 x 4 and 4 x 5 windows. */
    uint32_t bits[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7fc00001u,
                       0xffc00002u};
    int64_t tied[][7] = {{9, 41, 3, 3, 1, 1, 1}, {11, 40, 3, 3, 2, 2, 1}, {12, 37, 5, 4, 1, 2, 2},
                         {10, 50, 3, 3, 3, 2, 0}, {5, 20, 4, 5, 1, 1, 0}};
    uint32_t state = 12345u;
    for (size_t i = 0; kind != HPVM_RT_TENSOR_POOL_MEAN && i < sizeof tied / sizeof tied[0];
         ++i) {
      int64_t *v = tied[i];
      float *plane = test_random_array(2 * v[0] * v[1]);
      for (int64_t e = 0; e < 2 * v[0] * v[1]; ++e) {
        state = state * 1664525u + 1013904223u;
        uint32_t pick = bits[(state >> 8) % 4u];
        if ((state >> 20) % 61u == 0)
          pick = bits[4 + (state >> 12) % 2u];
        memcpy(&plane[e], &pick, sizeof pick);
      }
      int64_t oh = (v[0] + 2 * v[6] - v[2]) / v[4] + 1, ow = (v[1] + 2 * v[6] - v[3]) / v[5] + 1;
      hpvm_rt_tensor_pool_f32(plane, out + used, kind, 1, 2, v[0], v[1], v[2], v[3], v[4], v[5],
                              v[6], v[6], oh, ow);
      used += 2 * oh * ow;
      free(plane);
    }
  }
  /* Products with partial micro-tiles and a batch. */
  int64_t batch = 2, m = 37, n = 53, k = 301;
  float *a = test_random_array(batch * m * k), *b = test_random_array(batch * k * n);
  float *bias = test_random_array(n);
  hpvm_rt_tensor_matmul_f32(a, b, bias, out + used, batch, m, n, k, HPVM_RT_TENSOR_RELU, 0);
  used += batch * m * n;
  free(a);
  free(b);
  free(bias);
  CHECK(used <= kFloats);
  return used;
}

/* The outputs with HPVM_TENSOR_ISA=isa (NULL: the default), from a child process. */
static float *run_isa(const char *isa, int64_t *count) {
  char path[] = "/tmp/hpvm-tensor-isa-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (isa)
      setenv("HPVM_TENSOR_ISA", isa, 1);
    float *out = calloc(kFloats, sizeof(float));
    int64_t used = compute(out);
    ssize_t bytes = (ssize_t)(used * (int64_t)sizeof(float));
    _exit(write(fd, out, (size_t)bytes) == bytes ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  off_t size = lseek(fd, 0, SEEK_END);
  float *out = malloc((size_t)size);
  CHECK(pread(fd, out, (size_t)size, 0) == size);
  close(fd);
  unlink(path);
  *count = (int64_t)size / (int64_t)sizeof(float);
  return out;
}

int main(void) {
  int64_t n_default, n_avx2, n_generic, n_named, n_typo;
  float *wide = run_isa(NULL, &n_default);
  /* avx512 names the default; an unknown name warns (on stderr) and means the default too. */
  float *named = run_isa("avx512", &n_named);
  float *typo = run_isa("avx-512", &n_typo);
  CHECK_EQ_INT(n_named, n_default);
  CHECK_EQ_INT(n_typo, n_default);
  CHECK(memcmp(wide, named, (size_t)n_default * sizeof(float)) == 0);
  CHECK(memcmp(wide, typo, (size_t)n_default * sizeof(float)) == 0);
  free(named);
  free(typo);
  float *avx2 = run_isa("avx2", &n_avx2);
  float *generic = run_isa("generic", &n_generic);
  CHECK_EQ_INT(n_default, n_avx2);
  CHECK_EQ_INT(n_default, n_generic);
  CHECK(memcmp(wide, avx2, (size_t)n_default * sizeof(float)) == 0);
  int64_t far = 0;
  for (int64_t i = 0; i < n_default; ++i) {
    if (wide[i] != wide[i] || generic[i] != generic[i]) {
      far += (wide[i] != wide[i]) != (generic[i] != generic[i]); /* NaN in both or neither */
      continue;
    }
    float d = wide[i] - generic[i], scale = wide[i] < 0 ? -wide[i] : wide[i];
    far += (d < 0 ? -d : d) > 1e-4f * (scale > 1 ? scale : 1);
  }
  CHECK_EQ_INT(far, 0);
  printf("tensor_isa_test: %lld outputs, the default ISA%s equal to AVX2 bit for bit\n",
         (long long)n_default, __builtin_cpu_supports("avx512f") ? " (AVX-512)" : "");
  free(wide);
  free(avx2);
  free(generic);
  return 0;
}
