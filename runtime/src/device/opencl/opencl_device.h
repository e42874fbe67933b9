/* opencl_device.h - what hpvm_rt_kernel_run needs from the OpenCL backend beyond the vtable. */
#ifndef HPVM_DEVICE_OPENCL_DEVICE_H
#define HPVM_DEVICE_OPENCL_DEVICE_H

#include "device/device.h"

/* Whether `device` is a device of this backend (tests inject devices of kind OPENCL too). */
bool hpvm_opencl_device_is(const hpvm_device_t *device);
/* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: the granularity of sub-buffer origins. */
size_t hpvm_opencl_device_base_align(const hpvm_device_t *device);
/* A cl_mem for bytes [offset, offset + size) of buffer `parent` (clCreateSubBuffer), for
 * passing an interior pointer to a kernel.  INVALID_ARGUMENT when offset is not a multiple of
 * the base address alignment.  Sub-buffers are not in the buffer registry: they are kernel
 * arguments only, released with hpvm_opencl_sub_buffer_release after the launch, while the
 * caller keeps `parent` in use. */
hpvm_status_t hpvm_opencl_sub_buffer_create(hpvm_device_t *device, uint64_t parent, size_t offset,
                                            size_t size, uint64_t *out_handle);
void hpvm_opencl_sub_buffer_release(hpvm_device_t *device, uint64_t handle);

#endif /* HPVM_DEVICE_OPENCL_DEVICE_H */
