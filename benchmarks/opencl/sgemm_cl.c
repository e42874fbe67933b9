// sgemm, hand-written OpenCL, for the same data, work-groups and timing as the HPVM versions:
// * naive (sgemm.c): C = A * B, 2-D, x: column over n, y: row over m, 16x16 clamped, global
//   size rounded up, guarded;
// * tiled (SGEMM_TILED, built by sgemm_tiled_cl.c; the algorithm of sgemm_tiled.h): 16x16
//   work-groups, two __local 16x16 tiles, barriers around each strip of k.
// The buffers are written once; one untimed warm-up launch, then RUNS timed runs, each
// clEnqueueNDRangeKernel + clFinish; C is read back after the runs (not timed).
// Usage: sgemm_cl M N K RUNS | sgemm_cl --probe
#include "bench_common.h"
#include "cl_host.h"

#ifdef SGEMM_TILED
#define SGEMM_NAME "sgemm_tiled"
static const char *source =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define TS 16\n"
    "__kernel void sgemm_tiled(__global const float *A, __global const float *B,\n"
    "                          __global float *C, int m, int n, int k) {\n"
    "  __local float As[TS * TS], Bs[TS * TS];\n"
    "  int tx = get_local_id(0), ty = get_local_id(1);\n"
    "  int col = get_group_id(0) * TS + tx, row = get_group_id(1) * TS + ty;\n"
    "  float sum = 0.0f;\n"
    "  for (int p0 = 0; p0 < k; p0 += TS) {\n"
    "    As[ty * TS + tx] = row < m && p0 + tx < k ? A[(long)row * k + p0 + tx] : 0.0f;\n"
    "    Bs[ty * TS + tx] = col < n && p0 + ty < k ? B[(long)(p0 + ty) * n + col] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int p = 0; p < TS; ++p)\n"
    "      sum += As[ty * TS + p] * Bs[p * TS + tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (row < m && col < n)\n"
    "    C[(long)row * n + col] = sum;\n"
    "}\n";
#else
#define SGEMM_NAME "sgemm"
static const char *source =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void sgemm(__global const float *A, __global const float *B,\n"
    "                    __global float *C, int m, int n, int k) {\n"
    "  int col = get_global_id(0), row = get_global_id(1);\n"
    "  if (col >= n || row >= m) return;\n"
    "  float sum = 0.0f;\n"
    "  for (int p = 0; p < k; ++p)\n"
    "    sum += A[(long)row * k + p] * B[(long)p * n + col];\n"
    "  C[(long)row * n + col] = sum;\n"
    "}\n";
#endif

int main(int argc, char **argv) {
  ClEnv env;
  cl_probe_or_die(argc, argv, &env);
  int m = argc > 1 ? atoi(argv[1]) : 512, n = argc > 2 ? atoi(argv[2]) : 512,
      k = argc > 3 ? atoi(argv[3]) : 512, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float);
  float *A = malloc(bytes_A), *B = malloc(bytes_B), *C = malloc(bytes_C);
  sgemm_init(A, B, C, m, n, k);
  cl_kernel kern = cl_build_kernel(&env, source, SGEMM_NAME);
  cl_mem dA = cl_buffer_from(&env, A, bytes_A), dB = cl_buffer_from(&env, B, bytes_B),
         dC = cl_buffer_from(&env, C, bytes_C);
  CL_CHECK(clSetKernelArg(kern, 0, sizeof(cl_mem), &dA));
  CL_CHECK(clSetKernelArg(kern, 1, sizeof(cl_mem), &dB));
  CL_CHECK(clSetKernelArg(kern, 2, sizeof(cl_mem), &dC));
  CL_CHECK(clSetKernelArg(kern, 3, sizeof(int), &m));
  CL_CHECK(clSetKernelArg(kern, 4, sizeof(int), &n));
  CL_CHECK(clSetKernelArg(kern, 5, sizeof(int), &k));
#ifdef SGEMM_TILED
  size_t local[2] = {16, 16}; /* the tile: the kernel guards the partial ones */
#else
  size_t local[2] = {cl_local(16, n), cl_local(16, m)};
#endif
  size_t global[2] = {cl_round_up(n, local[0]), cl_round_up(m, local[1])};
  CL_CHECK(clEnqueueNDRangeKernel(env.queue, kern, 2, NULL, global, local, 0, NULL, NULL));
  CL_CHECK(clFinish(env.queue));
  double *times = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = bench_now_ms();
    CL_CHECK(clEnqueueNDRangeKernel(env.queue, kern, 2, NULL, global, local, 0, NULL, NULL));
    CL_CHECK(clFinish(env.queue));
    times[r] = bench_now_ms() - t0;
  }
  CL_CHECK(clEnqueueReadBuffer(env.queue, dC, CL_TRUE, 0, bytes_C, C, 0, NULL, NULL));
  char name[64];
  snprintf(name, sizeof name, SGEMM_NAME " %dx%dx%d", m, n, k);
  bench_report(name, "opencl", times, runs, bench_checksum(C, (size_t)m * n));
  clReleaseMemObject(dA);
  clReleaseMemObject(dB);
  clReleaseMemObject(dC);
  clReleaseKernel(kern);
  cl_env_close(&env);
  return 0;
}
