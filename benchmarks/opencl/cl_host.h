// Minimal OpenCL host helpers for the hand-written versions: the first device of the first
// platform that has one (PoCL's CPU device here), a context, an in-order queue, and a
// program built from OpenCL C source with clCreateProgramWithSource.
#ifndef HPVM_BENCH_OPENCL_CL_HOST_H
#define HPVM_BENCH_OPENCL_CL_HOST_H
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_CHECK(call)                                                                   \
  do {                                                                                   \
    cl_int err_ = (call);                                                                \
    if (err_ != CL_SUCCESS) {                                                            \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)err_);   \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

typedef struct {
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
} ClEnv;

// Returns 0 and fills env, or 1 when no platform has a device.
static int cl_env_open(ClEnv *env) {
  cl_platform_id platforms[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS || np == 0)
    return 1;
  for (cl_uint p = 0; p < np; ++p) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &env->device, &nd) ==
            CL_SUCCESS &&
        nd > 0) {
      cl_int err;
      env->context = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
      CL_CHECK(err);
      env->queue = clCreateCommandQueue(env->context, env->device, 0, &err);
      CL_CHECK(err);
      return 0;
    }
  }
  return 1;
}

static void cl_env_close(ClEnv *env) {
  clReleaseCommandQueue(env->queue);
  clReleaseContext(env->context);
}

static cl_kernel cl_build_kernel(ClEnv *env, const char *source, const char *name) {
  cl_int err;
  cl_program program = clCreateProgramWithSource(env->context, 1, &source, NULL, &err);
  CL_CHECK(err);
  if (clBuildProgram(program, 1, &env->device, "", NULL, NULL) != CL_SUCCESS) {
    char log[16384];
    clGetProgramBuildInfo(program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "build of %s failed:\n%s\n", name, log);
    exit(1);
  }
  cl_kernel kernel = clCreateKernel(program, name, &err);
  CL_CHECK(err);
  clReleaseProgram(program);
  return kernel;
}

static cl_mem cl_buffer_from(ClEnv *env, const void *host, size_t bytes) {
  cl_int err;
  cl_mem buf = clCreateBuffer(env->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CL_CHECK(err);
  CL_CHECK(clEnqueueWriteBuffer(env->queue, buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  return buf;
}

// The global size rounded up to a multiple of the local size (the kernels guard).
static size_t cl_round_up(size_t global, size_t local) {
  return (global + local - 1) / local * local;
}

// HPVM's runtime choice of the work-group extent in one dimension: the default clamped
// to the grid.
static size_t cl_local(size_t preferred, size_t global) {
  return global < preferred ? global : preferred;
}

// "--probe": exits 0 when a device is there, else prints the reason and exits 2.
static void cl_probe_or_die(int argc, char **argv, ClEnv *env) {
  int none = cl_env_open(env);
  if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
    if (none)
      printf("no OpenCL device\n");
    else {
      char name[256] = "";
      clGetDeviceInfo(env->device, CL_DEVICE_NAME, sizeof name, name, NULL);
      printf("%s\n", name);
    }
    exit(none ? 2 : 0);
  }
  if (none) {
    fprintf(stderr, "no OpenCL device\n");
    exit(2);
  }
}
#endif
