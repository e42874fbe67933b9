// cuda_bench.h - shared by the hand-written CUDA versions (nvcc -O3) of benchmarks/gpu: error
// checks, the device probe and the timing loop. Each version times what the HPVM version
// times (../opencl/bench_common.h's report): RUNS repetitions of one launch + a wait for the
// stream, data resident on the device, after one untimed warm-up launch; copies in and out
// are outside the timing.
#ifndef HPVM_BENCH_GPU_CUDA_BENCH_H
#define HPVM_BENCH_GPU_CUDA_BENCH_H
#include "../opencl/bench_common.h"
#include <cuda_runtime.h>
#include <string.h>

#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    cudaError_t error_ = (call);                                                            \
    if (error_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                         \
              cudaGetErrorString(error_));                                                  \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

// `PROG --probe` prints the device's name and exits 0, or says why there is none and exits 2.
static inline void cuda_probe_or_exit(int argc, char **argv) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
    if (error != cudaSuccess || count == 0) {
      printf("no CUDA device (%s)\n",
             error != cudaSuccess ? cudaGetErrorString(error) : "none found");
      exit(2);
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    exit(0);
  }
  if (error != cudaSuccess || count == 0) {
    fprintf(stderr, "no CUDA device\n");
    exit(2);
  }
}

static inline float *cuda_copy_in(const float *host, size_t bytes) {
  float *device;
  CUDA_CHECK(cudaMalloc(&device, bytes));
  CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  return device;
}

static inline unsigned cuda_blocks(long extent, unsigned block) {
  return (unsigned)((extent + block - 1) / block);
}

// The runtime's work-group for a grid extent: `preferred`, clamped to the extent.
static inline unsigned cuda_local(unsigned preferred, long extent) {
  return extent < (long)preferred ? (unsigned)extent : preferred;
}
#endif
