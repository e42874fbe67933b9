// Tensor nodes that are one cuDNN / cuBLAS call each after hpvm-cc's fusion
// (tensor-libraries.test):
//
//   group conv (padded, strided) -> add (bias) -> relu   (features: cuDNN)
//   mul -> add (bias) -> tanh                            (classes: cuBLAS + cuDNN)
//   pool_max                                             (pooled: a generated kernel)
//
// main compares each result with a plain C reference (relative 1e-5) and
// prints a summary that is the same on every device.
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void conv_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, 4, 8, 8);
  __hpvm__tensor_shape(t2, 4, 6, 2, 3, 3);
  void *r = __hpvm__tensor_group_convolution(t1, t2, 1, 1, 2, 2, 1, 2);
  __hpvm__return(2, r, (size_t)0);
}

void bias_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, 6, 4, 4);
  __hpvm__tensor_shape(t2, 4, 1, 6, 1, 1);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void relu_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, 6, 4, 4);
  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void dense_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 2, 3, 16);
  __hpvm__tensor_shape(t2, 2, 16, 10);
  void *r = __hpvm__tensor_mul(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void dense_bias_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 2, 3, 10);
  __hpvm__tensor_shape(t2, 2, 1, 10);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void tanh_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 2, 3, 10);
  void *r = __hpvm__tensor_tanh(t1);
  __hpvm__return(2, r, (size_t)0);
}

void pool_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  void *r = __hpvm__tensor_pool_max(t1, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

typedef struct __attribute__((__packed__)) {
  void *features;
  size_t features_bytes;
  void *classes;
  size_t classes_bytes;
  void *pooled;
  size_t pooled_bytes;
} RootOut;

void root(void *x, size_t x_bytes, void *w, size_t w_bytes, void *b, size_t b_bytes,
          void *f, size_t f_bytes, void *m, size_t m_bytes, void *mb, size_t mb_bytes,
          void *y, size_t y_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(7, x, w, b, f, m, mb, y, 0);

  void *conv = __hpvm__createNodeND(0, conv_node);
  void *bias = __hpvm__createNodeND(0, bias_node);
  void *relu = __hpvm__createNodeND(0, relu_node);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(conv, i, i, 0);
  __hpvm__edge(conv, bias, 1, 0, 0, 0);
  __hpvm__edge(conv, bias, 1, 1, 1, 0);
  __hpvm__bindIn(bias, 4, 2, 0);
  __hpvm__bindIn(bias, 5, 3, 0);
  __hpvm__edge(bias, relu, 1, 0, 0, 0);
  __hpvm__edge(bias, relu, 1, 1, 1, 0);
  __hpvm__bindOut(relu, 0, 0, 0);
  __hpvm__bindOut(relu, 1, 1, 0);

  void *dense = __hpvm__createNodeND(0, dense_node);
  void *dense_bias = __hpvm__createNodeND(0, dense_bias_node);
  void *squash = __hpvm__createNodeND(0, tanh_node);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(dense, 6 + i, i, 0);
  __hpvm__edge(dense, dense_bias, 1, 0, 0, 0);
  __hpvm__edge(dense, dense_bias, 1, 1, 1, 0);
  __hpvm__bindIn(dense_bias, 10, 2, 0);
  __hpvm__bindIn(dense_bias, 11, 3, 0);
  __hpvm__edge(dense_bias, squash, 1, 0, 0, 0);
  __hpvm__edge(dense_bias, squash, 1, 1, 1, 0);
  __hpvm__bindOut(squash, 0, 2, 0);
  __hpvm__bindOut(squash, 1, 3, 0);

  void *pool = __hpvm__createNodeND(0, pool_node);
  __hpvm__bindIn(pool, 12, 0, 0);
  __hpvm__bindIn(pool, 13, 1, 0);
  __hpvm__bindOut(pool, 0, 4, 0);
  __hpvm__bindOut(pool, 1, 5, 0);
}

typedef struct __attribute__((__packed__)) {
  void *x;
  size_t x_bytes;
  void *w;
  size_t w_bytes;
  void *b;
  size_t b_bytes;
  void *f;
  size_t f_bytes;
  void *m;
  size_t m_bytes;
  void *mb;
  size_t mb_bytes;
  void *y;
  size_t y_bytes;
  RootOut r;
} RootIn;

static float x[1][4][8][8], w[6][2][3][3], b[6], f[3][16], m[16][10], mb[10], y[1][2][6][6];

static float value(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) % 2001) / 1000.0f - 1.0f;
}

static int wrong = 0;
static void compare(const char *what, const float *got, const float *want, int n) {
  for (int i = 0; i < n; ++i)
    if (fabsf(got[i] - want[i]) > 1e-5f * fmaxf(1.0f, fabsf(want[i]))) {
      if (wrong < 10)
        printf("%s[%d] = %f, expected %f\n", what, i, got[i], want[i]);
      ++wrong;
    }
}

int main(void) {
  unsigned state = 11;
  float *all[] = {&x[0][0][0][0], &w[0][0][0][0], b, &f[0][0], &m[0][0], mb, &y[0][0][0][0]};
  int sizes[] = {256, 108, 6, 48, 160, 10, 72};
  for (int k = 0; k < 7; ++k)
    for (int i = 0; i < sizes[k]; ++i)
      all[k][i] = value(&state);

  // References: the group convolution (channels 0-1 make filters 0-2,
  // channels 2-3 filters 3-5), the dense layer, the pool.
  float features[6][4][4], classes[3][10], pooled[2][3][3];
  for (int o = 0; o < 6; ++o)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double s = b[o];
        for (int c = 0; c < 2; ++c)
          for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj) {
              int ii = 2 * i + di - 1, jj = 2 * j + dj - 1;
              if (ii >= 0 && ii < 8 && jj >= 0 && jj < 8)
                s += (double)x[0][(o / 3) * 2 + c][ii][jj] * w[o][c][di][dj];
            }
        features[o][i][j] = s > 0.0 ? (float)s : 0.0f;
      }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 10; ++c) {
      double s = mb[c];
      for (int k = 0; k < 16; ++k)
        s += (double)f[r][k] * m[k][c];
      classes[r][c] = tanhf((float)s);
    }
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        pooled[c][i][j] = fmaxf(fmaxf(y[0][c][2 * i][2 * j], y[0][c][2 * i][2 * j + 1]),
                                fmaxf(y[0][c][2 * i + 1][2 * j], y[0][c][2 * i + 1][2 * j + 1]));

  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  args->x = x, args->w = w, args->b = b, args->f = f, args->m = m, args->mb = mb, args->y = y;
  args->x_bytes = sizeof x, args->w_bytes = sizeof w, args->b_bytes = sizeof b;
  args->f_bytes = sizeof f, args->m_bytes = sizeof m, args->mb_bytes = sizeof mb;
  args->y_bytes = sizeof y;
  for (int launch = 0; launch < 2; ++launch) {
    void *dfg = __hpvm__launch(0, root, (void *)args);
    __hpvm__wait(dfg);
    compare("features", (float *)args->r.features, &features[0][0][0], 96);
    compare("classes", (float *)args->r.classes, &classes[0][0], 30);
    compare("pooled", (float *)args->r.pooled, &pooled[0][0][0], 18);
    float sum = 0.0f;
    for (int i = 0; i < 96; ++i)
      sum += ((float *)args->r.features)[i];
    printf("tensor_libraries: launch=%d features_sum=%.3f class0=%.4f pooled0=%.4f "
           "bytes=%zu,%zu,%zu\n",
           launch, sum, ((float *)args->r.classes)[0], ((float *)args->r.pooled)[0],
           args->r.features_bytes, args->r.classes_bytes, args->r.pooled_bytes);
    free(args->r.features);
    free(args->r.classes);
    free(args->r.pooled);
  }
  printf("tensor_libraries: wrong=%d\n", wrong);
  free(args);
  return wrong != 0;
}
