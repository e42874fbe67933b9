// stencil, hand-written OpenCL: the same step, data and work-groups as stencil.c (3-D over
// the interior, 8x8x4 clamped to it, global size rounded up, guarded). The buffers are
// written once; one untimed warm-up step, then RUNS timed steps, each
// clEnqueueNDRangeKernel + clFinish, the buffers swapped between steps; the result is read
// back after the runs (not timed). Usage: stencil_cl NX NY NZ RUNS | stencil_cl --probe
#include "bench_common.h"
#include "cl_host.h"

static const char *source =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))\n"
    "__kernel void stencil(float c0, float c1, __global const float *A0,\n"
    "                      __global float *Anext, int nx, int ny, int nz) {\n"
    "  int i = get_global_id(0) + 1, j = get_global_id(1) + 1, k = get_global_id(2) + 1;\n"
    "  if (i < nx - 1 && j < ny - 1 && k < nz - 1)\n"
    "    Anext[Index3D(nx, ny, i, j, k)] =\n"
    "        c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +\n"
    "              A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +\n"
    "              A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -\n"
    "        A0[Index3D(nx, ny, i, j, k)] * c0;\n"
    "}\n";

int main(int argc, char **argv) {
  ClEnv env;
  cl_probe_or_die(argc, argv, &env);
  int nx = argc > 1 ? atoi(argv[1]) : 128, ny = argc > 2 ? atoi(argv[2]) : 128,
      nz = argc > 3 ? atoi(argv[3]) : 32, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t size = (size_t)nx * ny * nz, bytes = size * sizeof(float);
  float *A0 = malloc(bytes), *Anext = malloc(bytes);
  stencil_init(A0, Anext, nx, ny, nz);
  float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;
  cl_kernel k = cl_build_kernel(&env, source, "stencil");
  cl_mem d0 = cl_buffer_from(&env, A0, bytes), d1 = cl_buffer_from(&env, Anext, bytes);
  size_t grid[3] = {nx - 2, ny - 2, nz - 2};
  size_t local[3] = {cl_local(8, grid[0]), cl_local(8, grid[1]), cl_local(4, grid[2])};
  size_t global[3] = {cl_round_up(grid[0], local[0]), cl_round_up(grid[1], local[1]),
                      cl_round_up(grid[2], local[2])};
  CL_CHECK(clSetKernelArg(k, 0, sizeof(float), &c0));
  CL_CHECK(clSetKernelArg(k, 1, sizeof(float), &c1));
  CL_CHECK(clSetKernelArg(k, 4, sizeof(int), &nx));
  CL_CHECK(clSetKernelArg(k, 5, sizeof(int), &ny));
  CL_CHECK(clSetKernelArg(k, 6, sizeof(int), &nz));
  double *times = malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up step
    double t0 = bench_now_ms();
    CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &d0));
    CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &d1));
    CL_CHECK(clEnqueueNDRangeKernel(env.queue, k, 3, NULL, global, local, 0, NULL, NULL));
    CL_CHECK(clFinish(env.queue));
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
    cl_mem t = d0;
    d0 = d1;
    d1 = t;
  }
  // The last step's result is in d0 (swapped after it).
  CL_CHECK(clEnqueueReadBuffer(env.queue, d0, CL_TRUE, 0, bytes, A0, 0, NULL, NULL));
  char name[64];
  snprintf(name, sizeof name, "stencil %dx%dx%d", nx, ny, nz);
  bench_report(name, "opencl", times, runs, bench_checksum(A0, size));
  clReleaseMemObject(d0);
  clReleaseMemObject(d1);
  clReleaseKernel(k);
  cl_env_close(&env);
  return 0;
}
