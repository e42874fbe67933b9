// onnx_model_standin.cpp - a STAND-IN for hx507/hpvm-ONNX src/model.cpp, written for this
// check (benchmarks/hetero-check/run.sh). It is not that file and runs no ONNX model.
//
// The real model.cpp runs ../data/mnist.onnx with onnxruntime (neither is available here: the
// model file is not in the repository and onnxruntime is not installed). run_onnx.cpp, the
// Hetero-C++ translation unit, only needs what model.hpp declares: init_all_stages() and
// do_inference_at_stage(stage, inp_sz, inp, out_sz, out); `stages` and kNumStage are defined by
// the program's stage_def.hpp, included by run_onnx.cpp. This file provides those two functions
// with the same contract as the original:
//   * init_all_stages: once, checks every stage's shapes (the original opens one session each);
//   * do_inference_at_stage: checks that the stage exists and that the buffer sizes match its
//     input/output shapes, overwrites all of `out` (never reads it, as onnxruntime does not: the
//     program passes an uninitialized result to the first stage) with a deterministic function
//     of the stage and the input -- a fixed "linear layer" out[j] = b[s][j] + sum_k w[s][j][k] *
//     inp[k], weights small dyadic rationals from an integer hash, so the float sums are exact
//     in any order -- prints one line with the stage, the call number and checksums of the input
//     and output, then calls the stage's dbg_callback as the original does (HPVM_STAGE_DEBUG).
// The output is therefore a function of the data each stage receives and of the order the
// stages run in, so comparing the graph build's stdout with the sequential build's means
// something. It is compiled by hpvm-cc as a plain C++ source (no Hetero-C++ markers).
#include <cstdio>
#include <cstdlib>
#include <string>  // model.hpp uses std::string without including <string>

#include "model.hpp"

namespace {

bool initialized = false;
int calls = 0;

uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352dU;
  h ^= h >> 15;
  h *= 0x846ca68bU;
  h ^= h >> 16;
  return h;
}

uint32_t hash_name(const std::string& s) {
  uint32_t h = 2166136261U;
  for (unsigned char c : s) h = (h ^ c) * 16777619U;
  return h;
}

// A multiple of 1/16 in [-8/16, 8/16]: products with small inputs and their sums stay exact.
float weight(uint32_t stage, uint32_t j, uint32_t k) {
  return (float)((int)(mix(stage ^ mix(j * 7919U + k)) % 17U) - 8) / 16.0f;
}

size_t elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= (size_t)d;
  return n;
}

[[noreturn]] void fail(const std::string& what) {
  fprintf(stderr, "model stand-in: %s\n", what.c_str());
  exit(3);
}

}  // namespace

void init_all_stages() {
  if (initialized) fail("init_all_stages called twice");
  initialized = true;
  if ((int)stages.size() != kNumStage) fail("stages.size() != kNumStage");
  for (const auto& entry : stages)
    if (elements(entry.second.input_shape) == 0 || elements(entry.second.output_shape) == 0)
      fail("stage " + entry.first + " has an empty shape");
}

void do_inference_at_stage(const std::string& s, size_t inp_sz, float* inp, size_t out_sz,
                           float* out) {
  if (!initialized) fail("do_inference_at_stage before init_all_stages");
  if (!stages.count(s)) fail("undefined stage " + s);
  const OnnxStage& stage = stages[s];
  if (inp_sz != elements(stage.input_shape) || out_sz != elements(stage.output_shape))
    fail("stage " + s + ": buffer sizes do not match the stage's shapes");
  ++calls;
  uint32_t id = hash_name(s);
  double in_sum = 0, in_weighted = 0;
  for (size_t k = 0; k < inp_sz; ++k) {
    in_sum += inp[k];
    in_weighted += (double)(k % 97 + 1) * inp[k];
  }
  double out_sum = 0;
  for (size_t j = 0; j < out_sz; ++j) {
    float acc = weight(id, (uint32_t)j, 0xffffffffU) * 4.0f;  // the bias
    for (size_t k = 0; k < inp_sz; ++k) acc += weight(id, (uint32_t)j, (uint32_t)k) * inp[k];
    out[j] = acc;
    out_sum += acc;
  }
  printf("model stand-in: %s (call %d): %zu inputs, sum %.9g, weighted %.9g -> %zu outputs, "
         "sum %.9g\n",
         s.c_str(), calls, inp_sz, in_sum, in_weighted, out_sz, out_sum);
  fflush(stdout);
#ifdef HPVM_STAGE_DEBUG
  stage.dbg_callback(s, out);
#endif
}
