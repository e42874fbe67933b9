// sgemm, hand-written CUDA, for the same data, blocks and timing as the HPVM versions:
// * naive (../opencl/sgemm.c): one thread per element of C, 16x16 blocks clamped, guarded;
// * tiled (-DSGEMM_TILED; ../opencl/sgemm_tiled.h): 16x16 blocks, two 16x16 tiles in shared
//   memory, barriers around each strip of k;
// * blocked (-DSGEMM_BLOCKED; sgemm_blocked.h): 128x128 blocks of C, 16x16 threads computing
//   8x8 elements each from registers, 8-wide strips of A (transposed) and B in shared memory.
// * cuBLAS (-DSGEMM_CUBLAS, linked with -lcublas): cublasSgemm, FP32 with the pedantic math
//   mode (no TF32), the library users would pick instead; row-major C = A * B computed as
//   column-major C^T = B^T * A^T.
// nvcc's default contraction (fmad) as hpvm-cc's: the data's products are exact, so the
// checksums agree whatever is fused. Usage: sgemm_cuda M N K RUNS | sgemm_cuda --probe
#include "cuda_bench.h"

#if defined(SGEMM_CUBLAS)
#include <cublas_v2.h>
#define SGEMM_NAME "sgemm"
#define SGEMM_VERSION "cublas"
static void cublas_check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "%s: cuBLAS status %d\n", what, (int)status);
    exit(1);
  }
}
static void launch(const float *A, const float *B, float *C, int m, int n, int k) {
  static cublasHandle_t handle; // made by the warm-up call
  if (!handle) {
    cublas_check(cublasCreate(&handle), "cublasCreate");
    cublas_check(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  const float one = 1.0f, zero = 0.0f;
  cublas_check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero,
                           C, n),
               "cublasSgemm");
}
#elif defined(SGEMM_TILED)
#define SGEMM_NAME "sgemm_tiled"
#define TS 16
__global__ void sgemm(const float *A, const float *B, float *C, int m, int n, int k) {
  __shared__ float As[TS * TS], Bs[TS * TS];
  int tx = threadIdx.x, ty = threadIdx.y;
  int col = blockIdx.x * TS + tx, row = blockIdx.y * TS + ty;
  float sum = 0.0f;
  for (int p0 = 0; p0 < k; p0 += TS) {
    As[ty * TS + tx] = row < m && p0 + tx < k ? A[(long)row * k + p0 + tx] : 0.0f;
    Bs[ty * TS + tx] = col < n && p0 + ty < k ? B[(long)(p0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int p = 0; p < TS; ++p)
      sum += As[ty * TS + p] * Bs[p * TS + tx];
    __syncthreads();
  }
  if (row < m && col < n)
    C[(long)row * n + col] = sum;
}
static void launch(const float *A, const float *B, float *C, int m, int n, int k) {
  dim3 block(TS, TS), grid(cuda_blocks(n, TS), cuda_blocks(m, TS));
  sgemm<<<grid, block>>>(A, B, C, m, n, k);
}
#elif defined(SGEMM_BLOCKED)
#define SGEMM_NAME "sgemm_blocked"
#define BM 128
#define BN 128
#define BK 8
#define TX 16
#define TY 16
#define RM (BM / TY)
#define RN (BN / TX)
__global__ void sgemm(const float *A, const float *B, float *C, int m, int n, int k) {
  __shared__ float As[BK * BM], Bs[BK * BN];
  int tx = threadIdx.x, ty = threadIdx.y;
  int col0 = blockIdx.x * BN, row0 = blockIdx.y * BM;
  int t = ty * TX + tx;
  float acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j)
      acc[i][j] = 0.0f;
  for (int p0 = 0; p0 < k; p0 += BK) {
    for (int e = t; e < BM * BK; e += TX * TY) {
      int r = e / BK, q = e % BK;
      int row = row0 + r, p = p0 + q;
      As[q * BM + r] = row < m && p < k ? A[(long)row * k + p] : 0.0f;
    }
    for (int e = t; e < BK * BN; e += TX * TY) {
      int q = e / BN, c = e % BN;
      int col = col0 + c, p = p0 + q;
      Bs[q * BN + c] = col < n && p < k ? B[(long)p * n + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < BK; ++q) {
      float a[RM], b[RN];
#pragma unroll
      for (int i = 0; i < RM; ++i)
        a[i] = As[q * BM + ty + TY * i];
#pragma unroll
      for (int j = 0; j < RN; ++j)
        b[j] = Bs[q * BN + tx + TX * j];
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j)
          acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      int row = row0 + ty + TY * i, col = col0 + tx + TX * j;
      if (row < m && col < n)
        C[(long)row * n + col] = acc[i][j];
    }
}
static void launch(const float *A, const float *B, float *C, int m, int n, int k) {
  dim3 block(TX, TY), grid(cuda_blocks(n, BN), cuda_blocks(m, BM));
  sgemm<<<grid, block>>>(A, B, C, m, n, k);
}
#else
#define SGEMM_NAME "sgemm"
__global__ void sgemm(const float *A, const float *B, float *C, int m, int n, int k) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= n || row >= m)
    return;
  float sum = 0.0f;
  for (int p = 0; p < k; ++p)
    sum += A[(long)row * k + p] * B[(long)p * n + col];
  C[(long)row * n + col] = sum;
}
static void launch(const float *A, const float *B, float *C, int m, int n, int k) {
  dim3 block(cuda_local(16, n), cuda_local(16, m));
  dim3 grid(cuda_blocks(n, block.x), cuda_blocks(m, block.y));
  sgemm<<<grid, block>>>(A, B, C, m, n, k);
}
#endif

#ifndef SGEMM_VERSION
#define SGEMM_VERSION "cuda"
#endif

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
  double *times = (double *)malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up launch
    double t0 = bench_now_ms();
    launch(dA, dB, dC, m, n, k);
    CUDA_CHECK(cudaStreamSynchronize(0));
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(C, dC, bytes_C, cudaMemcpyDeviceToHost));
  char name[64];
  snprintf(name, sizeof name, SGEMM_NAME " %dx%dx%d", m, n, k);
  bench_report(name, SGEMM_VERSION, times, runs, bench_checksum(C, (size_t)m * n));
  return 0;
}
