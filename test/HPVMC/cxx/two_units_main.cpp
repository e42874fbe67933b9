// Two translation units: this one holds the graph and main; two_units_lib.cpp
// (plain C++, no HPVM-C) holds a global table filled by static constructors,
// a class with a virtual function and the reference computation. Both have
// static initializers, which run before main in either link order.
#include <hpvm/hpvm.h>

#include "two_units.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

struct __attribute__((__packed__)) PolyOut {
  size_t bytes_y;
};
struct __attribute__((__packed__)) RootIn {
  double *x;
  size_t bytes_x;
  double *y;
  size_t bytes_y;
  double c0, c1, c2;
  long n;
};

PolyOut poly(double *x, size_t bytes_x, double *y, size_t bytes_y, double c0, double c1,
             double c2) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, x, 1, y);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  double v = x[i];
  y[i] = c0 + v * (c1 + v * c2);
  __hpvm__return(1, bytes_y);
}

void root(double *x, size_t bytes_x, double *y, size_t bytes_y, double c0, double c1, double c2,
          long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, x, 1, y);
  void *p = __hpvm__createNodeND(1, poly, n);
  for (int i = 0; i < 7; ++i)
    __hpvm__bindIn(p, i, i, 0);
}

static Registered here("main unit");

int main() {
  long wrong = 0;
  // Static initialization runs the two units in an order C++ leaves open.
  std::vector<std::string> names(registry().begin(), registry().end());
  std::sort(names.begin(), names.end());
  std::printf("two_units: %zu registered:", names.size());
  for (const std::string &name : names)
    std::printf(" %s", name.c_str());
  std::printf("\n");
  for (const Polynomial *p : polynomials()) {
    std::vector<double> x(513), y(513);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<double>(i) / 64.0 - 4.0;
    RootIn args{x.data(),          x.size() * sizeof(double), y.data(),
                y.size() * sizeof(double), p->coefficient(0),         p->coefficient(1),
                p->coefficient(2), static_cast<long>(x.size())};
    llvm_hpvm_track_mem(x.data(), args.bytes_x);
    llvm_hpvm_track_mem(y.data(), args.bytes_y);
    void *graph = __hpvm__launch(0, root, &args);
    __hpvm__wait(graph);
    llvm_hpvm_request_mem(y.data(), args.bytes_y);
    llvm_hpvm_untrack_mem(x.data());
    llvm_hpvm_untrack_mem(y.data());
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      wrong += y[i] != p->at(x[i]);
      sum += y[i];
    }
    std::printf("two_units: %s sum=%.6f\n", p->name(), sum);
  }
  std::printf("two_units: wrong=%ld\n", wrong);
  return wrong != 0;
}
