// The interface between two_units_main.cpp and two_units_lib.cpp.
#ifndef TWO_UNITS_H
#define TWO_UNITS_H
#include <vector>

std::vector<const char *> &registry();

// Adds its name to registry() when constructed (at static initialization).
struct Registered {
  explicit Registered(const char *name);
};

class Polynomial {
public:
  virtual ~Polynomial() = default;
  virtual const char *name() const = 0;
  virtual double coefficient(int k) const = 0;
  // The same evaluation order as the leaf: c0 + x * (c1 + x * c2).
  double at(double x) const { return coefficient(0) + x * (coefficient(1) + x * coefficient(2)); }
};

const std::vector<const Polynomial *> &polynomials();
#endif
