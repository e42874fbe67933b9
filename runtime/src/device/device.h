/* device.h - the device vtable every backend (cpu, cuda, opencl, test devices) implements. */
#ifndef HPVM_DEVICE_DEVICE_H
#define HPVM_DEVICE_DEVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/allocator.h"
#include "device/buffer_registry.h"

typedef struct hpvm_device_t hpvm_device_t;
typedef struct hpvm_device_module_t hpvm_device_module_t;
typedef struct hpvm_device_kernel_t hpvm_device_kernel_t;

/* All entries are required (return UNIMPLEMENTED where the device cannot do something).
 * Every entry is thread-safe; blocking calls block only their caller (no global lock). */
typedef struct hpvm_device_vtable_t {
  void (*destroy)(hpvm_device_t *device);
  /* Buffers are identified by a 64-bit handle (CUdeviceptr, cl_mem, host address). */
  hpvm_status_t (*buffer_alloc)(hpvm_device_t *device, size_t size, uint64_t *out_handle);
  hpvm_status_t (*buffer_free)(hpvm_device_t *device, uint64_t handle);
  /* Blocking copies; offsets are in bytes inside the device buffer. */
  hpvm_status_t (*copy_to_device)(hpvm_device_t *device, uint64_t dst, size_t dst_offset,
                                  const void *src, size_t size);
  hpvm_status_t (*copy_to_host)(hpvm_device_t *device, void *dst, uint64_t src,
                                size_t src_offset, size_t size);
  hpvm_status_t (*module_load)(hpvm_device_t *device, const hpvm_rt_module_image_t *image,
                               hpvm_device_module_t **out_module);
  /* Frees the module and every kernel obtained from it. */
  void (*module_unload)(hpvm_device_module_t *module);
  hpvm_status_t (*kernel_get)(hpvm_device_module_t *module, const char *name,
                              hpvm_device_kernel_t **out_kernel);
  /* Launches and waits for completion.  Sets *out_started (never NULL, false on entry) once
   * the driver accepted the launch: an error with it still false means the kernel never ran
   * (bad arguments or configuration, no resources), so nothing was written. */
  hpvm_status_t (*kernel_launch)(hpvm_device_kernel_t *kernel, const hpvm_rt_launch_dims_t *dims,
                                 const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                 bool *out_started);
  hpvm_status_t (*synchronize)(hpvm_device_t *device);
} hpvm_device_vtable_t;

/* The common head of every device; backends embed it first. */
struct hpvm_device_t {
  const hpvm_device_vtable_t *vtable;
  hpvm_rt_device_kind_t kind;
  hpvm_allocator_t allocator;
  char name[128];
  /* Scheduling state read by the dynamic policy: a device is busy when `inflight` reaches
   * `max_inflight`, and stays unusable once `failed` is set. */
  uint32_t max_inflight;
  _Atomic uint32_t inflight;
  _Atomic bool failed;
  /* Every live buffer (handle, size, owner).  The vtable trusts its handles; the checked
   * entry points below are the only callers of the buffer and copy entries, so a forged,
   * freed or foreign handle and an out-of-range copy never reach a backend. */
  hpvm_buffer_registry_t buffers;
};

struct hpvm_device_module_t {
  hpvm_device_t *device;
};

struct hpvm_device_kernel_t {
  hpvm_device_module_t *module;
};

/* Fills the common head (and starts an empty buffer registry). */
void hpvm_device_initialize(hpvm_device_t *device, const hpvm_device_vtable_t *vtable,
                            hpvm_rt_device_kind_t kind, hpvm_allocator_t allocator,
                            const char *name, uint32_t max_inflight);

/* Opens a driver or library with dlopen: the path in environment variable `env_var` if set,
 * else each of the NULL-terminated `defaults` in turn (libcudnn.so.9, then .8). `*out_path` is
 * the path loaded (or last tried). On failure the status is UNAVAILABLE and names `api`, the
 * path and the loader's reason. The library stays loaded for the life of the process (drivers
 * register atexit handlers). */
hpvm_status_t hpvm_device_open_driver(const char *env_var, const char *const *defaults,
                                      const char *api, void **out_library,
                                      const char **out_path);

/* Frees the buffers still live on the device (a program may exit without freeing its
 * scratch buffers), the registry, then the device.  NULL is a no-op. */
void hpvm_device_destroy(hpvm_device_t *device);

/* The checked buffer entry points; everything in the runtime goes through them.
 * alloc: INVALID_ARGUMENT for size 0 (drivers disagree on what a 0-byte buffer is).
 * free: NOT_FOUND for a handle that is not live, FAILED_PRECONDITION for a buffer of another
 *   owner or one with copies in flight.
 * copies: NOT_FOUND for a handle that is not live, OUT_OF_RANGE when offset + size (computed
 *   without wrapping) passes the end of the buffer.  A 0-byte copy inside the buffer is OK
 *   and does not reach the backend. */
hpvm_status_t hpvm_device_buffer_alloc(hpvm_device_t *device, size_t size,
                                       hpvm_buffer_owner_t owner, uint64_t *out_handle);
hpvm_status_t hpvm_device_buffer_free(hpvm_device_t *device, uint64_t handle,
                                      hpvm_buffer_owner_t owner);
hpvm_status_t hpvm_device_copy_to_device(hpvm_device_t *device, uint64_t dst, size_t dst_offset,
                                         const void *src, size_t size);
hpvm_status_t hpvm_device_copy_to_host(hpvm_device_t *device, void *dst, uint64_t src,
                                       size_t src_offset, size_t size);
/* The checked module entry points (hpvm_rt_module_load / _unload, hpvm_rt_kernel_get), which
 * the public functions and the kernel cache both call.  load: INVALID_ARGUMENT without a
 * device, an image with data (size 0 only for NUL-terminated PTX) or out_module; unload: NULL
 * is a no-op, else the module and its kernels are freed; kernel_get: INVALID_ARGUMENT without
 * a module, a name or out_kernel.  Otherwise the backend's entry. */
hpvm_status_t hpvm_device_module_load(hpvm_device_t *device, const hpvm_rt_module_image_t *image,
                                     hpvm_device_module_t **out_module);
void hpvm_device_module_unload(hpvm_device_module_t *module);
hpvm_status_t hpvm_device_kernel_get(hpvm_device_module_t *module, const char *name,
                                     hpvm_device_kernel_t **out_kernel);
/* The checked launch (hpvm_rt_kernel_launch): INVALID_ARGUMENT for a NULL kernel or dims or an
 * argument without a value; otherwise the backend's launch.  `out_started` (may be NULL) tells
 * whether the kernel started (see the vtable). */
hpvm_status_t hpvm_device_kernel_launch(hpvm_device_kernel_t *kernel,
                                        const hpvm_rt_launch_dims_t *dims,
                                        const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                        bool *out_started);

/* Backend constructors.  UNAVAILABLE when the driver or a device is missing. */
hpvm_status_t hpvm_cpu_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device);
hpvm_status_t hpvm_cuda_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device);
hpvm_status_t hpvm_opencl_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device);

#endif /* HPVM_DEVICE_DEVICE_H */
