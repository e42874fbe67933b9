// vadd, hand-written OpenCL: the same computation, data and work-groups as vadd.c (1-D, 256
// clamped to n, global size rounded up to it, guarded). The buffers are written once before
// an untimed warm-up launch; each timed run is clEnqueueNDRangeKernel + clFinish; the result
// is read back after the runs (not timed). Usage: vadd_cl N RUNS | vadd_cl --probe
#include "bench_common.h"
#include "cl_host.h"

static const char *source =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, long n) {\n"
    "  long i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(int argc, char **argv) {
  ClEnv env;
  cl_probe_or_die(argc, argv, &env);
  long n = argc > 1 ? atol(argv[1]) : 1 << 20;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  vadd_init(a, b, c, n);
  cl_kernel k = cl_build_kernel(&env, source, "vadd");
  cl_mem da = cl_buffer_from(&env, a, bytes), db = cl_buffer_from(&env, b, bytes),
         dc = cl_buffer_from(&env, c, bytes);
  cl_long nl = n;
  CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &da));
  CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &db));
  CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dc));
  CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_long), &nl));
  size_t local = cl_local(256, n), global = cl_round_up(n, local);
  CL_CHECK(clEnqueueNDRangeKernel(env.queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  CL_CHECK(clFinish(env.queue));
  double *times = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = bench_now_ms();
    CL_CHECK(clEnqueueNDRangeKernel(env.queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CL_CHECK(clFinish(env.queue));
    times[r] = bench_now_ms() - t0;
  }
  CL_CHECK(clEnqueueReadBuffer(env.queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
  char name[64];
  snprintf(name, sizeof name, "vadd n=%ld", n);
  bench_report(name, "opencl", times, runs, bench_checksum(c, n));
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(k);
  cl_env_close(&env);
  return 0;
}
