// stencil, hand-written CUDA: the Parboil 7-point step of ../opencl/stencil.c over the
// interior, blocks of 8x8x4 clamped to it, guarded; the buffers swapped between steps.
// Built with --fmad=false, as the HPVM version with -ffp-contract=off: the same bits.
// Usage: stencil_cuda NX NY NZ RUNS | stencil_cuda --probe
#include "cuda_bench.h"

#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))

__global__ void stencil(float c0, float c1, const float *A0, float *Anext, int nx, int ny,
                        int nz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  int k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i < nx - 1 && j < ny - 1 && k < nz - 1)
    Anext[Index3D(nx, ny, i, j, k)] =
        c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
              A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
              A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
        A0[Index3D(nx, ny, i, j, k)] * c0;
}

int main(int argc, char **argv) {
  cuda_probe_or_exit(argc, argv);
  int nx = argc > 1 ? atoi(argv[1]) : 128, ny = argc > 2 ? atoi(argv[2]) : 128,
      nz = argc > 3 ? atoi(argv[3]) : 32, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t size = (size_t)nx * ny * nz, bytes = size * sizeof(float);
  float *A0 = (float *)malloc(bytes), *Anext = (float *)malloc(bytes);
  stencil_init(A0, Anext, nx, ny, nz);
  float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;
  float *d0 = cuda_copy_in(A0, bytes), *d1 = cuda_copy_in(Anext, bytes);
  long gx = nx - 2, gy = ny - 2, gz = nz - 2;
  dim3 block(cuda_local(8, gx), cuda_local(8, gy), cuda_local(4, gz));
  dim3 grid(cuda_blocks(gx, block.x), cuda_blocks(gy, block.y), cuda_blocks(gz, block.z));
  double *times = (double *)malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up step
    double t0 = bench_now_ms();
    stencil<<<grid, block>>>(c0, c1, d0, d1, nx, ny, nz);
    CUDA_CHECK(cudaStreamSynchronize(0));
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
    float *t = d0;
    d0 = d1;
    d1 = t;
  }
  CUDA_CHECK(cudaGetLastError());
  // The last step's result is in d0 (swapped after it).
  CUDA_CHECK(cudaMemcpy(A0, d0, bytes, cudaMemcpyDeviceToHost));
  char name[64];
  snprintf(name, sizeof name, "stencil %dx%dx%d", nx, ny, nz);
  bench_report(name, "cuda", times, runs, bench_checksum(A0, size));
  return 0;
}
