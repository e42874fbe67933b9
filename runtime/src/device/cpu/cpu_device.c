/* cpu_device.c - the host as a device: buffers are host memory, kernels are not supported. */
#include <string.h>

#include "device/device.h"

static void cpu_destroy(hpvm_device_t *device) {
  hpvm_allocator_free(device->allocator, device);
}

static hpvm_status_t cpu_buffer_alloc(hpvm_device_t *device, size_t size, uint64_t *out_handle) {
  void *memory;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(device->allocator, size, &memory));
  *out_handle = (uint64_t)(uintptr_t)memory;
  return NULL;
}

static hpvm_status_t cpu_buffer_free(hpvm_device_t *device, uint64_t handle) {
  hpvm_allocator_free(device->allocator, (void *)(uintptr_t)handle);
  return NULL;
}

static hpvm_status_t cpu_copy_to_device(hpvm_device_t *device, uint64_t dst, size_t dst_offset,
                                        const void *src, size_t size) {
  (void)device;
  memcpy((char *)(uintptr_t)dst + dst_offset, src, size);
  return NULL;
}

static hpvm_status_t cpu_copy_to_host(hpvm_device_t *device, void *dst, uint64_t src,
                                      size_t src_offset, size_t size) {
  (void)device;
  memcpy(dst, (const char *)(uintptr_t)src + src_offset, size);
  return NULL;
}

static hpvm_status_t cpu_module_load(hpvm_device_t *device, const hpvm_rt_module_image_t *image,
                                     hpvm_device_module_t **out_module) {
  (void)device;
  (void)image;
  *out_module = NULL;
  return HPVM_STATUS(UNIMPLEMENTED, "the cpu device runs compiled host code, not device images");
}

static void cpu_module_unload(hpvm_device_module_t *module) { (void)module; }

static hpvm_status_t cpu_kernel_get(hpvm_device_module_t *module, const char *name,
                                    hpvm_device_kernel_t **out_kernel) {
  (void)module;
  *out_kernel = NULL;
  return HPVM_STATUS(UNIMPLEMENTED, "the cpu device has no kernel '%s'", name ? name : "");
}

static hpvm_status_t cpu_kernel_launch(hpvm_device_kernel_t *kernel,
                                       const hpvm_rt_launch_dims_t *dims,
                                       const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                       bool *out_started) {
  (void)kernel;
  (void)dims;
  (void)args;
  (void)arg_count;
  (void)out_started;
  return HPVM_STATUS(UNIMPLEMENTED, "the cpu device cannot launch device kernels");
}

static hpvm_status_t cpu_synchronize(hpvm_device_t *device) {
  (void)device;
  return NULL;
}

static const hpvm_device_vtable_t cpu_vtable = {
    cpu_destroy,     cpu_buffer_alloc,   cpu_buffer_free,   cpu_copy_to_device,
    cpu_copy_to_host, cpu_module_load,   cpu_module_unload, cpu_kernel_get,
    cpu_kernel_launch, cpu_synchronize,
};

hpvm_status_t hpvm_cpu_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device) {
  hpvm_device_t *device;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*device), (void **)&device));
  /* The CPU is never "busy" for the dynamic policy: it is the fallback. */
  hpvm_device_initialize(device, &cpu_vtable, HPVM_RT_DEVICE_CPU, allocator, "cpu", UINT32_MAX);
  *out_device = device;
  return NULL;
}
