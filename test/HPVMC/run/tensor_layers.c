// An ApproxHPVM-style tensor program: leaves take (void *tensor, size_t bytes)
// pairs, list their tensors in __hpvm__attributes, call one tensor intrinsic
// and return (tensor, 0); the root binds and connects the pairs. The only
// edit to the ApproxHPVM form is one __hpvm__tensor_shape per tensor
// parameter of a leaf, and plain float arrays on the host instead of the
// tensor runtime's objects.
//
//   conv (padded) -> add (bias) -> relu -> pool_max      (features)
//   mul -> add (bias) -> softmax                          (classes)
//   batchnorm -> tanh -> depthwise conv -> pool_mean      (normalized)
//
// main compares each result with a plain C reference (relative 1e-5).
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  void *tensor;
  size_t bytes;
} ret_t;

void conv_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, 1, 8, 8);
  __hpvm__tensor_shape(t2, 4, 4, 1, 3, 3);
  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void bias_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 4, 1, 4, 8, 8);
  __hpvm__tensor_shape(t2, 4, 1, 4, 1, 1);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void relu_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, 4, 8, 8);
  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void pool_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 4, 1, 4, 8, 8);
  void *r = __hpvm__tensor_pool_max(t1, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

void dense_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 2, 2, 16);
  __hpvm__tensor_shape(t2, 2, 16, 10);
  void *r = __hpvm__tensor_mul(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void dense_bias_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__tensor_shape(t1, 2, 2, 10);
  __hpvm__tensor_shape(t2, 2, 1, 10);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void softmax_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__tensor_shape(t1, 2, 2, 10);
  void *r = __hpvm__tensor_softmax(t1);
  __hpvm__return(2, r, (size_t)0);
}

// Several intrinsics in one leaf (what hpvm-fuse-tensor-nodes would make).
void norm_node(void *t1, size_t bytes_t1, void *gamma, size_t bytes_gamma, void *beta,
               size_t bytes_beta, void *mean, size_t bytes_mean, void *var,
               size_t bytes_var, void *dw, size_t bytes_dw) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(6, t1, gamma, beta, mean, var, dw, 0);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  __hpvm__tensor_shape(gamma, 1, 2);
  __hpvm__tensor_shape(beta, 1, 2);
  __hpvm__tensor_shape(mean, 1, 2);
  __hpvm__tensor_shape(var, 1, 2);
  __hpvm__tensor_shape(dw, 4, 2, 1, 3, 3);
  void *n = __hpvm__tensor_batchnorm(t1, gamma, beta, mean, var, 0.001);
  void *t = __hpvm__tensor_tanh(n);
  void *c = __hpvm__tensor_group_convolution(t, dw, 0, 0, 1, 1, 1, 2);
  void *r = __hpvm__tensor_pool_mean(c, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

typedef struct __attribute__((__packed__)) {
  void *features;
  size_t features_bytes;
  void *classes;
  size_t classes_bytes;
  void *normalized;
  size_t normalized_bytes;
} RootOut;

void root(void *x, size_t x_bytes, void *w, size_t w_bytes, void *b, size_t b_bytes,
          void *f, size_t f_bytes, void *m, size_t m_bytes, void *mb, size_t mb_bytes,
          void *y, size_t y_bytes, void *gamma, size_t gamma_bytes, void *beta,
          size_t beta_bytes, void *mean, size_t mean_bytes, void *var, size_t var_bytes,
          void *dw, size_t dw_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(12, x, w, b, f, m, mb, y, gamma, beta, mean, var, dw, 0);

  void *conv = __hpvm__createNodeND(0, conv_node);
  void *bias = __hpvm__createNodeND(0, bias_node);
  void *relu = __hpvm__createNodeND(0, relu_node);
  void *pool = __hpvm__createNodeND(0, pool_node);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(conv, i, i, 0);
  __hpvm__edge(conv, bias, 1, 0, 0, 0);
  __hpvm__edge(conv, bias, 1, 1, 1, 0);
  __hpvm__bindIn(bias, 4, 2, 0);
  __hpvm__bindIn(bias, 5, 3, 0);
  __hpvm__edge(bias, relu, 1, 0, 0, 0);
  __hpvm__edge(bias, relu, 1, 1, 1, 0);
  __hpvm__edge(relu, pool, 1, 0, 0, 0);
  __hpvm__edge(relu, pool, 1, 1, 1, 0);
  __hpvm__bindOut(pool, 0, 0, 0);
  __hpvm__bindOut(pool, 1, 1, 0);

  void *dense = __hpvm__createNodeND(0, dense_node);
  void *dense_bias = __hpvm__createNodeND(0, dense_bias_node);
  void *softmax = __hpvm__createNodeND(0, softmax_node);
  for (int i = 0; i < 4; ++i)
    __hpvm__bindIn(dense, 6 + i, i, 0);
  __hpvm__edge(dense, dense_bias, 1, 0, 0, 0);
  __hpvm__edge(dense, dense_bias, 1, 1, 1, 0);
  __hpvm__bindIn(dense_bias, 10, 2, 0);
  __hpvm__bindIn(dense_bias, 11, 3, 0);
  __hpvm__edge(dense_bias, softmax, 1, 0, 0, 0);
  __hpvm__edge(dense_bias, softmax, 1, 1, 1, 0);
  __hpvm__bindOut(softmax, 0, 2, 0);
  __hpvm__bindOut(softmax, 1, 3, 0);

  void *norm = __hpvm__createNodeND(0, norm_node);
  for (int i = 0; i < 12; ++i)
    __hpvm__bindIn(norm, 12 + i, i, 0);
  __hpvm__bindOut(norm, 0, 4, 0);
  __hpvm__bindOut(norm, 1, 5, 0);
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
  void *gamma;
  size_t gamma_bytes;
  void *beta;
  size_t beta_bytes;
  void *mean;
  size_t mean_bytes;
  void *var;
  size_t var_bytes;
  void *dw;
  size_t dw_bytes;
  RootOut r;
} RootIn;

static float x[1][1][8][8], w[4][1][3][3], b[4], f[2][16], m[16][10], mb[10];
static float y[1][2][6][6], gamma_[2], beta_[2], mean_[2], var_[2], dw[2][1][3][3];

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
  unsigned state = 7;
  float *all[] = {&x[0][0][0][0], &w[0][0][0][0], b,      &f[0][0],  &m[0][0],
                  mb,             &y[0][0][0][0], gamma_, beta_,     mean_,
                  var_,           &dw[0][0][0][0]};
  int sizes[] = {64, 36, 4, 32, 160, 10, 72, 2, 2, 2, 2, 18};
  for (int k = 0; k < 12; ++k)
    for (int i = 0; i < sizes[k]; ++i)
      all[k][i] = value(&state);
  var_[0] = 0.5f, var_[1] = 2.0f;

  // References.
  float features[4][4][4], classes[2][10], normalized[2][2][2];
  float conv[4][8][8];
  for (int o = 0; o < 4; ++o)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        float s = 0.0f;
        for (int di = 0; di < 3; ++di)
          for (int dj = 0; dj < 3; ++dj) {
            int ii = i + di - 1, jj = j + dj - 1;
            if (ii >= 0 && ii < 8 && jj >= 0 && jj < 8)
              s += x[0][0][ii][jj] * w[o][0][di][dj];
          }
        s += b[o];
        conv[o][i][j] = s > 0.0f ? s : 0.0f;
      }
  for (int o = 0; o < 4; ++o)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float v = conv[o][2 * i][2 * j];
        v = fmaxf(v, conv[o][2 * i][2 * j + 1]);
        v = fmaxf(v, conv[o][2 * i + 1][2 * j]);
        features[o][i][j] = fmaxf(v, conv[o][2 * i + 1][2 * j + 1]);
      }
  for (int r = 0; r < 2; ++r) {
    float big = -INFINITY, total = 0.0f;
    for (int c = 0; c < 10; ++c) {
      float s = 0.0f;
      for (int k = 0; k < 16; ++k)
        s += f[r][k] * m[k][c];
      classes[r][c] = s + mb[c];
      big = fmaxf(big, classes[r][c]);
    }
    for (int c = 0; c < 10; ++c)
      total += classes[r][c] = expf(classes[r][c] - big);
    for (int c = 0; c < 10; ++c)
      classes[r][c] /= total;
  }
  float squashed[2][6][6], depthwise[2][4][4];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        squashed[c][i][j] = tanhf(gamma_[c] * (y[0][c][i][j] - mean_[c]) /
                                      sqrtf(var_[c] + 0.001f) +
                                  beta_[c]);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float s = 0.0f;
        for (int di = 0; di < 3; ++di)
          for (int dj = 0; dj < 3; ++dj)
            s += squashed[c][i + di][j + dj] * dw[c][0][di][dj];
        depthwise[c][i][j] = s;
      }
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        normalized[c][i][j] = (depthwise[c][2 * i][2 * j] + depthwise[c][2 * i][2 * j + 1] +
                               depthwise[c][2 * i + 1][2 * j] +
                               depthwise[c][2 * i + 1][2 * j + 1]) /
                              4.0f;

  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  args->x = x, args->w = w, args->b = b, args->f = f, args->m = m, args->mb = mb;
  args->y = y, args->gamma = gamma_, args->beta = beta_, args->mean = mean_;
  args->var = var_, args->dw = dw;
  args->x_bytes = sizeof x, args->w_bytes = sizeof w, args->b_bytes = sizeof b;
  args->f_bytes = sizeof f, args->m_bytes = sizeof m, args->mb_bytes = sizeof mb;
  args->y_bytes = sizeof y, args->gamma_bytes = sizeof gamma_;
  args->beta_bytes = sizeof beta_, args->mean_bytes = sizeof mean_;
  args->var_bytes = sizeof var_, args->dw_bytes = sizeof dw;
  for (int launch = 0; launch < 2; ++launch) {
    void *dfg = __hpvm__launch(0, root, (void *)args);
    __hpvm__wait(dfg);
    compare("features", (float *)args->r.features, &features[0][0][0], 64);
    compare("classes", (float *)args->r.classes, &classes[0][0], 20);
    compare("normalized", (float *)args->r.normalized, &normalized[0][0][0], 8);
    float sum = 0.0f;
    for (int i = 0; i < 64; ++i)
      sum += ((float *)args->r.features)[i];
    printf("tensor_layers: launch=%d features_sum=%.4f class0=%.4f normalized0=%.4f "
           "bytes=%zu,%zu,%zu\n",
           launch, sum, ((float *)args->r.classes)[0],
           ((float *)args->r.normalized)[0], args->r.features_bytes,
           args->r.classes_bytes, args->r.normalized_bytes);
    free(args->r.features);
    free(args->r.classes);
    free(args->r.normalized);
  }
  printf("tensor_layers: wrong=%d\n", wrong);
  free(args);
  return wrong != 0;
}
