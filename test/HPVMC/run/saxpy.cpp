// C++: node functions are C++ functions (mangled names), the hint is
// hpvm::CPU_TARGET, and the host uses std::vector and a class. A 1-D leaf
// computes y = a * x + y and gives the output pointer to a 0-D leaf over an
// edge; that leaf returns the norm and the index of the largest element.
#include <hpvm/hpvm.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct __attribute__((__packed__)) SaxpyOut {
  float *y;
  size_t bytes_y;
};

struct __attribute__((__packed__)) NormOut {
  double norm;
  long argmax;
};

struct __attribute__((__packed__)) RootIn {
  float a;
  float *x;
  size_t bytes_x;
  float *y;
  size_t bytes_y;
  long n;
  NormOut out;
};

SaxpyOut saxpy(float a, float *x, size_t bytes_x, float *y, size_t bytes_y) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(2, x, y, 1, y);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  y[i] = a * x[i] + y[i];
  __hpvm__return(2, y, bytes_y);
}

NormOut norm(float *y, size_t bytes_y, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, y, 0);
  double squares = 0;
  long argmax = 0;
  for (long i = 0; i < n; ++i) {
    squares += (double)y[i] * y[i];
    if (y[i] > y[argmax])
      argmax = i;
  }
  __hpvm__return(2, std::sqrt(squares), argmax);
}

NormOut saxpy_root(float a, float *x, size_t bytes_x, float *y, size_t bytes_y, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(2, x, y, 1, y);
  void *s = __hpvm__createNodeND(1, saxpy, n);
  void *r = __hpvm__createNodeND(0, norm);
  for (int i = 0; i < 5; ++i)
    __hpvm__bindIn(s, i, i, 0);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 1, 1, 0);
  __hpvm__bindIn(r, 5, 2, 0);
  __hpvm__bindOut(r, 0, 0, 0);
  __hpvm__bindOut(r, 1, 1, 0);
}

class Saxpy {
public:
  Saxpy(long n) : x(n), y(n) {
    for (long i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 13) % 29) - 14.0f;
      y[i] = static_cast<float>(i % 5);
    }
  }
  NormOut run(float a) {
    auto *args = static_cast<RootIn *>(std::malloc(sizeof(RootIn)));
    args->a = a;
    args->x = x.data();
    args->bytes_x = x.size() * sizeof(float);
    args->y = y.data();
    args->bytes_y = y.size() * sizeof(float);
    args->n = static_cast<long>(x.size());
    llvm_hpvm_track_mem(x.data(), args->bytes_x);
    llvm_hpvm_track_mem(y.data(), args->bytes_y);
    void *dfg = __hpvm__launch(0, saxpy_root, args);
    __hpvm__wait(dfg);
    llvm_hpvm_request_mem(y.data(), args->bytes_y);
    llvm_hpvm_untrack_mem(x.data());
    llvm_hpvm_untrack_mem(y.data());
    NormOut out = args->out;
    std::free(args);
    return out;
  }
  std::vector<float> x, y;
};

int main() {
  __hpvm__init();
  long n = 2047;
  Saxpy s(n);
  std::vector<float> ref = s.y;
  NormOut out = s.run(1.5f);
  __hpvm__cleanup();
  long wrong = 0;
  double squares = 0;
  long argmax = 0;
  for (long i = 0; i < n; ++i) {
    ref[i] = 1.5f * s.x[i] + ref[i];
    wrong += s.y[i] != ref[i];
    squares += (double)ref[i] * ref[i];
    if (ref[i] > ref[argmax])
      argmax = i;
  }
  wrong += out.norm != std::sqrt(squares) || out.argmax != argmax;
  std::printf("saxpy: n=%ld norm=%.6f argmax=%ld wrong=%ld\n", n, out.norm, out.argmax, wrong);
  return wrong != 0;
}
