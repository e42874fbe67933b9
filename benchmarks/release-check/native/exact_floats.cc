// exact_floats.cc - linked into both builds of the release's parboil sgemm, whose io.cc writes
// the result matrix as text with `f << v[i]` (6 significant digits: two different floats can
// print alike). A static constructor installs a global locale whose num_put prints every
// floating-point value with %.9g, enough to tell any two floats apart, so comparing the output
// files compares the result bit for bit. Nothing of the release's code or its compile changes:
// the stream takes the global locale when io.cc constructs it.
#include <cstdio>
#include <locale>

namespace {
struct ExactFloatPut : std::num_put<char> {
  iter_type put_chars(iter_type out, const char *buf, int n) const {
    for (int i = 0; i < n; i++)
      *out++ = buf[i];
    return out;
  }
  iter_type do_put(iter_type out, std::ios_base &, char, double v) const override {
    char buf[64];
    return put_chars(out, buf, snprintf(buf, sizeof buf, "%.9g", v));
  }
  iter_type do_put(iter_type out, std::ios_base &, char, long double v) const override {
    char buf[64];
    return put_chars(out, buf, snprintf(buf, sizeof buf, "%.9Lg", v));
  }
};

struct Install {
  Install() { std::locale::global(std::locale(std::locale(), new ExactFloatPut)); }
} install;
} // namespace
