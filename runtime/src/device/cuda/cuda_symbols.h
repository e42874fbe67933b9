/* cuda_symbols.h - the CUDA driver entry points loaded from libcuda.so.1 at run time (X-macro). */
#ifndef HPVM_DEVICE_CUDA_SYMBOLS_H
#define HPVM_DEVICE_CUDA_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* The driver API types we use, declared here (ABI of cuda.h) so that the runtime builds
 * without the CUDA toolkit. */
typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;

typedef struct hpvm_cu_launch_attribute_t {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
} hpvm_cu_launch_attribute_t;

typedef struct hpvm_cu_launch_config_t {
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_memory_bytes;
  CUstream stream;
  hpvm_cu_launch_attribute_t *attributes;
  unsigned attribute_count;
} hpvm_cu_launch_config_t;

#define HPVM_CUDA_SUCCESS 0
#define HPVM_CUDA_ERROR_INVALID_VALUE 1
#define HPVM_CUDA_ERROR_OUT_OF_MEMORY 2
#define HPVM_CUDA_ERROR_NOT_INITIALIZED 3
#define HPVM_CUDA_ERROR_DEINITIALIZED 4
#define HPVM_CUDA_ERROR_NO_DEVICE 100
#define HPVM_CUDA_ERROR_INVALID_DEVICE 101
#define HPVM_CUDA_ERROR_INVALID_IMAGE 200
#define HPVM_CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define HPVM_CUDA_ERROR_INVALID_PTX 218
#define HPVM_CUDA_ERROR_NOT_FOUND 500
#define HPVM_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701
#define HPVM_CU_JIT_OPTIMIZATION_LEVEL 7
#define HPVM_CU_JIT_ERROR_LOG_BUFFER 5
#define HPVM_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define HPVM_CU_STREAM_NON_BLOCKING 1
/* The calling thread's default stream (CU_STREAM_PER_THREAD): work of different threads on it
 * runs concurrently, and it synchronizes with that thread's work only. */
#define HPVM_CU_STREAM_PER_THREAD ((CUstream)(uintptr_t)0x2)
#define HPVM_CU_EVENT_DISABLE_TIMING 2
#define HPVM_CU_MEM_ATTACH_GLOBAL 1
#define HPVM_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4

/* X(field, exported symbol, required, return type, parameters).  The symbol is the versioned
 * name cuda.h maps the API name to (cuMemAlloc -> cuMemAlloc_v2). */
#define HPVM_CUDA_SYMBOLS(X)                                                                     \
  X(cuInit, "cuInit", 1, CUresult, (unsigned))                                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount", 1, CUresult, (int *))                                 \
  X(cuDeviceGet, "cuDeviceGet", 1, CUresult, (CUdevice *, int))                                 \
  X(cuDeviceGetName, "cuDeviceGetName", 1, CUresult, (char *, int, CUdevice))                   \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1, CUresult, (CUcontext *, CUdevice)) \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1, CUresult, (CUdevice))         \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", 1, CUresult, (CUcontext))                          \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", 1, CUresult, (CUcontext *))                          \
  X(cuCtxSynchronize, "cuCtxSynchronize", 1, CUresult, (void))                                  \
  X(cuGetErrorName, "cuGetErrorName", 1, CUresult, (CUresult, const char **))                   \
  X(cuGetErrorString, "cuGetErrorString", 1, CUresult, (CUresult, const char **))               \
  X(cuMemAlloc, "cuMemAlloc_v2", 1, CUresult, (CUdeviceptr *, size_t))                          \
  X(cuMemAllocManaged, "cuMemAllocManaged", 0, CUresult, (CUdeviceptr *, size_t, unsigned))    \
  X(cuMemFree, "cuMemFree_v2", 1, CUresult, (CUdeviceptr))                                      \
  X(cuMemcpyAsync, "cuMemcpyAsync", 1, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream))  \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 1, CUresult,                                     \
    (CUdeviceptr, const void *, size_t, CUstream))                                              \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 1, CUresult,                                     \
    (void *, CUdeviceptr, size_t, CUstream))                                                    \
  X(cuMemsetD32Async, "cuMemsetD32Async", 1, CUresult, (CUdeviceptr, unsigned, size_t, CUstream)) \
  X(cuMemsetD16Async, "cuMemsetD16Async", 1, CUresult,                                          \
    (CUdeviceptr, unsigned short, size_t, CUstream))                                            \
  X(cuModuleLoadData, "cuModuleLoadData", 1, CUresult, (CUmodule *, const void *))              \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 1, CUresult,                                      \
    (CUmodule *, const void *, unsigned, CUjit_option *, void **))                              \
  X(cuModuleUnload, "cuModuleUnload", 1, CUresult, (CUmodule))                                  \
  X(cuModuleGetFunction, "cuModuleGetFunction", 1, CUresult, (CUfunction *, CUmodule, const char *)) \
  X(cuLaunchKernel, "cuLaunchKernel", 1, CUresult,                                              \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
     void **, void **))                                                                         \
  X(cuLaunchKernelEx, "cuLaunchKernelEx", 0, CUresult,                                          \
    (const hpvm_cu_launch_config_t *, CUfunction, void **, void **))                            \
  X(cuStreamCreate, "cuStreamCreate", 1, CUresult, (CUstream *, unsigned))                      \
  X(cuStreamDestroy, "cuStreamDestroy_v2", 1, CUresult, (CUstream))                             \
  X(cuStreamSynchronize, "cuStreamSynchronize", 1, CUresult, (CUstream))                        \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", 1, CUresult, (CUstream, CUevent, unsigned))         \
  X(cuEventCreate, "cuEventCreate", 1, CUresult, (CUevent *, unsigned))                         \
  X(cuEventDestroy, "cuEventDestroy_v2", 1, CUresult, (CUevent))                                \
  X(cuEventRecord, "cuEventRecord", 1, CUresult, (CUevent, CUstream))                           \
  X(cuEventSynchronize, "cuEventSynchronize", 1, CUresult, (CUevent))

typedef struct hpvm_cuda_symbols_t {
  void *library;
#define HPVM_CUDA_DECLARE(field, symbol, required, result, params) result (*field) params;
  HPVM_CUDA_SYMBOLS(HPVM_CUDA_DECLARE)
#undef HPVM_CUDA_DECLARE
} hpvm_cuda_symbols_t;

#endif /* HPVM_DEVICE_CUDA_SYMBOLS_H */
