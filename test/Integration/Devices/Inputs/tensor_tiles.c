// Two VGG-style layers as ApproxHPVM's HPVM-C writes them, one tensor op per node, which
// hpvm-cc fuses into one leaf per layer (tensor-tiles.test):
//
//   conv 8->64 (3x3, padded) -> add (bias) -> relu -> max pool 2x2        (layer 1)
//   conv 64->48 (3x3, padded) -> add (bias) -> tanh -> mean pool 3x3,
//     stride 2, padded (overlapping windows)                             (layer 2)
//
// On a device each layer is one kernel: with -fhpvm-tensor-tiles=always a tiled
// convolution whose tiles fold the pool, with =never one thread per pooled element.
// main compares both layers with a plain C reference (relative 1e-4) and prints a summary
// that is the same on every device and build; stderr gets a hash of the results' bits
// (the tiled and per-element kernels sum in the same order).
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C0 8
#define H0 20
#define F1 64
#define H1 10
#define F2 48
#define H2 5

void conv1_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, C0, H0, H0);
  __hpvm__tensor_shape(t2, 4, F1, C0, 3, 3);
  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void bias1_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, F1, H0, H0);
  __hpvm__tensor_shape(t2, 4, 1, F1, 1, 1);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void relu1_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, F1, H0, H0);
  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void pool1_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, F1, H0, H0);
  void *r = __hpvm__tensor_pool_max(t1, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

void conv2_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, F1, H1, H1);
  __hpvm__tensor_shape(t2, 4, F2, F1, 3, 3);
  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void bias2_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, F2, H1, H1);
  __hpvm__tensor_shape(t2, 4, 1, F2, 1, 1);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void tanh2_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, F2, H1, H1);
  void *r = __hpvm__tensor_tanh(t1);
  __hpvm__return(2, r, (size_t)0);
}

void pool2_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, F2, H1, H1);
  void *r = __hpvm__tensor_pool_mean(t1, 3, 3, 1, 1, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

typedef struct __attribute__((__packed__)) {
  void *first;
  size_t first_bytes;
  void *second;
  size_t second_bytes;
} RootOut;

/* The edges of a chain conv -> bias -> act -> pool (tensor and size each). */
static void layer(void *conv, void *bias, void *act, void *pool) {
  __hpvm__edge(conv, bias, 1, 0, 0, 0);
  __hpvm__edge(conv, bias, 1, 1, 1, 0);
  __hpvm__edge(bias, act, 1, 0, 0, 0);
  __hpvm__edge(bias, act, 1, 1, 1, 0);
  __hpvm__edge(act, pool, 1, 0, 0, 0);
  __hpvm__edge(act, pool, 1, 1, 1, 0);
}

void root(void *x, size_t x_bytes, void *w1, size_t w1_bytes, void *b1, size_t b1_bytes,
          void *w2, size_t w2_bytes, void *b2, size_t b2_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(5, x, w1, b1, w2, b2, 0);
  void *conv1 = __hpvm__createNodeND(0, conv1_node);
  void *bias1 = __hpvm__createNodeND(0, bias1_node);
  void *relu1 = __hpvm__createNodeND(0, relu1_node);
  void *pool1 = __hpvm__createNodeND(0, pool1_node);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(conv1, i, i, 0);
  __hpvm__bindIn(bias1, 4, 2, 0);
  __hpvm__bindIn(bias1, 5, 3, 0);
  layer(conv1, bias1, relu1, pool1);

  void *conv2 = __hpvm__createNodeND(0, conv2_node);
  void *bias2 = __hpvm__createNodeND(0, bias2_node);
  void *tanh2 = __hpvm__createNodeND(0, tanh2_node);
  void *pool2 = __hpvm__createNodeND(0, pool2_node);
  __hpvm__edge(pool1, conv2, 1, 0, 0, 0);
  __hpvm__edge(pool1, conv2, 1, 1, 1, 0);
  __hpvm__bindIn(conv2, 6, 2, 0);
  __hpvm__bindIn(conv2, 7, 3, 0);
  __hpvm__bindIn(bias2, 8, 2, 0);
  __hpvm__bindIn(bias2, 9, 3, 0);
  layer(conv2, bias2, tanh2, pool2);
  __hpvm__bindOut(pool2, 0, 2, 0);
  __hpvm__bindOut(pool2, 1, 3, 0);
  __hpvm__bindOut(pool1, 0, 0, 0);
  __hpvm__bindOut(pool1, 1, 1, 0);
}

typedef struct __attribute__((__packed__)) {
  void *x;
  size_t x_bytes;
  void *w1;
  size_t w1_bytes;
  void *b1;
  size_t b1_bytes;
  void *w2;
  size_t w2_bytes;
  void *b2;
  size_t b2_bytes;
  RootOut r;
} RootIn;

static float x[C0][H0][H0], w1[F1][C0][3][3], b1[F1], w2[F2][F1][3][3], b2[F2];
static float first[F1][H1][H1], second[F2][H2][H2];

static float value(unsigned *state, float scale) {
  *state = *state * 1103515245u + 12345u;
  return ((float)((*state >> 8) % 2001) / 1000.0f - 1.0f) * scale;
}

/* conv (3x3, padding 1, stride 1) of `in` [c][h][h] with `w` [f][c][3][3] plus `b`, at (o, i, j). */
static double conv_at(const float *in, int c, int h, const float *w, const float *b, int o,
                      int i, int j) {
  double s = b[o];
  for (int k = 0; k < c; ++k)
    for (int di = 0; di < 3; ++di)
      for (int dj = 0; dj < 3; ++dj) {
        int ii = i + di - 1, jj = j + dj - 1;
        if (ii >= 0 && ii < h && jj >= 0 && jj < h)
          s += (double)in[(k * h + ii) * h + jj] * w[((o * c + k) * 3 + di) * 3 + dj];
      }
  return s;
}

static int wrong = 0;
static void compare(const char *what, const float *got, const float *want, int n) {
  for (int i = 0; i < n; ++i)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f * fmaxf(1.0f, fabsf(want[i])))) {
      if (wrong < 10)
        printf("%s[%d] = %f, expected %f\n", what, i, got[i], want[i]);
      ++wrong;
    }
}

static unsigned bits(const float *v, int n) {
  unsigned h = 0;
  for (int i = 0; i < n; ++i) {
    unsigned u;
    memcpy(&u, &v[i], sizeof u);
    h = h * 31u + u;
  }
  return h;
}

int main(void) {
  unsigned state = 7;
  for (int i = 0; i < C0 * H0 * H0; ++i)
    (&x[0][0][0])[i] = value(&state, 1.0f);
  for (int i = 0; i < F1 * C0 * 9; ++i)
    (&w1[0][0][0][0])[i] = value(&state, 0.12f);
  for (int i = 0; i < F1; ++i)
    b1[i] = value(&state, 0.1f);
  for (int i = 0; i < F2 * F1 * 9; ++i)
    (&w2[0][0][0][0])[i] = value(&state, 0.04f);
  for (int i = 0; i < F2; ++i)
    b2[i] = value(&state, 0.1f);

  // References: relu then the 2x2 max pool; tanh then the padded 3x3 mean pool (the
  // padding counted in the window, as the runtime's kernels do).
  static float act1[F1][H0][H0], want1[F1][H1][H1], act2[F2][H1][H1], want2[F2][H2][H2];
  for (int o = 0; o < F1; ++o)
    for (int i = 0; i < H0; ++i)
      for (int j = 0; j < H0; ++j) {
        double s = conv_at(&x[0][0][0], C0, H0, &w1[0][0][0][0], b1, o, i, j);
        act1[o][i][j] = s > 0.0 ? (float)s : 0.0f;
      }
  for (int o = 0; o < F1; ++o)
    for (int i = 0; i < H1; ++i)
      for (int j = 0; j < H1; ++j)
        want1[o][i][j] = fmaxf(fmaxf(act1[o][2 * i][2 * j], act1[o][2 * i][2 * j + 1]),
                               fmaxf(act1[o][2 * i + 1][2 * j], act1[o][2 * i + 1][2 * j + 1]));
  for (int o = 0; o < F2; ++o)
    for (int i = 0; i < H1; ++i)
      for (int j = 0; j < H1; ++j)
        act2[o][i][j] =
            tanhf((float)conv_at(&want1[0][0][0], F1, H1, &w2[0][0][0][0], b2, o, i, j));
  for (int o = 0; o < F2; ++o)
    for (int i = 0; i < H2; ++i)
      for (int j = 0; j < H2; ++j) {
        double s = 0.0;
        for (int di = 0; di < 3; ++di)
          for (int dj = 0; dj < 3; ++dj) {
            int ii = 2 * i + di - 1, jj = 2 * j + dj - 1;
            if (ii >= 0 && ii < H1 && jj >= 0 && jj < H1)
              s += act2[o][ii][jj];
          }
        want2[o][i][j] = (float)(s / 9.0);
      }

  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  args->x = x, args->w1 = w1, args->b1 = b1, args->w2 = w2, args->b2 = b2;
  args->x_bytes = sizeof x, args->w1_bytes = sizeof w1, args->b1_bytes = sizeof b1;
  args->w2_bytes = sizeof w2, args->b2_bytes = sizeof b2;
  void *graph = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(graph);
  memcpy(first, args->r.first, sizeof first);
  memcpy(second, args->r.second, sizeof second);
  free(args->r.first);
  free(args->r.second);
  free(args);
  compare("layer1", &first[0][0][0], &want1[0][0][0], F1 * H1 * H1);
  compare("layer2", &second[0][0][0], &want2[0][0][0], F2 * H2 * H2);
  printf("tensor_tiles: layer 1 %dx%dx%d, layer 2 %dx%dx%d: %s\n", F1, H1, H1, F2, H2, H2,
         wrong ? "WRONG" : "within 1e-4 of the reference");
  fprintf(stderr, "tensor_tiles bits: %08x %08x\n", bits(&first[0][0][0], F1 * H1 * H1),
          bits(&second[0][0][0], F2 * H2 * H2));
  return wrong != 0;
}
