// Host code whose landing pads destroy several temporaries (std::string, std::vector):
// clang emits blocks that differ only in which local object they end the lifetime of.
#include <hpvm/hpvm.h>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

struct __attribute__((__packed__)) RootIn {
  float *a;
  size_t bytes;
  long n;
};

void scale(float *a, size_t bytes, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  if (i < n)
    a[i] = a[i] * 2.0f + 1.0f;
}

void root(float *a, size_t bytes, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, a, 1, a);
  void *node = __hpvm__createNodeND(1, scale, n);
  __hpvm__bindIn(node, 0, 0, 0);
  __hpvm__bindIn(node, 1, 1, 0);
  __hpvm__bindIn(node, 2, 2, 0);
}

__attribute__((noinline)) static std::string label(const std::string &stage, int frame) {
  if (frame < 0)
    throw std::runtime_error("negative frame in " + stage);
  return stage + " #" + std::to_string(frame);
}

__attribute__((noinline)) static void note(std::vector<std::string> &log, const std::string &text) {
  if (text.size() > 1000)
    throw std::length_error("note too long");
  log.push_back(text);
}

// Each temporary has its own landing pad that destroys it: the pads differ only
// in which local object they end.
__attribute__((noinline)) static void stages(std::vector<std::string> &log, int frames) {
  note(log, std::string("gaussian ") + std::to_string(frames));
  note(log, std::string("laplacian ") + std::to_string(frames + 1));
  note(log, std::string("gradient ") + std::to_string(frames + 2));
  note(log, std::string("zero-crossings ") + std::to_string(frames + 3));
}

int main(int argc, char **argv) {
  std::vector<std::string> names;
  stages(names, argc);
  try {
    std::string a = label(std::string("gaussian") + "/smooth", argc);
    std::string b = label(std::string("laplacian") + "/edges", argc - 5);
    names.push_back(a + b);
  } catch (const std::exception &e) {
    names.push_back(std::string("caught: ") + e.what());
  }
  for (const std::string &name : names)
    std::printf("%s\n", name.c_str());
  __hpvm__init();
  long n = 100;
  std::vector<float> data(n);
  for (long i = 0; i < n; ++i)
    data[i] = i;
  llvm_hpvm_track_mem(data.data(), n * sizeof(float));
  RootIn *args = (RootIn *)std::malloc(sizeof(RootIn));
  args->a = data.data();
  args->bytes = n * sizeof(float);
  args->n = n;
  void *g = __hpvm__launch(0, root, args);
  __hpvm__wait(g);
  llvm_hpvm_request_mem(data.data(), n * sizeof(float));
  double sum = 0;
  for (long i = 0; i < n; ++i)
    sum += data[i];
  std::printf("host_blocks: sum=%.1f wrong=%d\n", sum, sum != 10000.0);
  llvm_hpvm_untrack_mem(data.data());
  std::free(args);
  __hpvm__cleanup();
  return sum != 10000.0;
}
