/* opencl_symbols.h - the OpenCL entry points the runtime loads from libOpenCL.so.1 (X-macro). */
#ifndef HPVM_DEVICE_OPENCL_SYMBOLS_H
#define HPVM_DEVICE_OPENCL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* The few OpenCL types we need, declared here so that the runtime builds without the CL
 * headers; they match the Khronos ABI (cl_platform.h / cl.h). */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint32_t cl_bool;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_uint cl_buffer_create_type;
typedef intptr_t cl_context_properties;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

#define HPVM_CL_SUCCESS 0
#define HPVM_CL_DEVICE_NOT_FOUND (-1)
#define HPVM_CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#define HPVM_CL_OUT_OF_RESOURCES (-5)
#define HPVM_CL_OUT_OF_HOST_MEMORY (-6)
#define HPVM_CL_BUILD_PROGRAM_FAILURE (-11)
#define HPVM_CL_INVALID_VALUE (-30)
#define HPVM_CL_INVALID_BINARY (-42)
#define HPVM_CL_INVALID_KERNEL_NAME (-46)
#define HPVM_CL_INVALID_ARG_SIZE (-51)
#define HPVM_CL_INVALID_WORK_GROUP_SIZE (-54)
#define HPVM_CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define HPVM_CL_TRUE 1u
#define HPVM_CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define HPVM_CL_MEM_READ_WRITE (1u << 0)
#define HPVM_CL_DEVICE_NAME 0x102B
#define HPVM_CL_DEVICE_IL_VERSION 0x105B
#define HPVM_CL_PROGRAM_BUILD_LOG 0x1183
#define HPVM_CL_CONTEXT_PLATFORM 0x1084
#define HPVM_CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define HPVM_CL_BUFFER_CREATE_TYPE_REGION 0x1220

/* cl_buffer_region: a sub-buffer's origin and size in bytes. */
typedef struct hpvm_cl_buffer_region_t {
  size_t origin;
  size_t size;
} hpvm_cl_buffer_region_t;

/* X(name, required, return type, parameter list).  Optional symbols may be NULL (IL programs
 * need an OpenCL 2.1 ICD loader). */
#define HPVM_OPENCL_SYMBOLS(X)                                                                   \
  X(clGetPlatformIDs, 1, cl_int, (cl_uint, cl_platform_id *, cl_uint *))                         \
  X(clGetDeviceIDs, 1, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
  X(clGetDeviceInfo, 1, cl_int, (cl_device_id, cl_uint, size_t, void *, size_t *))              \
  X(clCreateContext, 1, cl_context,                                                             \
    (const cl_context_properties *, cl_uint, const cl_device_id *,                              \
     void (*)(const char *, const void *, size_t, void *), void *, cl_int *))                   \
  X(clReleaseContext, 1, cl_int, (cl_context))                                                  \
  X(clCreateCommandQueue, 1, cl_command_queue,                                                  \
    (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))                          \
  X(clReleaseCommandQueue, 1, cl_int, (cl_command_queue))                                       \
  X(clCreateBuffer, 1, cl_mem, (cl_context, cl_mem_flags, size_t, void *, cl_int *))           \
  X(clReleaseMemObject, 1, cl_int, (cl_mem))                                                    \
  X(clCreateSubBuffer, 0, cl_mem,                                                               \
    (cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *))                      \
  X(clEnqueueWriteBuffer, 1, cl_int,                                                            \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, \
     cl_event *))                                                                               \
  X(clEnqueueReadBuffer, 1, cl_int,                                                             \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,      \
     cl_event *))                                                                               \
  X(clCreateProgramWithBinary, 1, cl_program,                                                   \
    (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **,         \
     cl_int *, cl_int *))                                                                       \
  X(clCreateProgramWithIL, 0, cl_program, (cl_context, const void *, size_t, cl_int *))        \
  X(clBuildProgram, 1, cl_int,                                                                  \
    (cl_program, cl_uint, const cl_device_id *, const char *, void (*)(cl_program, void *),     \
     void *))                                                                                   \
  X(clGetProgramBuildInfo, 1, cl_int, (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *)) \
  X(clReleaseProgram, 1, cl_int, (cl_program))                                                  \
  X(clCreateKernel, 1, cl_kernel, (cl_program, const char *, cl_int *))                         \
  X(clReleaseKernel, 1, cl_int, (cl_kernel))                                                    \
  X(clSetKernelArg, 1, cl_int, (cl_kernel, cl_uint, size_t, const void *))                      \
  X(clEnqueueNDRangeKernel, 1, cl_int,                                                          \
    (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,      \
     cl_uint, const cl_event *, cl_event *))                                                    \
  X(clFinish, 1, cl_int, (cl_command_queue))

typedef struct hpvm_opencl_symbols_t {
  void *library;
#define HPVM_OPENCL_DECLARE(name, required, result, params) result (*name) params;
  HPVM_OPENCL_SYMBOLS(HPVM_OPENCL_DECLARE)
#undef HPVM_OPENCL_DECLARE
} hpvm_opencl_symbols_t;

#endif /* HPVM_DEVICE_OPENCL_SYMBOLS_H */
