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
}

hpvm_status_t hpvm_device_open_driver(const char *env_var, const char *default_path,
                                      const char *api, void **out_library,
                                      const char **out_path) {
  const char *path = getenv(env_var);
  if (!path || !*path)
    path = default_path;
  *out_path = path;
  *out_library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (*out_library)
    return NULL;
  const char *reason = dlerror();
  return HPVM_STATUS(UNAVAILABLE, "%s is not available: cannot load %s (%s)", api, path,
                     reason ? reason : "unknown reason");
}
