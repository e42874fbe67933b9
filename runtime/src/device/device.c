/* device.c - helpers shared by all device backends. */
#include "device/device.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void hpvm_device_initialize(hpvm_device_t *device, const hpvm_device_vtable_t *vtable,
                            hpvm_rt_device_kind_t kind, hpvm_allocator_t allocator,
                            const char *name, uint32_t max_inflight) {
  device->vtable = vtable;
  device->kind = kind;
  device->allocator = allocator;
  snprintf(device->name, sizeof(device->name), "%s", name ? name : "device");
  device->max_inflight = max_inflight ? max_inflight : 1;
  atomic_init(&device->inflight, 0);
  atomic_init(&device->failed, false);
  hpvm_buffer_registry_init(&device->buffers, allocator);
}

hpvm_status_t hpvm_device_open_driver(const char *env_var, const char *const *defaults,
                                      const char *api, void **out_library,
                                      const char **out_path) {
  const char *configured = getenv(env_var);
  const char *const only[] = {configured, NULL};
  const char *const *paths = configured && *configured ? only : defaults;
  const char *reason = NULL;
  for (const char *const *path = paths; *path; ++path) {
    *out_path = *path;
    *out_library = dlopen(*path, RTLD_NOW | RTLD_LOCAL);
    if (*out_library)
      return NULL;
    reason = dlerror();
  }
  return HPVM_STATUS(UNAVAILABLE, "%s is not available: cannot load %s (%s)", api, *out_path,
                     reason ? reason : "unknown reason");
}

void hpvm_device_destroy(hpvm_device_t *device) {
  if (!device)
    return;
  uint64_t handle;
  while (hpvm_buffer_registry_take_any(&device->buffers, &handle))
    hpvm_status_free(device->vtable->buffer_free(device, handle));
  hpvm_buffer_registry_destroy(&device->buffers);
  device->vtable->destroy(device);
}

hpvm_status_t hpvm_device_buffer_alloc(hpvm_device_t *device, size_t size,
                                       hpvm_buffer_owner_t owner, uint64_t *out_handle) {
  if (size == 0)
    return HPVM_STATUS(INVALID_ARGUMENT, "alloc on device '%s': expected a size > 0, got 0",
                       device->name);
  uint64_t handle = 0;
  HPVM_RETURN_IF_ERROR(device->vtable->buffer_alloc(device, size, &handle));
  hpvm_status_t status = hpvm_buffer_registry_add(&device->buffers, handle, size, owner);
  if (status) {
    /* Unregistered buffers could never be freed: give it back now. */
    hpvm_status_free(device->vtable->buffer_free(device, handle));
    return status;
  }
  *out_handle = handle;
  return NULL;
}

hpvm_status_t hpvm_device_buffer_free(hpvm_device_t *device, uint64_t handle,
                                      hpvm_buffer_owner_t owner) {
  HPVM_RETURN_IF_ERROR(hpvm_buffer_registry_remove(&device->buffers, handle, owner, device->name));
  return device->vtable->buffer_free(device, handle);
}

hpvm_status_t hpvm_device_copy_to_device(hpvm_device_t *device, uint64_t dst, size_t dst_offset,
                                         const void *src, size_t size) {
  HPVM_RETURN_IF_ERROR(hpvm_buffer_registry_begin_use(&device->buffers, dst, dst_offset, size,
                                                      "copy_to_device", device->name));
  hpvm_status_t status =
      size ? device->vtable->copy_to_device(device, dst, dst_offset, src, size) : NULL;
  hpvm_buffer_registry_end_use(&device->buffers, dst);
  return status;
}

hpvm_status_t hpvm_device_module_load(hpvm_device_t *device, const hpvm_rt_module_image_t *image,
                                     hpvm_device_module_t **out_module) {
  if (!device || !image || !image->data || !out_module ||
      (!image->size && image->format != HPVM_RT_IMAGE_PTX))
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "module_load needs a device, a non-empty image (size may be 0 only for "
                       "NUL-terminated PTX) and out_module");
  return device->vtable->module_load(device, image, out_module);
}

void hpvm_device_module_unload(hpvm_device_module_t *module) {
  if (module)
    module->device->vtable->module_unload(module);
}

hpvm_status_t hpvm_device_kernel_get(hpvm_device_module_t *module, const char *name,
                                     hpvm_device_kernel_t **out_kernel) {
  if (!module || !name || !out_kernel)
    return HPVM_STATUS(INVALID_ARGUMENT, "kernel_get needs a module, a name and out_kernel");
  return module->device->vtable->kernel_get(module, name, out_kernel);
}

hpvm_status_t hpvm_device_kernel_launch(hpvm_device_kernel_t *kernel,
                                        const hpvm_rt_launch_dims_t *dims,
                                        const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                        bool *out_started) {
  bool started = false;
  if (out_started)
    *out_started = false;
  if (!kernel || !dims || (arg_count && !args))
    return HPVM_STATUS(INVALID_ARGUMENT, "kernel_launch needs a kernel, dims and the arguments");
  bool opencl = kernel->module->device->kind == HPVM_RT_DEVICE_OPENCL;
  for (uint32_t i = 0; i < arg_count; ++i) {
    if (!args[i].size)
      return HPVM_STATUS(INVALID_ARGUMENT, "kernel argument %u has 0 bytes", i);
    /* NULL: __local memory, which only OpenCL kernels take as an argument. */
    if (!args[i].value && !opencl)
      return HPVM_STATUS(INVALID_ARGUMENT, "kernel argument %u has no value", i);
  }
  hpvm_status_t status =
      kernel->module->device->vtable->kernel_launch(kernel, dims, args, arg_count, &started);
  if (out_started)
    *out_started = started;
  return status;
}

hpvm_status_t hpvm_device_copy_to_host(hpvm_device_t *device, void *dst, uint64_t src,
                                       size_t src_offset, size_t size) {
  HPVM_RETURN_IF_ERROR(hpvm_buffer_registry_begin_use(&device->buffers, src, src_offset, size,
                                                      "copy_to_host", device->name));
  hpvm_status_t status =
      size ? device->vtable->copy_to_host(device, dst, src, src_offset, size) : NULL;
  hpvm_buffer_registry_end_use(&device->buffers, src);
  return status;
}
