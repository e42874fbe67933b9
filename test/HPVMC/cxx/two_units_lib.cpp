// The plain C++ unit of two_units_main.cpp: static constructors fill a table
// and build the polynomials before main runs.
#include "two_units.h"

#include <string>

std::vector<const char *> &registry() {
  static std::vector<const char *> names;
  return names;
}

Registered::Registered(const char *name) { registry().push_back(name); }

namespace {
class Quadratic : public Polynomial {
public:
  Quadratic(std::string label, double a, double b, double c) : label(std::move(label)) {
    k[0] = a;
    k[1] = b;
    k[2] = c;
  }
  const char *name() const override { return label.c_str(); }
  double coefficient(int i) const override { return k[i]; }

private:
  std::string label;
  double k[3];
};

Registered lib("lib unit");
const Quadratic square("square", 0.0, 0.0, 1.0);
const Quadratic shifted("shifted", 1.5, -2.0, 0.25);
} // namespace

const std::vector<const Polynomial *> &polynomials() {
  static const std::vector<const Polynomial *> all{&square, &shifted};
  return all;
}
