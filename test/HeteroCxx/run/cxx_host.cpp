// A C++ host as users write one: <iostream>, a global std::string (a static
// constructor), a std::vector whose data() is named in the launch's inputs and
// again in its outputs (two calls of a function that writes nothing: one
// buffer), an exception thrown and caught around the launch.
#include <heterocc.h>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

static std::string label = "cxx_host:";

void twice(float *a, size_t bytes, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 2, a, bytes, n, 1, a, bytes, "twice");
    a[i] *= 2.0f;
  }
  __hetero_section_end(section);
}

int main() {
  std::vector<float> v(100);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.5f * (float)i;
  try {
    void *graph = __hetero_launch((void *)twice, 2, v.data(), v.size() * sizeof(float),
                                  (long)v.size(), 1, v.data(), v.size() * sizeof(float));
    __hetero_wait(graph);
    throw std::runtime_error("caught");
  } catch (const std::exception &e) {
    std::cout << label << " v[1]=" << v[1] << " v[99]=" << v[99] << " " << e.what() << std::endl;
  }
  return v[99] != 99.0f;
}
