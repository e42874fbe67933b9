// vadd, hand-written CUDA: c[i] = a[i] + b[i], blocks of 256 (clamped to n), as HPVM's
// runtime launches ../opencl/vadd.c. Usage: vadd_cuda N RUNS | vadd_cuda --probe
#include "cuda_bench.h"

__global__ void vadd(const float *a, const float *b, float *c, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  cuda_probe_or_exit(argc, argv);
  long n = argc > 1 ? atol(argv[1]) : 1 << 20;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  size_t bytes = n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
  vadd_init(a, b, c, n);
  float *da = cuda_copy_in(a, bytes), *db = cuda_copy_in(b, bytes), *dc = cuda_copy_in(c, bytes);
  unsigned block = cuda_local(256, n);
  double *times = (double *)malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up launch
    double t0 = bench_now_ms();
    vadd<<<cuda_blocks(n, block), block>>>(da, db, dc, n);
    CUDA_CHECK(cudaStreamSynchronize(0));
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
  char name[64];
  snprintf(name, sizeof name, "vadd n=%ld", n);
  bench_report(name, "cuda", times, runs, bench_checksum(c, n));
  return 0;
}
