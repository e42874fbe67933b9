// A small DNN written as ApproxHPVM's release DNN programs are
// (hpvm/test/dnn_benchmarks/hpvm-c/benchmarks/*/*.cpp): C++, <hpvm.h>,
// <tensorUtils.h> and <config.h>, one tensor intrinsic per node function, no
// __hpvm__tensor_shape (the compiler infers every shape from main's
// constant-size tensor calls), (tensor, bytes) pairs on every edge and bind,
// __hpvm__node_id in every node, and the release's batch loop in main
// (readInputBatch, launch, hpvm_request_tensor, llvm_hpvm_invokeRtControl,
// freeBatchMemory). Instead of MODEL_PARAMS_DIR, main writes seeded weights,
// inputs and labels in the release's format (raw float32, uint32 labels) into
// a fresh temporary directory, and removes them at the end.
//
//   conv 3->4 3x3 pad 1 -> add bias -> relu -> pool_max 2x2/2 ->
//   conv 4->4 3x3 pad 1 (A) -> add bias -> clipped_relu (6) -> batchnorm ->
//   depthwise group_convolution 3x3 pad 1 -> add A (residual) -> tanh ->
//   pool_mean 2x2/2 -> mul by 1x1x16x5 (implicit flatten) -> add bias ->
//   clipped_relu (1.5) -> softmax
//
// Batch 4, images 3x8x8, 2 batches. Each batch's result is compared with a
// plain C++ reference (relative 1e-5); the counts printed show that the relu,
// both clips and the tanh all change values.

#include <string>
#include <hpvm.h>
#include <tensorUtils.h>
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void var_0_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(1);

  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void var_1_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(2);

  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void var_2_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(3);

  void *r = __hpvm__tensor_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void var_3_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(4);

  void *r = __hpvm__tensor_pool_max(t1, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

void var_4_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(5);

  void *r = __hpvm__tensor_convolution(t1, t2, 1, 1, 1, 1);
  __hpvm__return(2, r, (size_t)0);
}

void var_5_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(6);

  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void var_6_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(7);

  void *r = __hpvm__tensor_clipped_relu(t1);
  __hpvm__return(2, r, (size_t)0);
}

void var_7_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2, void *t3,
                size_t bytes_t3, void *t4, size_t bytes_t4, void *t5,
                size_t bytes_t5) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(5, t1, t2, t3, t4, t5, 0);
  __hpvm__node_id(8);

  void *r = __hpvm__tensor_batchnorm(t1, t2, t3, t4, t5, 0.001);
  __hpvm__return(2, r, (size_t)0);
}

void var_8_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(9);

  void *r = __hpvm__tensor_group_convolution(t1, t2, 1, 1, 1, 1, 1, 4);
  __hpvm__return(2, r, (size_t)0);
}

void var_9_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(10);

  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void var_10_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(11);

  void *r = __hpvm__tensor_tanh(t1);
  __hpvm__return(2, r, (size_t)0);
}

void var_11_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(12);

  void *r = __hpvm__tensor_pool_mean(t1, 2, 2, 0, 0, 2, 2);
  __hpvm__return(2, r, (size_t)0);
}

void var_12_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(13);

  void *r = __hpvm__tensor_mul(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void var_13_node(void *t1, size_t bytes_t1, void *t2, size_t bytes_t2) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(2, t1, t2, 0);
  __hpvm__node_id(14);

  void *r = __hpvm__tensor_add(t1, t2);
  __hpvm__return(2, r, (size_t)0);
}

void var_14_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(15);

  void *r = __hpvm__tensor_clipped_relu(t1, 1.5);
  __hpvm__return(2, r, (size_t)0);
}

void var_15_node(void *t1, size_t bytes_t1) {
  __hpvm__hint(hpvm::TENSOR_TARGET);
  __hpvm__attributes(1, t1, 0);
  __hpvm__node_id(16);

  void *r = __hpvm__tensor_softmax(t1);
  __hpvm__return(2, r, (size_t)0);
}

void root(void *input, size_t input_bytes, void *conv2d_1_w,
          size_t conv2d_1_w_bytes, void *conv2d_1_b, size_t conv2d_1_b_bytes,
          void *conv2d_2_w, size_t conv2d_2_w_bytes, void *conv2d_2_b,
          size_t conv2d_2_b_bytes, void *batch_normalization_1_gamma,
          size_t batch_normalization_1_gamma_bytes,
          void *batch_normalization_1_beta,
          size_t batch_normalization_1_beta_bytes,
          void *batch_normalization_1_mean,
          size_t batch_normalization_1_mean_bytes,
          void *batch_normalization_1_variance,
          size_t batch_normalization_1_variance_bytes,
          void *depthwise_conv2d_1_w, size_t depthwise_conv2d_1_w_bytes,
          void *dense_1_w, size_t dense_1_w_bytes, void *dense_1_b,
          size_t dense_1_b_bytes) {

  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(12, input, conv2d_1_w, conv2d_1_b, conv2d_2_w, conv2d_2_b,
                     batch_normalization_1_gamma, batch_normalization_1_beta,
                     batch_normalization_1_mean, batch_normalization_1_variance,
                     depthwise_conv2d_1_w, dense_1_w, dense_1_b, 0);
  __hpvm__node_id(17);

  void *var_0 = __hpvm__createNodeND(0, var_0_node);

  __hpvm__bindIn(var_0, 0, 0, 0);
  __hpvm__bindIn(var_0, 1, 1, 0);
  __hpvm__bindIn(var_0, 2, 2, 0);
  __hpvm__bindIn(var_0, 3, 3, 0);

  void *var_1 = __hpvm__createNodeND(0, var_1_node);

  __hpvm__edge(var_0, var_1, 1, 0, 0, 0);
  __hpvm__edge(var_0, var_1, 1, 1, 1, 0);
  __hpvm__bindIn(var_1, 4, 2, 0);
  __hpvm__bindIn(var_1, 5, 3, 0);

  void *var_2 = __hpvm__createNodeND(0, var_2_node);

  __hpvm__edge(var_1, var_2, 1, 0, 0, 0);
  __hpvm__edge(var_1, var_2, 1, 1, 1, 0);

  void *var_3 = __hpvm__createNodeND(0, var_3_node);

  __hpvm__edge(var_2, var_3, 1, 0, 0, 0);
  __hpvm__edge(var_2, var_3, 1, 1, 1, 0);

  void *var_4 = __hpvm__createNodeND(0, var_4_node);

  __hpvm__edge(var_3, var_4, 1, 0, 0, 0);
  __hpvm__edge(var_3, var_4, 1, 1, 1, 0);
  __hpvm__bindIn(var_4, 6, 2, 0);
  __hpvm__bindIn(var_4, 7, 3, 0);

  void *var_5 = __hpvm__createNodeND(0, var_5_node);

  __hpvm__edge(var_4, var_5, 1, 0, 0, 0);
  __hpvm__edge(var_4, var_5, 1, 1, 1, 0);
  __hpvm__bindIn(var_5, 8, 2, 0);
  __hpvm__bindIn(var_5, 9, 3, 0);

  void *var_6 = __hpvm__createNodeND(0, var_6_node);

  __hpvm__edge(var_5, var_6, 1, 0, 0, 0);
  __hpvm__edge(var_5, var_6, 1, 1, 1, 0);

  void *var_7 = __hpvm__createNodeND(0, var_7_node);

  __hpvm__edge(var_6, var_7, 1, 0, 0, 0);
  __hpvm__edge(var_6, var_7, 1, 1, 1, 0);
  __hpvm__bindIn(var_7, 10, 2, 0);
  __hpvm__bindIn(var_7, 11, 3, 0);
  __hpvm__bindIn(var_7, 12, 4, 0);
  __hpvm__bindIn(var_7, 13, 5, 0);
  __hpvm__bindIn(var_7, 14, 6, 0);
  __hpvm__bindIn(var_7, 15, 7, 0);
  __hpvm__bindIn(var_7, 16, 8, 0);
  __hpvm__bindIn(var_7, 17, 9, 0);

  void *var_8 = __hpvm__createNodeND(0, var_8_node);

  __hpvm__edge(var_7, var_8, 1, 0, 0, 0);
  __hpvm__edge(var_7, var_8, 1, 1, 1, 0);
  __hpvm__bindIn(var_8, 18, 2, 0);
  __hpvm__bindIn(var_8, 19, 3, 0);

  void *var_9 = __hpvm__createNodeND(0, var_9_node);

  __hpvm__edge(var_8, var_9, 1, 0, 0, 0);
  __hpvm__edge(var_8, var_9, 1, 1, 1, 0);
  // The residual: var_4's output (A) feeds var_5 and this add.
  __hpvm__edge(var_4, var_9, 1, 0, 2, 0);
  __hpvm__edge(var_4, var_9, 1, 1, 3, 0);

  void *var_10 = __hpvm__createNodeND(0, var_10_node);

  __hpvm__edge(var_9, var_10, 1, 0, 0, 0);
  __hpvm__edge(var_9, var_10, 1, 1, 1, 0);

  void *var_11 = __hpvm__createNodeND(0, var_11_node);

  __hpvm__edge(var_10, var_11, 1, 0, 0, 0);
  __hpvm__edge(var_10, var_11, 1, 1, 1, 0);

  void *var_12 = __hpvm__createNodeND(0, var_12_node);

  __hpvm__edge(var_11, var_12, 1, 0, 0, 0);
  __hpvm__edge(var_11, var_12, 1, 1, 1, 0);
  __hpvm__bindIn(var_12, 20, 2, 0);
  __hpvm__bindIn(var_12, 21, 3, 0);

  void *var_13 = __hpvm__createNodeND(0, var_13_node);

  __hpvm__edge(var_12, var_13, 1, 0, 0, 0);
  __hpvm__edge(var_12, var_13, 1, 1, 1, 0);
  __hpvm__bindIn(var_13, 22, 2, 0);
  __hpvm__bindIn(var_13, 23, 3, 0);

  void *var_14 = __hpvm__createNodeND(0, var_14_node);

  __hpvm__edge(var_13, var_14, 1, 0, 0, 0);
  __hpvm__edge(var_13, var_14, 1, 1, 1, 0);

  void *var_15 = __hpvm__createNodeND(0, var_15_node);

  __hpvm__edge(var_14, var_15, 1, 0, 0, 0);
  __hpvm__edge(var_14, var_15, 1, 1, 1, 0);

  __hpvm__bindOut(var_15, 0, 0, 0);
  __hpvm__bindOut(var_15, 1, 1, 0);
}

struct ret_t {
  void *tensor;
  size_t bytes;
};

typedef struct __attribute__((__packed__)) {
  void *input;
  size_t input_bytes;
  void *conv2d_1_w;
  size_t conv2d_1_w_bytes;
  void *conv2d_1_b;
  size_t conv2d_1_b_bytes;
  void *conv2d_2_w;
  size_t conv2d_2_w_bytes;
  void *conv2d_2_b;
  size_t conv2d_2_b_bytes;
  void *batch_normalization_1_gamma;
  size_t batch_normalization_1_gamma_bytes;
  void *batch_normalization_1_beta;
  size_t batch_normalization_1_beta_bytes;
  void *batch_normalization_1_mean;
  size_t batch_normalization_1_mean_bytes;
  void *batch_normalization_1_variance;
  size_t batch_normalization_1_variance_bytes;
  void *depthwise_conv2d_1_w;
  size_t depthwise_conv2d_1_w_bytes;
  void *dense_1_w;
  size_t dense_1_w_bytes;
  void *dense_1_b;
  size_t dense_1_b_bytes;

  struct ret_t r;
} RootIn;

/*===--- Data and the reference (plain C++) ---------------------------------===*/

namespace {

const int batch_size = 4;
const int batch_count = 2;
const int images = batch_size * batch_count;

// The parameters, in the release's file format and shapes.
struct Params {
  std::vector<float> input;                     // images x 3 x 8 x 8
  std::vector<float> conv1_w, conv1_b;          // 4x3x3x3, 1x4x1x1
  std::vector<float> conv2_w, conv2_b;          // 4x4x3x3, 1x4x1x1
  std::vector<float> gamma, beta, mean, var;    // 1x4x1x1 each
  std::vector<float> dw_w;                      // 4x1x3x3
  std::vector<float> dense_w, dense_b;          // 1x1x16x5, 1x5x1x1
};

uint64_t seed = 0x2545F4914F6CDD1DULL;

// Uniform in [lo, hi), from a fixed xorshift sequence.
float uniform(float lo, float hi) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return lo + (hi - lo) * (float)((seed >> 40) & 0xffffff) / 16777216.0f;
}

std::vector<float> uniforms(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(lo, hi);
  return v;
}

// NCHW convolution of n images, stride 1, padding 1, 3x3 filters, `groups`
// groups (filter: out x (in / groups) x 3 x 3).
std::vector<float> conv3x3(const std::vector<float> &in, int n, int c, int h, int w,
                           const std::vector<float> &f, int out, int groups) {
  std::vector<float> r((size_t)n * out * h * w);
  int per_group_in = c / groups, per_group_out = out / groups;
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < out; ++o) {
      int g = o / per_group_out;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          float s = 0;
          for (int ci = 0; ci < per_group_in; ++ci)
            for (int dy = 0; dy < 3; ++dy)
              for (int dx = 0; dx < 3; ++dx) {
                int yy = y + dy - 1, xx = x + dx - 1;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                  continue;
                int cc = g * per_group_in + ci;
                s += in[(((size_t)b * c + cc) * h + yy) * w + xx] *
                     f[(((size_t)o * per_group_in + ci) * 3 + dy) * 3 + dx];
              }
          r[(((size_t)b * out + o) * h + y) * w + x] = s;
        }
    }
  return r;
}

// 2x2 pooling, stride 2 (max or mean).
std::vector<float> pool2x2(const std::vector<float> &in, int n, int c, int h, int w,
                           bool max) {
  int oh = h / 2, ow = w / 2;
  std::vector<float> r((size_t)n * c * oh * ow);
  for (int p = 0; p < n * c; ++p)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        const float *base = &in[(size_t)p * h * w];
        float a = base[(2 * y) * w + 2 * x], b = base[(2 * y) * w + 2 * x + 1];
        float cc = base[(2 * y + 1) * w + 2 * x], d = base[(2 * y + 1) * w + 2 * x + 1];
        r[((size_t)p * oh + y) * ow + x] =
            max ? fmaxf(fmaxf(a, b), fmaxf(cc, d)) : (a + b + cc + d) / 4.0f;
      }
  return r;
}

struct Counts {
  long relu0 = 0;     // values the first relu sets to 0
  long clipped6 = 0;  // values above 6 before clipped_relu
  long tanh1 = 0;     // |values| above 1 before tanh
  long clipped15 = 0; // values above 1.5 before clipped_relu(t, 1.5)
  long zero15 = 0;    // values below 0 before clipped_relu(t, 1.5)
};

// The network on images first..first+n-1: n x 5 softmax rows.
std::vector<float> reference(const Params &p, int first, int n, Counts &counts) {
  std::vector<float> in(p.input.begin() + (size_t)first * 3 * 64,
                        p.input.begin() + (size_t)(first + n) * 3 * 64);
  std::vector<float> t = conv3x3(in, n, 3, 8, 8, p.conv1_w, 4, 1);
  for (size_t i = 0; i < t.size(); ++i) {
    float v = t[i] + p.conv1_b[(i / 64) % 4];
    counts.relu0 += v < 0;
    t[i] = v > 0 ? v : 0;
  }
  t = pool2x2(t, n, 4, 8, 8, true);
  std::vector<float> a = conv3x3(t, n, 4, 4, 4, p.conv2_w, 4, 1);
  std::vector<float> u(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    int c = (int)((i / 16) % 4);
    float v = a[i] + p.conv2_b[c];
    counts.clipped6 += v > 6;
    v = v < 0 ? 0 : v > 6 ? 6 : v;
    u[i] = p.gamma[c] * ((v - p.mean[c]) / sqrtf(p.var[c] + 0.001f)) + p.beta[c];
  }
  std::vector<float> d = conv3x3(u, n, 4, 4, 4, p.dw_w, 4, 4);
  for (size_t i = 0; i < d.size(); ++i) {
    float v = d[i] + a[i];
    counts.tanh1 += fabsf(v) > 1;
    d[i] = tanhf(v);
  }
  std::vector<float> q = pool2x2(d, n, 4, 4, 4, false); // n x 16, flattened
  std::vector<float> r((size_t)n * 5);
  for (int b = 0; b < n; ++b) {
    float m = -INFINITY;
    for (int j = 0; j < 5; ++j) {
      float s = 0;
      for (int k = 0; k < 16; ++k)
        s += q[(size_t)b * 16 + k] * p.dense_w[(size_t)k * 5 + j];
      s += p.dense_b[j];
      counts.clipped15 += s > 1.5f;
      counts.zero15 += s < 0;
      s = s < 0 ? 0 : s > 1.5f ? 1.5f : s;
      r[(size_t)b * 5 + j] = s;
      m = fmaxf(m, s);
    }
    float total = 0;
    for (int j = 0; j < 5; ++j)
      total += r[(size_t)b * 5 + j] = expf(r[(size_t)b * 5 + j] - m);
    for (int j = 0; j < 5; ++j)
      r[(size_t)b * 5 + j] /= total;
  }
  return r;
}

std::string write_file(const std::string &dir, const char *name, const void *data,
                       size_t bytes) {
  std::string path = dir + "/" + name;
  FILE *f = fopen(path.c_str(), "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "approxhpvm_dnn: cannot write %s\n", path.c_str());
    exit(2);
  }
  fclose(f);
  return path;
}

std::string write_floats(const std::string &dir, const char *name,
                         const std::vector<float> &v) {
  return write_file(dir, name, v.data(), v.size() * sizeof(float));
}

} // namespace

int main() {
  // The parameters, scaled so that the first relu, both clips and the tanh
  // all change values (the counts are printed).
  Params p;
  p.input = uniforms((size_t)images * 3 * 8 * 8, -1.0f, 2.0f);
  p.conv1_w = uniforms(4 * 3 * 3 * 3, -0.6f, 0.9f);
  p.conv1_b = uniforms(4, -0.5f, 0.5f);
  p.conv2_w = uniforms(4 * 4 * 3 * 3, -0.4f, 0.4f);
  p.conv2_b = uniforms(4, -1.0f, 1.0f);
  p.gamma = uniforms(4, 0.5f, 1.5f);
  p.beta = uniforms(4, -0.2f, 0.2f);
  p.mean = uniforms(4, 1.0f, 3.0f);
  p.var = uniforms(4, 1.0f, 4.0f);
  p.dw_w = uniforms(4 * 1 * 3 * 3, -0.5f, 0.5f);
  p.dense_w = uniforms(16 * 5, -0.8f, 0.8f);
  // Chosen so that 4 of the 40 scores exceed 1.5 (never two in one image: no
  // ties for the labels) and 10 are below 0.
  p.dense_b = {0.2f, 0.0f, -0.6f, 0.2f, -1.0f};

  // The reference for every image first. The labels are its choices, except
  // for the last image of each batch, which gets another class, and for images
  // whose two largest entries are (nearly) equal (both clipped at 1.5), which
  // get their smallest class: the accuracies printed do not depend on how a
  // tie is broken.
  Counts counts;
  std::vector<float> expect = reference(p, 0, images, counts);
  std::vector<uint32_t> labels(images);
  int ties = 0;
  for (int i = 0; i < images; ++i) {
    const float *row = &expect[(size_t)i * 5];
    uint32_t chosen = 0, smallest = 0;
    for (uint32_t c = 1; c < 5; ++c) {
      if (row[chosen] < row[c])
        chosen = c;
      if (row[c] < row[smallest])
        smallest = c;
    }
    bool tie = false;
    for (uint32_t c = 0; c < 5; ++c)
      tie |= c != chosen && row[chosen] - row[c] <= 1e-4f;
    ties += tie;
    labels[i] = tie ? smallest : i % batch_size == batch_size - 1 ? (chosen + 1) % 5 : chosen;
  }

  const char *tmp = getenv("TMPDIR");
  std::string dir_template = std::string(tmp && *tmp ? tmp : "/tmp") + "/approxhpvm_dnn.XXXXXX";
  std::vector<char> dir_buffer(dir_template.begin(), dir_template.end());
  dir_buffer.push_back('\0');
  if (!mkdtemp(dir_buffer.data())) {
    fprintf(stderr, "approxhpvm_dnn: cannot create %s\n", dir_template.c_str());
    return 2;
  }
  std::string dir_prefix = dir_buffer.data();
  std::vector<std::string> files;
  std::string input_path = write_floats(dir_prefix, "test_input.bin", p.input);
  std::string labels_path = write_file(dir_prefix, "test_labels.bin", labels.data(),
                                       labels.size() * sizeof(uint32_t));
  std::string conv2d_1_w_path = write_floats(dir_prefix, "conv2d_1_w.bin", p.conv1_w);
  std::string conv2d_1_b_path = write_floats(dir_prefix, "conv2d_1_b.bin", p.conv1_b);
  std::string conv2d_2_w_path = write_floats(dir_prefix, "conv2d_2_w.bin", p.conv2_w);
  std::string conv2d_2_b_path = write_floats(dir_prefix, "conv2d_2_b.bin", p.conv2_b);
  std::string batch_normalization_1_gamma_path =
      write_floats(dir_prefix, "batch_normalization_1_gamma.bin", p.gamma);
  std::string batch_normalization_1_beta_path =
      write_floats(dir_prefix, "batch_normalization_1_beta.bin", p.beta);
  std::string batch_normalization_1_mean_path =
      write_floats(dir_prefix, "batch_normalization_1_mean.bin", p.mean);
  std::string batch_normalization_1_variance_path =
      write_floats(dir_prefix, "batch_normalization_1_variance.bin", p.var);
  std::string depthwise_conv2d_1_w_path =
      write_floats(dir_prefix, "depthwise_conv2d_1_w.bin", p.dw_w);
  std::string dense_1_w_path = write_floats(dir_prefix, "dense_1_w.bin", p.dense_w);
  std::string dense_1_b_path = write_floats(dir_prefix, "dense_1_b.bin", p.dense_b);
  files = {input_path,
           labels_path,
           conv2d_1_w_path,
           conv2d_1_b_path,
           conv2d_2_w_path,
           conv2d_2_b_path,
           batch_normalization_1_gamma_path,
           batch_normalization_1_beta_path,
           batch_normalization_1_mean_path,
           batch_normalization_1_variance_path,
           depthwise_conv2d_1_w_path,
           dense_1_w_path,
           dense_1_b_path};

  // From here on, as the release's programs read their parameters.
  void *conv2d_1_w = readTrainedWeights(conv2d_1_w_path.c_str(), 0, 4, 3, 3, 3);
  void *conv2d_1_b = readTrainedWeights(conv2d_1_b_path.c_str(), 0, 1, 4, 1, 1);
  void *conv2d_2_w = readTrainedWeights(conv2d_2_w_path.c_str(), 0, 4, 4, 3, 3);
  void *conv2d_2_b = readTrainedWeights(conv2d_2_b_path.c_str(), 0, 1, 4, 1, 1);
  void *batch_normalization_1_gamma =
      readTrainedWeights(batch_normalization_1_gamma_path.c_str(), 0, 1, 4, 1, 1);
  void *batch_normalization_1_beta =
      readTrainedWeights(batch_normalization_1_beta_path.c_str(), 0, 1, 4, 1, 1);
  void *batch_normalization_1_mean =
      readTrainedWeights(batch_normalization_1_mean_path.c_str(), 0, 1, 4, 1, 1);
  void *batch_normalization_1_variance =
      readTrainedWeights(batch_normalization_1_variance_path.c_str(), 0, 1, 4, 1, 1);
  void *depthwise_conv2d_1_w =
      readTrainedWeights(depthwise_conv2d_1_w_path.c_str(), 0, 4, 1, 3, 3);
  void *dense_1_w = readTrainedWeights(dense_1_w_path.c_str(), 0, 1, 1, 16, 5);
  void *dense_1_b = readTrainedWeights(dense_1_b_path.c_str(), 0, 1, 5, 1, 1);

  RootIn *args = static_cast<RootIn *>(malloc(sizeof(RootIn)));
  void *input = create4DTensor(0, nchw, batch_size, 3, 8, 8);
  args->input = input;
  args->input_bytes = 0;
  args->conv2d_1_w = conv2d_1_w;
  args->conv2d_1_w_bytes = 0;
  args->conv2d_1_b = conv2d_1_b;
  args->conv2d_1_b_bytes = 0;
  args->conv2d_2_w = conv2d_2_w;
  args->conv2d_2_w_bytes = 0;
  args->conv2d_2_b = conv2d_2_b;
  args->conv2d_2_b_bytes = 0;
  args->batch_normalization_1_gamma = batch_normalization_1_gamma;
  args->batch_normalization_1_gamma_bytes = 0;
  args->batch_normalization_1_beta = batch_normalization_1_beta;
  args->batch_normalization_1_beta_bytes = 0;
  args->batch_normalization_1_mean = batch_normalization_1_mean;
  args->batch_normalization_1_mean_bytes = 0;
  args->batch_normalization_1_variance = batch_normalization_1_variance;
  args->batch_normalization_1_variance_bytes = 0;
  args->depthwise_conv2d_1_w = depthwise_conv2d_1_w;
  args->depthwise_conv2d_1_w_bytes = 0;
  args->dense_1_w = dense_1_w;
  args->dense_1_w_bytes = 0;
  args->dense_1_b = dense_1_b;
  args->dense_1_b_bytes = 0;

  __hpvm__init();

  long wrong = 0;
  double sum = 0, weighted = 0;
  startMemTracking();
#pragma clang loop unroll(disable)
  for (int i = 0; i < batch_count; i++) {
    int start = i * batch_size, end = start + batch_size;
    void *input = readInputBatch(input_path.c_str(), nchw, start, end, 3, 8, 8);
    args->input = input;
    args->input_bytes = 0;

    void *dfg = __hpvm__launch(0, root, (void *)args);
    __hpvm__wait(dfg);
    void *result = static_cast<RootIn *>(args)->r.tensor;
    hpvm_request_tensor(result, 0);

    struct Tensor *t = (struct Tensor *)result;
    if (t->dims.num_dims != 4 || t->dims.dim_sizes[0] != 4 || t->dims.dim_sizes[1] != 5 ||
        t->dims.dim_sizes[2] != 1 || t->dims.dim_sizes[3] != 1) {
      fprintf(stderr, "approxhpvm_dnn: batch %d: the result has %d dims, not 4x5x1x1\n", i,
              t->dims.num_dims);
      ++wrong;
    } else {
      const float *got = (const float *)t->host_data;
      for (int k = 0; k < batch_size * 5; ++k) {
        float e = expect[(size_t)start * 5 + k];
        if (fabsf(got[k] - e) > 1e-5f * fmaxf(1.0f, fabsf(e))) {
          if (wrong < 10)
            fprintf(stderr, "approxhpvm_dnn: batch %d: [%d] = %g, expected %g\n", i, k,
                    got[k], e);
          ++wrong;
        }
        sum += got[k];
        weighted += got[k] * (double)(k % 5 + 1);
      }
    }

    llvm_hpvm_invokeRtControl(result, labels_path.c_str(), start, end);
    freeBatchMemory();
  }
  __hpvm__cleanup();

  for (const std::string &f : files)
    remove(f.c_str());
  rmdir(dir_prefix.c_str());

  printf("approxhpvm_dnn: batches=%d sum=%.4f weighted=%.4f relu0=%ld clipped6=%ld "
         "tanh1=%ld clipped15=%ld zero15=%ld ties=%d wrong=%ld\n",
         batch_count, sum, weighted, counts.relu0, counts.clipped6, counts.tanh1,
         counts.clipped15, counts.zero15, ties, wrong);
  free(args);
  return wrong != 0;
}
