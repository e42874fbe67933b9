/* test_device.h - a device over host memory that counts calls and fails on the N-th one. */
#ifndef HPVM_TEST_DEVICE_H
#define HPVM_TEST_DEVICE_H

#include "test_util.h"

/* Pretends to be a GPU (kind chosen at creation): buffers are host allocations so results can
 * be checked, and every vtable call can be made to fail to test error propagation. */
typedef struct test_device_t {
  hpvm_device_t base;
  _Atomic int64_t calls;         /* fallible vtable calls so far */
  _Atomic int64_t fail_at;       /* 1-based call that fails; 0 = never */
  hpvm_status_code_t fail_code;  /* code of the injected failure */
  _Atomic int64_t live_buffers;
  _Atomic int64_t copies_to_device;
  _Atomic int64_t copies_to_host;
  _Atomic int64_t launches;
  _Atomic int64_t live_modules;
} test_device_t;

typedef struct test_module_t {
  hpvm_device_module_t base;
  hpvm_device_kernel_t kernel;
} test_module_t;

static hpvm_status_t test_device_tick(test_device_t *device, const char *what) {
  int64_t call = atomic_fetch_add(&device->calls, 1) + 1;
  int64_t fail_at = atomic_load(&device->fail_at);
  if (fail_at && call == fail_at)
    return hpvm_status_create(device->fail_code, "injected failure in %s (call %lld)", what,
                              (long long)call);
  return NULL;
}

static void test_device_destroy(hpvm_device_t *base) {
  hpvm_allocator_free(base->allocator, base);
}

static hpvm_status_t test_buffer_alloc(hpvm_device_t *base, size_t size, uint64_t *out) {
  test_device_t *device = (test_device_t *)base;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "buffer_alloc"));
  void *memory;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(base->allocator, size, &memory));
  atomic_fetch_add(&device->live_buffers, 1);
  *out = (uint64_t)(uintptr_t)memory;
  return NULL;
}

static hpvm_status_t test_buffer_free(hpvm_device_t *base, uint64_t handle) {
  test_device_t *device = (test_device_t *)base;
  /* Freeing never fails here: a real driver's free failing would leak anyway. */
  atomic_fetch_sub(&device->live_buffers, 1);
  hpvm_allocator_free(base->allocator, (void *)(uintptr_t)handle);
  return NULL;
}

static hpvm_status_t test_copy_to_device(hpvm_device_t *base, uint64_t dst, size_t offset,
                                         const void *src, size_t size) {
  test_device_t *device = (test_device_t *)base;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "copy_to_device"));
  atomic_fetch_add(&device->copies_to_device, 1);
  memcpy((char *)(uintptr_t)dst + offset, src, size);
  return NULL;
}

static hpvm_status_t test_copy_to_host(hpvm_device_t *base, void *dst, uint64_t src, size_t offset,
                                       size_t size) {
  test_device_t *device = (test_device_t *)base;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "copy_to_host"));
  atomic_fetch_add(&device->copies_to_host, 1);
  memcpy(dst, (const char *)(uintptr_t)src + offset, size);
  return NULL;
}

static hpvm_status_t test_module_load(hpvm_device_t *base, const hpvm_rt_module_image_t *image,
                                      hpvm_device_module_t **out) {
  test_device_t *device = (test_device_t *)base;
  (void)image;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "module_load"));
  test_module_t *module;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(base->allocator, sizeof(*module), (void **)&module));
  module->base.device = base;
  module->kernel.module = &module->base;
  atomic_fetch_add(&device->live_modules, 1);
  *out = &module->base;
  return NULL;
}

static void test_module_unload(hpvm_device_module_t *module) {
  test_device_t *device = (test_device_t *)module->device;
  atomic_fetch_sub(&device->live_modules, 1);
  hpvm_allocator_free(module->device->allocator, module);
}

static hpvm_status_t test_kernel_get(hpvm_device_module_t *module, const char *name,
                                     hpvm_device_kernel_t **out) {
  test_device_t *device = (test_device_t *)module->device;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "kernel_get"));
  if (strcmp(name, "scale") != 0)
    return hpvm_status_create(HPVM_STATUS_NOT_FOUND, "no kernel '%s'", name);
  *out = &((test_module_t *)module)->kernel;
  return NULL;
}

/* The only kernel: "scale" multiplies `count` floats in buffer arg 0 by float arg 1. */
static hpvm_status_t test_kernel_launch(hpvm_device_kernel_t *kernel,
                                        const hpvm_rt_launch_dims_t *dims,
                                        const hpvm_rt_kernel_arg_t *args, uint32_t count,
                                        bool *out_started) {
  test_device_t *device = (test_device_t *)kernel->module->device;
  (void)dims;
  HPVM_RETURN_IF_ERROR(test_device_tick(device, "kernel_launch"));
  if (count != 3)
    return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT, "scale takes 3 arguments");
  *out_started = true;
  float *data = (float *)(uintptr_t)*(const uint64_t *)args[0].value;
  float factor = *(const float *)args[1].value;
  uint64_t n = *(const uint64_t *)args[2].value;
  for (uint64_t i = 0; i < n; ++i)
    data[i] *= factor;
  atomic_fetch_add(&device->launches, 1);
  return NULL;
}

static hpvm_status_t test_synchronize(hpvm_device_t *base) {
  return test_device_tick((test_device_t *)base, "synchronize");
}

static const hpvm_device_vtable_t test_device_vtable = {
    test_device_destroy, test_buffer_alloc,  test_buffer_free,   test_copy_to_device,
    test_copy_to_host,   test_module_load,   test_module_unload, test_kernel_get,
    test_kernel_launch,  test_synchronize,
};

static inline test_device_t *test_device_create(hpvm_allocator_t allocator,
                                                hpvm_rt_device_kind_t kind) {
  test_device_t *device;
  CHECK_OK(hpvm_allocator_calloc(allocator, sizeof(*device), (void **)&device));
  hpvm_device_initialize(&device->base, &test_device_vtable, kind, allocator, "test-device", 1);
  device->fail_code = HPVM_STATUS_UNAVAILABLE;
  return device;
}

#endif /* HPVM_TEST_DEVICE_H */
