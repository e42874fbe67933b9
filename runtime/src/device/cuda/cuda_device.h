/* cuda_device.h - what the mgpu* wrappers need from the CUDA backend. */
#ifndef HPVM_DEVICE_CUDA_DEVICE_H
#define HPVM_DEVICE_CUDA_DEVICE_H

#include "device/cuda/cuda_symbols.h"
#include "device/device.h"

/* The loaded symbol table of a CUDA device created by hpvm_cuda_device_create. */
const hpvm_cuda_symbols_t *hpvm_cuda_device_symbols(hpvm_device_t *device);
/* Makes the device's primary context current on this thread (push) / restores (pop). */
hpvm_status_t hpvm_cuda_device_enter(hpvm_device_t *device);
void hpvm_cuda_device_leave(hpvm_device_t *device);
/* Converts a CUresult into a status ("what failed: CUDA_ERROR_X (n): description"). */
hpvm_status_t hpvm_cuda_status(const hpvm_cuda_symbols_t *cu, CUresult result, const char *what);
/* The device ordinal the next CUDA device opens (mgpuSetDefaultDevice). */
void hpvm_cuda_set_default_ordinal(int ordinal);
int hpvm_cuda_device_ordinal(hpvm_device_t *device);
/* Whether `device` is a device of this backend (tests inject devices of kind CUDA too). */
bool hpvm_cuda_device_is(const hpvm_device_t *device);

#endif /* HPVM_DEVICE_CUDA_DEVICE_H */
