/* cuda_device.c - CUDA backend over the driver API, loaded with dlopen so CUDA is optional. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/platform.h"
#include "device/cuda/cuda_device.h"

typedef struct cuda_device_t {
  hpvm_device_t base;
  hpvm_cuda_symbols_t cu;
  CUdevice device;
  int ordinal;
  CUcontext context; /* the primary context, retained for the device's lifetime */
} cuda_device_t;

typedef struct cuda_kernel_t {
  hpvm_device_kernel_t base;
  struct cuda_kernel_t *next;
  char *name;
  CUfunction function;
} cuda_kernel_t;

typedef struct cuda_module_t {
  hpvm_device_module_t base;
  CUmodule module;
  pthread_mutex_t mutex; /* guards the kernel list */
  cuda_kernel_t *kernels;
} cuda_module_t;

static _Atomic int default_ordinal = 0;

void hpvm_cuda_set_default_ordinal(int ordinal) { atomic_store(&default_ordinal, ordinal); }

int hpvm_cuda_device_ordinal(hpvm_device_t *device) { return ((cuda_device_t *)device)->ordinal; }

const hpvm_cuda_symbols_t *hpvm_cuda_device_symbols(hpvm_device_t *device) {
  return &((cuda_device_t *)device)->cu;
}

hpvm_status_t hpvm_cuda_status(const hpvm_cuda_symbols_t *cu, CUresult result, const char *what) {
  if (result == HPVM_CUDA_SUCCESS)
    return NULL;
  const char *name = NULL, *text = NULL;
  if (cu && cu->cuGetErrorName)
    cu->cuGetErrorName(result, &name);
  if (cu && cu->cuGetErrorString)
    cu->cuGetErrorString(result, &text);
  hpvm_status_code_t code;
  switch (result) {
  case HPVM_CUDA_ERROR_INVALID_VALUE:
  case HPVM_CUDA_ERROR_INVALID_DEVICE:
  case HPVM_CUDA_ERROR_INVALID_IMAGE:
  case HPVM_CUDA_ERROR_INVALID_PTX:
  case HPVM_CUDA_ERROR_NO_BINARY_FOR_GPU:
    code = HPVM_STATUS_INVALID_ARGUMENT;
    break;
  case HPVM_CUDA_ERROR_OUT_OF_MEMORY:
  case HPVM_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    code = HPVM_STATUS_RESOURCE_EXHAUSTED;
    break;
  case HPVM_CUDA_ERROR_NOT_INITIALIZED:
  case HPVM_CUDA_ERROR_DEINITIALIZED:
  case HPVM_CUDA_ERROR_NO_DEVICE:
    code = HPVM_STATUS_UNAVAILABLE;
    break;
  case HPVM_CUDA_ERROR_NOT_FOUND:
    code = HPVM_STATUS_NOT_FOUND;
    break;
  default:
    code = HPVM_STATUS_UNKNOWN;
    break;
  }
  return hpvm_status_create(code, "%s failed: %s (%d): %s", what, name ? name : "CUDA_ERROR",
                            result, text ? text : "no description");
}

hpvm_status_t hpvm_cuda_device_enter(hpvm_device_t *base) {
  cuda_device_t *device = (cuda_device_t *)base;
  return hpvm_cuda_status(&device->cu, device->cu.cuCtxPushCurrent(device->context),
                          "cuCtxPushCurrent");
}

void hpvm_cuda_device_leave(hpvm_device_t *base) {
  cuda_device_t *device = (cuda_device_t *)base;
  CUcontext previous;
  device->cu.cuCtxPopCurrent(&previous);
}

/* CUDA_CALL(device, what, call) pushes the device's context, evaluates `call`, pops, and
 * yields the converted status.  Written with ?: (not a GNU statement expression) so that the
 * push is sequenced before the call in plain C11. */
static _Thread_local CUresult tls_push_result;

static int cuda_push(cuda_device_t *device) {
  tls_push_result = device->cu.cuCtxPushCurrent(device->context);
  return tls_push_result == HPVM_CUDA_SUCCESS;
}

static hpvm_status_t cuda_finish(cuda_device_t *device, CUresult result, const char *what) {
  hpvm_status_t status = hpvm_cuda_status(&device->cu, result, what);
  hpvm_cuda_device_leave(&device->base);
  return status;
}

#define CUDA_CALL(device, what, call)                                                            \
  (cuda_push(device) ? cuda_finish((device), (call), (what))                                     \
                     : hpvm_cuda_status(&(device)->cu, tls_push_result, "cuCtxPushCurrent"))

static hpvm_status_t cu_buffer_alloc(hpvm_device_t *base, size_t size, uint64_t *out_handle) {
  cuda_device_t *device = (cuda_device_t *)base;
  CUdeviceptr pointer = 0;
  HPVM_RETURN_IF_ERROR(
      CUDA_CALL(device, "cuMemAlloc", device->cu.cuMemAlloc(&pointer, size ? size : 1)));
  *out_handle = pointer;
  return NULL;
}

static hpvm_status_t cu_buffer_free(hpvm_device_t *base, uint64_t handle) {
  cuda_device_t *device = (cuda_device_t *)base;
  return CUDA_CALL(device, "cuMemFree", device->cu.cuMemFree(handle));
}

/* Copies and kernels go to the calling thread's default stream, and each waits for that stream
 * only: sibling nodes that the pool's workers run at the same time overlap on the device (one
 * stream each), and no lock is held around device work. */
static hpvm_status_t sync_thread_stream(cuda_device_t *device) {
  return hpvm_cuda_status(&device->cu, device->cu.cuStreamSynchronize(HPVM_CU_STREAM_PER_THREAD),
                          "cuStreamSynchronize");
}

/* Finishes a copy issued on the thread's stream (`result`, named `what`) inside the context. */
static hpvm_status_t finish_copy(cuda_device_t *device, CUresult result, const char *what) {
  hpvm_status_t status = hpvm_cuda_status(&device->cu, result, what);
  if (!status)
    status = sync_thread_stream(device);
  hpvm_cuda_device_leave(&device->base);
  return status;
}

static hpvm_status_t cu_copy_to_device(hpvm_device_t *base, uint64_t dst, size_t dst_offset,
                                       const void *src, size_t size) {
  cuda_device_t *device = (cuda_device_t *)base;
  if (!size)
    return NULL;
  HPVM_RETURN_IF_ERROR(hpvm_cuda_device_enter(base));
  return finish_copy(device,
                     device->cu.cuMemcpyHtoDAsync(dst + dst_offset, src, size,
                                                  HPVM_CU_STREAM_PER_THREAD),
                     "cuMemcpyHtoDAsync");
}

static hpvm_status_t cu_copy_to_host(hpvm_device_t *base, void *dst, uint64_t src,
                                     size_t src_offset, size_t size) {
  cuda_device_t *device = (cuda_device_t *)base;
  if (!size)
    return NULL;
  HPVM_RETURN_IF_ERROR(hpvm_cuda_device_enter(base));
  return finish_copy(device,
                     device->cu.cuMemcpyDtoHAsync(dst, src + src_offset, size,
                                                  HPVM_CU_STREAM_PER_THREAD),
                     "cuMemcpyDtoHAsync");
}

static hpvm_status_t cu_module_load(hpvm_device_t *base, const hpvm_rt_module_image_t *image,
                                    hpvm_device_module_t **out_module) {
  cuda_device_t *device = (cuda_device_t *)base;
  *out_module = NULL;
  if (image->format != HPVM_RT_IMAGE_PTX && image->format != HPVM_RT_IMAGE_CUBIN)
    return HPVM_STATUS(INVALID_ARGUMENT, "the CUDA device loads PTX or cubin, not image format %d",
                       (int)image->format);
  if (!image->data)
    return HPVM_STATUS(INVALID_ARGUMENT, "module image has no data");
  CUmodule module = NULL;
  hpvm_status_t status;
  if (image->format == HPVM_RT_IMAGE_PTX) {
    /* The driver wants NUL-terminated PTX; embedded images usually are not. */
    char *text = NULL;
    size_t length = image->size ? image->size : strlen(image->data);
    size_t bytes;
    if (!hpvm_size_add(length, 1, &bytes))
      return HPVM_STATUS(INVALID_ARGUMENT, "PTX image too large");
    HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(base->allocator, bytes, (void **)&text));
    memcpy(text, image->data, length);
    text[length] = '\0';
    char log[4096] = "";
    CUjit_option options[] = {HPVM_CU_JIT_ERROR_LOG_BUFFER, HPVM_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof(log)};
    status = CUDA_CALL(device, "cuModuleLoadDataEx (PTX)",
                       device->cu.cuModuleLoadDataEx(&module, text, 2, options, values));
    hpvm_allocator_free(base->allocator, text);
    if (status && log[0])
      status = hpvm_status_annotate(status, "JIT log: %.3000s", log);
  } else {
    status = CUDA_CALL(device, "cuModuleLoadData", device->cu.cuModuleLoadData(&module, image->data));
  }
  HPVM_RETURN_IF_ERROR(status);
  cuda_module_t *wrapper;
  status = hpvm_allocator_calloc(base->allocator, sizeof(*wrapper), (void **)&wrapper);
  if (status) {
    hpvm_status_free(CUDA_CALL(device, "cuModuleUnload", device->cu.cuModuleUnload(module)));
    return status;
  }
  wrapper->base.device = base;
  wrapper->module = module;
  pthread_mutex_init(&wrapper->mutex, NULL);
  *out_module = &wrapper->base;
  return NULL;
}

static void cu_module_unload(hpvm_device_module_t *base) {
  cuda_module_t *module = (cuda_module_t *)base;
  cuda_device_t *device = (cuda_device_t *)base->device;
  for (cuda_kernel_t *kernel = module->kernels; kernel;) {
    cuda_kernel_t *next = kernel->next;
    hpvm_allocator_free(device->base.allocator, kernel->name);
    hpvm_allocator_free(device->base.allocator, kernel);
    kernel = next;
  }
  hpvm_status_free(CUDA_CALL(device, "cuModuleUnload", device->cu.cuModuleUnload(module->module)));
  pthread_mutex_destroy(&module->mutex);
  hpvm_allocator_free(device->base.allocator, module);
}

static hpvm_status_t cu_kernel_get(hpvm_device_module_t *base, const char *name,
                                   hpvm_device_kernel_t **out_kernel) {
  cuda_module_t *module = (cuda_module_t *)base;
  cuda_device_t *device = (cuda_device_t *)base->device;
  *out_kernel = NULL;
  pthread_mutex_lock(&module->mutex);
  for (cuda_kernel_t *kernel = module->kernels; kernel; kernel = kernel->next) {
    if (strcmp(kernel->name, name) == 0) {
      pthread_mutex_unlock(&module->mutex);
      *out_kernel = &kernel->base;
      return NULL;
    }
  }
  CUfunction function = NULL;
  hpvm_status_t status = CUDA_CALL(device, "cuModuleGetFunction",
                                   device->cu.cuModuleGetFunction(&function, module->module, name));
  if (status)
    status = hpvm_status_annotate(status, "kernel '%s'", name);
  cuda_kernel_t *kernel = NULL;
  if (!status)
    status = hpvm_allocator_calloc(device->base.allocator, sizeof(*kernel), (void **)&kernel);
  if (!status)
    status = hpvm_allocator_strdup(device->base.allocator, name, &kernel->name);
  if (status) {
    hpvm_allocator_free(device->base.allocator, kernel);
    pthread_mutex_unlock(&module->mutex);
    return status;
  }
  kernel->base.module = base;
  kernel->function = function;
  kernel->next = module->kernels;
  module->kernels = kernel;
  pthread_mutex_unlock(&module->mutex);
  *out_kernel = &kernel->base;
  return NULL;
}

static hpvm_status_t cu_kernel_launch(hpvm_device_kernel_t *base, const hpvm_rt_launch_dims_t *dims,
                                      const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                      bool *out_started) {
  cuda_kernel_t *kernel = (cuda_kernel_t *)base;
  cuda_device_t *device = (cuda_device_t *)base->module->device;
  void *stack_params[32];
  void **params = stack_params;
  if (arg_count > 32)
    HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(device->base.allocator, arg_count,
                                                     sizeof(void *), (void **)&params));
  for (uint32_t i = 0; i < arg_count; ++i)
    params[i] = (void *)(uintptr_t)args[i].value; /* the driver reads, never writes */
  hpvm_status_t status = hpvm_cuda_device_enter(&device->base);
  if (!status) {
    status = hpvm_cuda_status(
        &device->cu,
        device->cu.cuLaunchKernel(kernel->function, dims->grid[0] ? dims->grid[0] : 1,
                                  dims->grid[1] ? dims->grid[1] : 1, dims->grid[2] ? dims->grid[2] : 1,
                                  dims->block[0] ? dims->block[0] : 1,
                                  dims->block[1] ? dims->block[1] : 1,
                                  dims->block[2] ? dims->block[2] : 1, dims->shared_memory_bytes,
                                  HPVM_CU_STREAM_PER_THREAD, params, NULL),
        "cuLaunchKernel");
    /* cuLaunchKernel reports configuration and resource errors before anything runs; errors
     * of the kernel itself come from the synchronisation. */
    *out_started = status == NULL;
    if (!status)
      status = sync_thread_stream(device);
    hpvm_cuda_device_leave(&device->base);
  }
  if (params != stack_params)
    hpvm_allocator_free(device->base.allocator, params);
  return status;
}

static hpvm_status_t cu_synchronize(hpvm_device_t *base) {
  cuda_device_t *device = (cuda_device_t *)base;
  return CUDA_CALL(device, "cuCtxSynchronize", device->cu.cuCtxSynchronize());
}

static void cu_destroy(hpvm_device_t *base) {
  cuda_device_t *device = (cuda_device_t *)base;
  if (device->context)
    device->cu.cuDevicePrimaryCtxRelease(device->device);
  /* libcuda stays loaded: its atexit handlers must find their code. */
  hpvm_allocator_free(base->allocator, device);
}

static const hpvm_device_vtable_t cuda_vtable = {
    cu_destroy,     cu_buffer_alloc, cu_buffer_free,   cu_copy_to_device, cu_copy_to_host,
    cu_module_load, cu_module_unload, cu_kernel_get, cu_kernel_launch,  cu_synchronize,
};

bool hpvm_cuda_device_is(const hpvm_device_t *device) {
  return device && device->vtable == &cuda_vtable;
}

static hpvm_status_t load_symbols(hpvm_cuda_symbols_t *cu) {
  const char *path;
  static const char *const names[] = {"libcuda.so.1", NULL};
  HPVM_RETURN_IF_ERROR(
      hpvm_device_open_driver("HPVM_CUDA_LIBRARY", names, "CUDA", &cu->library, &path));
#define HPVM_CUDA_LOAD(field, symbol, required, result, params)                                 \
  *(void **)&cu->field = dlsym(cu->library, symbol);                                            \
  if ((required) && !cu->field)                                                                 \
    return HPVM_STATUS(UNAVAILABLE, "CUDA driver %s lacks %s", path, symbol);
  HPVM_CUDA_SYMBOLS(HPVM_CUDA_LOAD)
#undef HPVM_CUDA_LOAD
  return NULL;
}

hpvm_status_t hpvm_cuda_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device) {
  *out_device = NULL;
  hpvm_cuda_symbols_t cu;
  memset(&cu, 0, sizeof(cu));
  HPVM_RETURN_IF_ERROR(load_symbols(&cu));
  HPVM_RETURN_IF_ERROR(hpvm_status_annotate(hpvm_cuda_status(&cu, cu.cuInit(0), "cuInit"),
                                            "CUDA is not available"));
  int count = 0;
  HPVM_RETURN_IF_ERROR(hpvm_cuda_status(&cu, cu.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  int ordinal = atomic_load(&default_ordinal);
  if (count <= 0 || ordinal < 0 || ordinal >= count)
    return HPVM_STATUS(UNAVAILABLE, "CUDA is not available: no device #%d (%d present)", ordinal,
                       count);
  CUdevice handle;
  HPVM_RETURN_IF_ERROR(hpvm_cuda_status(&cu, cu.cuDeviceGet(&handle, ordinal), "cuDeviceGet"));
  cuda_device_t *device;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*device), (void **)&device));
  device->cu = cu;
  device->device = handle;
  device->ordinal = ordinal;
  char device_name[100] = "";
  cu.cuDeviceGetName(device_name, (int)sizeof(device_name) - 1, handle);
  char name[128];
  snprintf(name, sizeof(name), "cuda:%s", device_name);
  hpvm_device_initialize(&device->base, &cuda_vtable, HPVM_RT_DEVICE_CUDA, allocator, name, 1);
  hpvm_status_t status = hpvm_cuda_status(&cu, cu.cuDevicePrimaryCtxRetain(&device->context, handle),
                                          "cuDevicePrimaryCtxRetain");
  if (status) {
    device->context = NULL;
    cu_destroy(&device->base);
    return status;
  }
  *out_device = &device->base;
  return NULL;
}
