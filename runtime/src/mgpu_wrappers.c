/* mgpu_wrappers.c - the mgpu* functions MLIR's gpu-to-llvm lowering calls, over our CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/cuda/cuda_device.h"
#include "runtime.h"

/* Generated host code has no way to handle an error, so every failure is reported and ends
 * the program (exit status 1) instead of continuing with a NULL handle. */
static hpvm_device_t *mgpu_device(const char *what) {
  hpvm_rt_device_t *device = NULL;
  hpvm_rt_check_at(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device), what);
  return device;
}

static void mgpu_call_end(hpvm_device_t *device, CUresult result, const char *what) {
  hpvm_cuda_device_leave(device);
  if (result != HPVM_CUDA_SUCCESS)
    hpvm_rt_check_at(hpvm_cuda_status(hpvm_cuda_device_symbols(device), result, what), what);
}

/* Evaluates `call` (which may use `cu`) with the CUDA context current, exiting on error. */
#define MGPU_CALL(what, call)                                                                    \
  do {                                                                                           \
    hpvm_device_t *mgpu_device_ = mgpu_device(what);                                             \
    const hpvm_cuda_symbols_t *cu = hpvm_cuda_device_symbols(mgpu_device_);                      \
    hpvm_rt_check_at(hpvm_cuda_device_enter(mgpu_device_), what);                                \
    CUresult mgpu_result_ = (call);                                                              \
    mgpu_call_end(mgpu_device_, mgpu_result_, what);                                             \
  } while (0)

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size; /* cubins carry their own size */
  CUmodule module = NULL;
  MGPU_CALL("mgpuModuleLoad", cu->cuModuleLoadData(&module, data));
  return module;
}

void *mgpuModuleLoadJIT(void *data, int opt_level, size_t size) {
  /* PTX embedded by gpu-module-to-binary is not NUL-terminated: copy it with a terminator. */
  char *text = malloc(size + 1);
  if (!text)
    hpvm_rt_check_at(HPVM_STATUS(RESOURCE_EXHAUSTED, "no memory for %zu bytes of PTX", size),
                     "mgpuModuleLoadJIT");
  memcpy(text, data, size);
  text[size] = '\0';
  char log[4096] = "";
  CUjit_option options[] = {HPVM_CU_JIT_ERROR_LOG_BUFFER, HPVM_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            HPVM_CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, (void *)(uintptr_t)sizeof(log), (void *)(intptr_t)opt_level};
  CUmodule module = NULL;
  hpvm_device_t *device = mgpu_device("mgpuModuleLoadJIT");
  const hpvm_cuda_symbols_t *cu = hpvm_cuda_device_symbols(device);
  hpvm_rt_check_at(hpvm_cuda_device_enter(device), "mgpuModuleLoadJIT");
  CUresult result = cu->cuModuleLoadDataEx(&module, text, 3, options, values);
  hpvm_cuda_device_leave(device);
  free(text);
  if (result != HPVM_CUDA_SUCCESS)
    hpvm_rt_check_at(hpvm_status_annotate(hpvm_cuda_status(cu, result, "cuModuleLoadDataEx"),
                                          "JIT log: %.3000s", log),
                     "mgpuModuleLoadJIT");
  return module;
}

void mgpuModuleUnload(void *module) {
  MGPU_CALL("mgpuModuleUnload", cu->cuModuleUnload((CUmodule)module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = NULL;
  MGPU_CALL("mgpuModuleGetFunction", cu->cuModuleGetFunction(&function, (CUmodule)module, name));
  return function;
}

static unsigned launch_dim(intptr_t value, const char *what) {
  if (value <= 0 || (uintmax_t)value > UINT32_MAX)
    hpvm_rt_check_at(HPVM_STATUS(INVALID_ARGUMENT, "launch dimension %lld out of range",
                                 (long long)value),
                     what);
  return (unsigned)value;
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y, intptr_t grid_z,
                      intptr_t block_x, intptr_t block_y, intptr_t block_z,
                      int32_t shared_memory_bytes, void *stream, void **params, void **extra,
                      size_t param_count) {
  (void)param_count;
  const char *what = "mgpuLaunchKernel";
  unsigned gx = launch_dim(grid_x, what), gy = launch_dim(grid_y, what),
           gz = launch_dim(grid_z, what), bx = launch_dim(block_x, what),
           by = launch_dim(block_y, what), bz = launch_dim(block_z, what);
  MGPU_CALL(what, cu->cuLaunchKernel((CUfunction)function, gx, gy, gz, bx, by, bz,
                                     (unsigned)shared_memory_bytes, (CUstream)stream, params,
                                     extra));
}

void mgpuLaunchClusterKernel(void *function, intptr_t cluster_x, intptr_t cluster_y,
                             intptr_t cluster_z, intptr_t grid_x, intptr_t grid_y, intptr_t grid_z,
                             intptr_t block_x, intptr_t block_y, intptr_t block_z,
                             int32_t shared_memory_bytes, void *stream, void **params,
                             void **extra, size_t param_count) {
  (void)param_count;
  const char *what = "mgpuLaunchClusterKernel";
  hpvm_cu_launch_attribute_t attribute;
  memset(&attribute, 0, sizeof(attribute));
  attribute.id = HPVM_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.cluster_dim.x = launch_dim(cluster_x, what);
  attribute.value.cluster_dim.y = launch_dim(cluster_y, what);
  attribute.value.cluster_dim.z = launch_dim(cluster_z, what);
  hpvm_cu_launch_config_t config = {launch_dim(grid_x, what),  launch_dim(grid_y, what),
                                    launch_dim(grid_z, what),  launch_dim(block_x, what),
                                    launch_dim(block_y, what), launch_dim(block_z, what),
                                    (unsigned)shared_memory_bytes, (CUstream)stream,
                                    &attribute, 1};
  hpvm_device_t *device = mgpu_device(what);
  if (!hpvm_cuda_device_symbols(device)->cuLaunchKernelEx)
    hpvm_rt_check_at(HPVM_STATUS(UNIMPLEMENTED, "the CUDA driver has no cuLaunchKernelEx"), what);
  MGPU_CALL(what, cu->cuLaunchKernelEx(&config, (CUfunction)function, params, extra));
}

void *mgpuStreamCreate(void) {
  CUstream stream = NULL;
  MGPU_CALL("mgpuStreamCreate", cu->cuStreamCreate(&stream, HPVM_CU_STREAM_NON_BLOCKING));
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  MGPU_CALL("mgpuStreamDestroy", cu->cuStreamDestroy((CUstream)stream));
}

void mgpuStreamSynchronize(void *stream) {
  MGPU_CALL("mgpuStreamSynchronize", cu->cuStreamSynchronize((CUstream)stream));
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  MGPU_CALL("mgpuStreamWaitEvent", cu->cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0));
}

void *mgpuEventCreate(void) {
  CUevent event = NULL;
  MGPU_CALL("mgpuEventCreate", cu->cuEventCreate(&event, HPVM_CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(void *event) {
  MGPU_CALL("mgpuEventDestroy", cu->cuEventDestroy((CUevent)event));
}

void mgpuEventSynchronize(void *event) {
  MGPU_CALL("mgpuEventSynchronize", cu->cuEventSynchronize((CUevent)event));
}

void mgpuEventRecord(void *event, void *stream) {
  MGPU_CALL("mgpuEventRecord", cu->cuEventRecord((CUevent)event, (CUstream)stream));
}

void *mgpuMemAlloc(uint64_t size, void *stream, bool is_host_shared) {
  (void)stream;
  CUdeviceptr pointer = 0;
  if (size == 0)
    return NULL;
  if (is_host_shared) {
    if (!hpvm_cuda_device_symbols(mgpu_device("mgpuMemAlloc"))->cuMemAllocManaged)
      hpvm_rt_check_at(HPVM_STATUS(UNIMPLEMENTED, "the CUDA driver has no cuMemAllocManaged"),
                       "mgpuMemAlloc");
    MGPU_CALL("mgpuMemAlloc", cu->cuMemAllocManaged(&pointer, size, HPVM_CU_MEM_ATTACH_GLOBAL));
  } else {
    MGPU_CALL("mgpuMemAlloc", cu->cuMemAlloc(&pointer, size));
  }
  return (void *)(uintptr_t)pointer;
}

void mgpuMemFree(void *ptr, void *stream) {
  (void)stream;
  if (!ptr)
    return;
  MGPU_CALL("mgpuMemFree", cu->cuMemFree((CUdeviceptr)(uintptr_t)ptr));
}

void mgpuMemcpy(void *dst, void *src, size_t size, void *stream) {
  MGPU_CALL("mgpuMemcpy", cu->cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                            (CUdeviceptr)(uintptr_t)src, size, (CUstream)stream));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  MGPU_CALL("mgpuMemset32", cu->cuMemsetD32Async((CUdeviceptr)(uintptr_t)dst, value, count,
                                                 (CUstream)stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  MGPU_CALL("mgpuMemset16", cu->cuMemsetD16Async((CUdeviceptr)(uintptr_t)dst, value, count,
                                                 (CUstream)stream));
}

void mgpuSetDefaultDevice(int32_t device) {
  hpvm_device_t *open = hpvm_rt_device_peek(HPVM_RT_DEVICE_CUDA);
  if (open && hpvm_cuda_device_ordinal(open) != device)
    hpvm_rt_check_at(HPVM_STATUS(FAILED_PRECONDITION,
                                 "CUDA device %d is already in use; cannot switch to device %d",
                                 hpvm_cuda_device_ordinal(open), (int)device),
                     "mgpuSetDefaultDevice");
  hpvm_cuda_set_default_ordinal(device);
}
