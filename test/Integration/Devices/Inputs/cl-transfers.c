/* cl-transfers.c - an OpenCL library for HPVM_OPENCL_LIBRARY that counts the transfers the
 * runtime asks for: it links the real ICD loader (every other entry point resolves there)
 * and wraps clEnqueueWriteBuffer / clEnqueueReadBuffer, printing each one's size and, at
 * exit, the totals on stderr. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int writes, reads;

static void report(void) { fprintf(stderr, "transfers: writes=%d reads=%d\n", writes, reads); }

__attribute__((constructor)) static void start(void) { atexit(report); }

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                            size_t offset, size_t size, const void *host, cl_uint count,
                            const cl_event *wait, cl_event *event) {
  static cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "clEnqueueWriteBuffer");
  ++writes;
  fprintf(stderr, "transfer: %zu bytes to the device\n", size);
  return real(queue, buffer, blocking, offset, size, host, count, wait, event);
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                           size_t offset, size_t size, void *host, cl_uint count,
                           const cl_event *wait, cl_event *event) {
  static cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                        const cl_event *, cl_event *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "clEnqueueReadBuffer");
  ++reads;
  fprintf(stderr, "transfer: %zu bytes to the host\n", size);
  return real(queue, buffer, blocking, offset, size, host, count, wait, event);
}
