// C++ host code with static initialization and destruction around an HPVM-C
// graph: <iostream> (libstdc++'s ios_base::Init), a global std::string, a
// global object whose constructor and destructor print, a function-local
// static, a thread_local counter and a static data member. The graph scales a
// vector (1-D leaf) and a 0-D leaf sums it; the host prints with std::cout.
#include <hpvm/hpvm.h>

#include <iostream>
#include <string>
#include <vector>

std::string banner = std::string("iostream_globals") + ":";

struct Registry {
  Registry() : launches(0) { std::cout << "constructed: registry" << std::endl; }
  ~Registry() { std::cout << "destroyed: registry after " << launches << " launches" << std::endl; }
  int launches;
  static const int kScale;
};
const int Registry::kScale = 3;
Registry registry;
thread_local int waits = 0;

static std::vector<float> &weights() {
  static std::vector<float> w(1, 0.5f); // initialized on first use
  return w;
}

struct __attribute__((__packed__)) ScaleOut {
  float *v;
  size_t bytes_v;
};
struct __attribute__((__packed__)) SumOut {
  float sum;
};
struct __attribute__((__packed__)) RootIn {
  float *v;
  size_t bytes_v;
  float factor;
  long n;
  SumOut out;
};

ScaleOut scale(float *v, size_t bytes_v, float factor) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 1, v);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  v[i] = v[i] * factor;
  __hpvm__return(2, v, bytes_v);
}

SumOut sum(float *v, size_t bytes_v, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 0);
  float s = 0;
  for (long i = 0; i < n; ++i)
    s += v[i];
  __hpvm__return(1, s);
}

SumOut root(float *v, size_t bytes_v, float factor, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 1, v);
  void *s = __hpvm__createNodeND(1, scale, n);
  void *r = __hpvm__createNodeND(0, sum);
  __hpvm__bindIn(s, 0, 0, 0);
  __hpvm__bindIn(s, 1, 1, 0);
  __hpvm__bindIn(s, 2, 2, 0);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(s, r, HPVM_ALL_TO_ALL, 1, 1, 0);
  __hpvm__bindIn(r, 3, 2, 0);
  __hpvm__bindOut(r, 0, 0, 0);
}

static float launch(std::vector<float> &v, float factor) {
  RootIn args;
  args.v = v.data();
  args.bytes_v = v.size() * sizeof(float);
  args.factor = factor;
  args.n = static_cast<long>(v.size());
  llvm_hpvm_track_mem(v.data(), args.bytes_v);
  void *graph = __hpvm__launch(0, root, &args);
  __hpvm__wait(graph);
  llvm_hpvm_request_mem(v.data(), args.bytes_v);
  llvm_hpvm_untrack_mem(v.data());
  ++registry.launches;
  ++waits;
  return args.out.sum;
}

int main() {
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i % 7) * weights()[0];
  std::vector<float> ref = v;
  float first = launch(v, static_cast<float>(Registry::kScale));
  float second = launch(v, 0.25f);
  long wrong = 0;
  float s1 = 0, s2 = 0;
  for (float &x : ref) {
    x *= Registry::kScale;
    s1 += x;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] *= 0.25f;
    s2 += ref[i];
    wrong += v[i] != ref[i];
  }
  wrong += first != s1 || second != s2;
  std::cout << banner << " sums " << first << " " << second << " waits " << waits
            << " wrong=" << wrong << std::endl;
  return wrong != 0;
}
