// A residual block written as the release's resnet programs write it: every
// node names itself with __hpvm__node_id, and the output of the first relu
// feeds two nodes (the second convolution and the skip add) through two
// __hpvm__edge calls from one output port.
//
//   conv1 -> relu1 -+-> conv2 -> add -> relu2
//                   +-----------^
//
// main compares the result with a plain C reference (relative 1e-5).
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  void *tensor;
  size_t bytes;
} ret_t;

void conv1_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(1);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  __hpvm__tensor_shape(t2, 4, 2, 2, 3, 3);
  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void relu1_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(2);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void conv2_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(3);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  __hpvm__tensor_shape(t2, 4, 2, 2, 3, 3);
  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void add_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(4);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  __hpvm__tensor_shape(t2, 4, 1, 2, 6, 6);
  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void relu2_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(CUDNN_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(5);
  __hpvm__tensor_shape(t1, 4, 1, 2, 6, 6);
  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void root(void *input, size_t input_bytes, void *w1, size_t w1_bytes, void *w2,
          size_t w2_bytes) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, input, w1, w2, 0);
  __hpvm__node_id(6);
  void *c1 = __hpvm__createNodeND(0, conv1_node);
  __hpvm__bindIn(c1, 0, 0, 0);
  __hpvm__bindIn(c1, 1, 1, 0);
  __hpvm__bindIn(c1, 2, 2, 0);
  __hpvm__bindIn(c1, 3, 3, 0);
  void *r1 = __hpvm__createNodeND(0, relu1_node);
  __hpvm__edge(c1, r1, 1, 0, 0, 0);
  __hpvm__edge(c1, r1, 1, 1, 1, 0);
  void *c2 = __hpvm__createNodeND(0, conv2_node);
  __hpvm__edge(r1, c2, 1, 0, 0, 0);
  __hpvm__edge(r1, c2, 1, 1, 1, 0);
  __hpvm__bindIn(c2, 4, 2, 0);
  __hpvm__bindIn(c2, 5, 3, 0);
  void *a = __hpvm__createNodeND(0, add_node);
  __hpvm__edge(c2, a, 1, 0, 0, 0);
  __hpvm__edge(c2, a, 1, 1, 1, 0);
  /* The skip connection: relu1's output port 0 (and 1) again. */
  __hpvm__edge(r1, a, 1, 0, 2, 0);
  __hpvm__edge(r1, a, 1, 1, 3, 0);
  void *r2 = __hpvm__createNodeND(0, relu2_node);
  __hpvm__edge(a, r2, 1, 0, 0, 0);
  __hpvm__edge(a, r2, 1, 1, 1, 0);
  __hpvm__bindOut(r2, 0, 0, 0);
  __hpvm__bindOut(r2, 1, 1, 0);
}

typedef struct __attribute__((__packed__)) {
  void *input;
  size_t input_bytes;
  void *w1;
  size_t w1_bytes;
  void *w2;
  size_t w2_bytes;
  ret_t r;
} RootIn;

/* 3x3 convolution, padding 1, 2 channels in and out, on 6x6 images. */
static void conv_ref(const float *in, const float *w, float *out) {
  for (int f = 0; f < 2; ++f)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 6; ++x) {
        float s = 0;
        for (int c = 0; c < 2; ++c)
          for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx) {
              int yy = y + dy - 1, xx = x + dx - 1;
              if (yy >= 0 && yy < 6 && xx >= 0 && xx < 6)
                s += in[(c * 6 + yy) * 6 + xx] * w[((f * 2 + c) * 3 + dy) * 3 + dx];
            }
        out[(f * 6 + y) * 6 + x] = s;
      }
}

int main(void) {
  float input[72], w1[36], w2[36], c1[72], r1[72], c2[72], expect[72];
  for (int i = 0; i < 72; ++i)
    input[i] = (float)((i * 7) % 11) - 5.0f;
  for (int i = 0; i < 36; ++i) {
    w1[i] = (float)((i * 5) % 7) / 7.0f - 0.4f;
    w2[i] = (float)((i * 3) % 5) / 5.0f - 0.3f;
  }
  RootIn *args = malloc(sizeof(RootIn));
  args->input = input;
  args->input_bytes = sizeof(input);
  args->w1 = w1;
  args->w1_bytes = sizeof(w1);
  args->w2 = w2;
  args->w2_bytes = sizeof(w2);
  void *dfg = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(dfg);
  float *result = args->r.tensor;

  conv_ref(input, w1, c1);
  for (int i = 0; i < 72; ++i)
    r1[i] = c1[i] > 0 ? c1[i] : 0;
  conv_ref(r1, w2, c2);
  long wrong = 0;
  double sum = 0;
  for (int i = 0; i < 72; ++i) {
    float v = c2[i] + r1[i];
    expect[i] = v > 0 ? v : 0;
    wrong += fabsf(result[i] - expect[i]) > 1e-5f * fmaxf(1.0f, fabsf(expect[i]));
    sum += result[i];
  }
  printf("tensor_residual: sum=%.4f wrong=%ld\n", sum, wrong);
  free(result);
  free(args);
  return wrong != 0;
}
