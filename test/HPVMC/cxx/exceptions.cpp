// Exceptions thrown and caught around launches: a check that throws before a
// launch, a launch inside a try block whose result check throws after the
// wait, an RAII guard that untracks memory while the stack unwinds, and a
// rethrow through a function with a launch in it. Every launch's result is
// checked against the same sum computed in C++.
#include <hpvm/hpvm.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct __attribute__((__packed__)) SquareOut {
  long *v;
  size_t bytes_v;
};
struct __attribute__((__packed__)) TotalOut {
  long total;
};
struct __attribute__((__packed__)) RootIn {
  long *v;
  size_t bytes_v;
  long n;
  TotalOut out;
};

SquareOut square(long *v, size_t bytes_v) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 1, v);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  v[i] = v[i] * v[i];
  __hpvm__return(2, v, bytes_v);
}

TotalOut total(long *v, size_t bytes_v, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 0);
  long t = 0;
  for (long i = 0; i < n; ++i)
    t += v[i];
  __hpvm__return(1, t);
}

TotalOut root(long *v, size_t bytes_v, long n) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, v, 1, v);
  void *s = __hpvm__createNodeND(1, square, n);
  void *t = __hpvm__createNodeND(0, total);
  __hpvm__bindIn(s, 0, 0, 0);
  __hpvm__bindIn(s, 1, 1, 0);
  __hpvm__edge(s, t, HPVM_ALL_TO_ALL, 0, 0, 0);
  __hpvm__edge(s, t, HPVM_ALL_TO_ALL, 1, 1, 0);
  __hpvm__bindIn(t, 2, 2, 0);
  __hpvm__bindOut(t, 0, 0, 0);
}

static int tracked = 0;

// Tracks a buffer for its lifetime, also when an exception leaves the scope.
class Tracked {
public:
  explicit Tracked(std::vector<long> &v) : v(v) {
    llvm_hpvm_track_mem(v.data(), v.size() * sizeof(long));
    ++tracked;
  }
  ~Tracked() {
    llvm_hpvm_untrack_mem(v.data());
    --tracked;
  }

private:
  std::vector<long> &v;
};

struct TooLarge : std::runtime_error {
  explicit TooLarge(long total)
      : std::runtime_error("total " + std::to_string(total) + " above the limit"), total(total) {}
  long total;
};

static long squares(std::vector<long> &v, long limit) {
  if (v.empty())
    throw std::invalid_argument("empty input");
  Tracked guard(v);
  auto args = std::make_unique<RootIn>();
  args->v = v.data();
  args->bytes_v = v.size() * sizeof(long);
  args->n = static_cast<long>(v.size());
  void *graph = __hpvm__launch(0, root, args.get());
  __hpvm__wait(graph);
  llvm_hpvm_request_mem(v.data(), args->bytes_v);
  if (args->out.total > limit)
    throw TooLarge(args->out.total);
  return args->out.total;
}

static long checked(std::vector<long> &v, long limit) {
  try {
    return squares(v, limit);
  } catch (const TooLarge &) {
    std::printf("exceptions: rethrowing past %ld\n", limit);
    throw;
  }
}

int main() {
  long wrong = 0;
  std::vector<long> empty;
  try {
    squares(empty, 0);
    ++wrong;
  } catch (const std::invalid_argument &e) {
    std::printf("exceptions: caught '%s'\n", e.what());
  }
  std::vector<long> v(100);
  for (long i = 0; i < 100; ++i)
    v[i] = i - 50;
  long expect = 0;
  for (long x : v)
    expect += x * x;
  try {
    checked(v, 1000);
    ++wrong;
  } catch (const TooLarge &e) {
    std::printf("exceptions: caught '%s' tracked=%d\n", e.what(), tracked);
    wrong += e.total != expect || tracked != 0;
  }
  long expect_small = 0;
  for (long i = 0; i < 100; ++i) {
    v[i] = i % 3;
    expect_small += v[i] * v[i];
  }
  long small = checked(v, 1000);
  wrong += small != expect_small || tracked != 0;
  std::printf("exceptions: total=%ld wrong=%ld\n", small, wrong);
  return wrong != 0;
}
