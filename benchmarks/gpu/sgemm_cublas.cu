// sgemm through cuBLAS (cublasSgemm, FP32, the default math mode: no TF32), the library users
// would pick instead: the same data and timing as the HPVM versions, row-major C = A * B
// computed as column-major C^T = B^T * A^T. Usage: sgemm_cublas M N K RUNS
#include "cuda_bench.h"
#include <cublas_v2.h>

#define CUBLAS_CHECK(call)                                                                  \
  do {                                                                                      \
    cublasStatus_t status_ = (call);                                                        \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call,           \
              (int)status_);                                                                \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

int main(int argc, char **argv) {
  cuda_probe_or_exit(argc, argv);
  int m = argc > 1 ? atoi(argv[1]) : 512, n = argc > 2 ? atoi(argv[2]) : 512,
      k = argc > 3 ? atoi(argv[3]) : 512, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float);
  float *A = (float *)malloc(bytes_A), *B = (float *)malloc(bytes_B),
        *C = (float *)malloc(bytes_C);
  sgemm_init(A, B, C, m, n, k);
  float *dA = cuda_copy_in(A, bytes_A), *dB = cuda_copy_in(B, bytes_B),
        *dC = cuda_copy_in(C, bytes_C);
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  const float one = 1.0f, zero = 0.0f;
  double *times = (double *)malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up call
    double t0 = bench_now_ms();
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dB, n, dA, k,
                             &zero, dC, n));
    CUDA_CHECK(cudaStreamSynchronize(0));
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
  }
  CUDA_CHECK(cudaMemcpy(C, dC, bytes_C, cudaMemcpyDeviceToHost));
  char name[64];
  snprintf(name, sizeof name, "sgemm %dx%dx%d", m, n, k);
  bench_report(name, "cublas", times, runs, bench_checksum(C, (size_t)m * n));
  CUBLAS_CHECK(cublasDestroy(handle));
  return 0;
}
