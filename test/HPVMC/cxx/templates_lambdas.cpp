// Host code in modern C++ around an HPVM-C graph: a class template that owns
// its buffers (std::vector), a function template, lambdas (captured by
// std::function, passed to std::sort and std::transform), std::unique_ptr,
// range-for, auto and a namespace. The graph is a 2-D leaf (a blur of a
// width x height image, one instance per pixel).
#include <hpvm/hpvm.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

struct __attribute__((__packed__)) BlurOut {
  size_t bytes_out;
};
struct __attribute__((__packed__)) RootIn {
  float *in;
  size_t bytes_in;
  float *out;
  size_t bytes_out;
  long width;
  long height;
};

BlurOut blur(float *in, size_t bytes_in, float *out, size_t bytes_out, long width, long height) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *self = __hpvm__getNode();
  long x = __hpvm__getNodeInstanceID_x(self);
  long y = __hpvm__getNodeInstanceID_y(self);
  float s = 0;
  int count = 0;
  for (long dy = -1; dy <= 1; ++dy)
    for (long dx = -1; dx <= 1; ++dx) {
      long xx = x + dx, yy = y + dy;
      if (xx >= 0 && xx < width && yy >= 0 && yy < height) {
        s += in[yy * width + xx];
        ++count;
      }
    }
  out[y * width + x] = s / count;
  __hpvm__return(1, bytes_out);
}

void root(float *in, size_t bytes_in, float *out, size_t bytes_out, long width, long height) {
  __hpvm__hint(hpvm::CPU_TARGET);
  __hpvm__attributes(1, in, 1, out);
  void *b = __hpvm__createNodeND(2, blur, width, height);
  for (int i = 0; i < 6; ++i)
    __hpvm__bindIn(b, i, i, 0);
}

namespace image {

template <typename T> class Image {
public:
  Image(long width, long height) : width(width), height(height), pixels(width * height) {}
  T &at(long x, long y) { return pixels[y * width + x]; }
  long width, height;
  std::vector<T> pixels;
};

template <typename T> T checksum(const std::vector<T> &values) {
  return std::accumulate(values.begin(), values.end(), T(0),
                         [](T acc, T v) { return acc * T(0.5) + v; });
}

} // namespace image

int main() {
  using image::Image;
  long wrong = 0;
  for (auto [w, h] : {std::pair<long, long>{37, 23}, {64, 1}, {1, 1}}) {
    auto in = std::make_unique<Image<float>>(w, h);
    Image<float> out(w, h), ref(w, h);
    std::function<float(long, long)> pattern = [w](long x, long y) {
      return static_cast<float>((x * 7 + y * 13 + w) % 17);
    };
    for (long y = 0; y < h; ++y)
      for (long x = 0; x < w; ++x)
        in->at(x, y) = pattern(x, y);
    for (long y = 0; y < h; ++y)
      for (long x = 0; x < w; ++x) {
        float s = 0;
        int count = 0;
        for (long dy = -1; dy <= 1; ++dy)
          for (long dx = -1; dx <= 1; ++dx) {
            long xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < w && yy >= 0 && yy < h) {
              s += in->at(xx, yy);
              ++count;
            }
          }
        ref.at(x, y) = s / count;
      }
    RootIn args{in->pixels.data(), in->pixels.size() * sizeof(float), out.pixels.data(),
                out.pixels.size() * sizeof(float), w, h};
    llvm_hpvm_track_mem(args.in, args.bytes_in);
    llvm_hpvm_track_mem(args.out, args.bytes_out);
    void *graph = __hpvm__launch(0, root, &args);
    __hpvm__wait(graph);
    llvm_hpvm_request_mem(args.out, args.bytes_out);
    llvm_hpvm_untrack_mem(args.in);
    llvm_hpvm_untrack_mem(args.out);
    wrong += !std::equal(out.pixels.begin(), out.pixels.end(), ref.pixels.begin());
    std::vector<float> sorted = out.pixels;
    std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
    std::vector<float> doubled(sorted.size());
    std::transform(sorted.begin(), sorted.end(), doubled.begin(), [](float v) { return 2 * v; });
    std::printf("templates_lambdas: %ldx%ld max=%.4f checksum=%.4f\n", w, h, sorted.front(),
                image::checksum(doubled));
  }
  std::printf("templates_lambdas: wrong=%ld\n", wrong);
  return wrong != 0;
}
