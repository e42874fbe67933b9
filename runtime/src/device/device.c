/* device.c - helpers shared by all device backends. */
#include "device/device.h"

#include <stdio.h>

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
