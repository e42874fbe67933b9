// onnx_model_standin_46d8a49.cpp - a stand-in for hx507/hpvm-ONNX's src/model.cpp at commit
// 46d8a49 ("Move inference into node"), written for hetero-check: the original runs an
// onnxruntime session on ../data/mnist.onnx, which is not in the repository. This one runs no
// model: do_inference returns a fixed linear function of the image (exact float sums in index
// order), so that the graph and sequential builds of run_onnx.cpp print the same result.
#include "model_def.hpp"

void init_model(char *) {}

std::array<float, 10> do_inference(std::array<float, width * height> &input_image) {
  std::array<float, 10> result{};
  for (int i = 0; i < 10; ++i) {
    float sum = (float)((i * 7) % 10);
    for (int j = 0; j < width * height; ++j)
      sum += input_image[j] * (float)((i + j) % 5);
    result[i] = sum;
  }
  return result;
}
