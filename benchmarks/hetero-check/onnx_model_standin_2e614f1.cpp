// onnx_model_standin_2e614f1.cpp - a stand-in for hx507/hpvm-ONNX's src/model.cpp at commit
// 2e614f1 ("Add primitive streaming"), written for hetero-check: the original runs onnxruntime
// sessions, one per stage, on ../data/mnist.onnx, which is not in the repository. This one runs
// no model: `out` gets a fixed linear function of `inp` and the stage (exact float sums in index
// order). That revision's model_def.hpp defines arrays, so the two functions are declared here.
#include <stddef.h>

void init_model(char *, int) {}

void do_inference_at_stage(int stage, size_t, void *, size_t inp_sz, void *inp, size_t, void *,
                           size_t out_sz, void *out, const char **, const char **) {
  const float *in = (const float *)inp;
  float *result = (float *)out;
  for (size_t i = 0; i < out_sz; ++i) {
    float sum = (float)((i * 7 + (size_t)stage) % 10);
    for (size_t j = 0; j < inp_sz; ++j)
      sum += in[j] * (float)((i + j) % 5);
    result[i] = sum;
  }
}
