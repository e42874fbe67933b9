// The C math functions a leaf may call that have no LLVM intrinsic of their own in every
// backend (tanhf, erff, cbrtf, atan2f, ..., and double erf) become math ops; each device
// lowers them (libdevice on CUDA, OpenCL built-ins or LLVM intrinsics through the SPIR-V
// backend), and the leaf runs as a kernel. Checked against libm within 1e-5, relative.
#include <hpvm/hpvm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct __attribute__((__packed__)) { float *x; size_t bx; float *y; size_t by; long n; } RootIn;
void leaf(float *x, size_t bx, float *y, size_t by) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, x, 1, y);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  float v = x[i];
  y[i] = tanhf(v) + erff(v) + atanf(v) + cbrtf(v) + sinhf(v) * 0.01f + coshf(v) * 0.01f +
         asinf(v * 0.1f) + acosf(v * 0.1f) + atan2f(v, 2.0f) + erfcf(v) + expm1f(v * 0.1f) +
         log1pf(v * v) + tanf(v * 0.1f) + (float)erf((double)v) + asinhf(v) +
         acoshf(2.0f + v * v) + atanhf(v * 0.05f);
}
void root(float *x, size_t bx, float *y, size_t by, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, y);
  void *l = __hpvm__createNodeND(1, leaf, n);
  for (int p = 0; p < 4; ++p) __hpvm__bindIn(l, p, p, 0);
}
int main(void) {
  long n = 1000;
  float *x = malloc(n * 4), *y = malloc(n * 4);
  for (long i = 0; i < n; ++i) x[i] = (float)(i - 500) / 100.0f;
  RootIn a = {x, n * 4, y, n * 4, n};
  void *g = __hpvm__launch(0, root, &a);
  __hpvm__wait(g);
  double maxrel = 0;
  for (long i = 0; i < n; ++i) {
    float v = x[i];
    float r = tanhf(v) + erff(v) + atanf(v) + cbrtf(v) + sinhf(v) * 0.01f + coshf(v) * 0.01f +
              asinf(v * 0.1f) + acosf(v * 0.1f) + atan2f(v, 2.0f) + erfcf(v) + expm1f(v * 0.1f) +
              log1pf(v * v) + tanf(v * 0.1f) + (float)erf((double)v) + asinhf(v) +
         acoshf(2.0f + v * v) + atanhf(v * 0.05f);
    double rel = fabs((double)y[i] - r) / (fabs(r) > 1 ? fabs(r) : 1);
    if (rel > maxrel) maxrel = rel;
  }
  printf("libm_kernel: n=%ld within_1e-5=%d\n", n, maxrel < 1e-5);
  return 0;
}
