/* libraries.h - a kernel site's library call (cuDNN, cuBLAS) instead of its kernel. */
#ifndef HPVM_KERNEL_LIBRARIES_H
#define HPVM_KERNEL_LIBRARIES_H

#include "kernel/buffers.h"
#include "kernel/cache.h"

/* Records that the site's library call never runs in this runtime (the first reason stays),
 * warned once: its generated kernel runs instead. Takes `reason`. */
void hpvm_kernel_library_refuse(hpvm_kernel_site_state_t *state, hpvm_status_t reason);

/* Whether the site's library call runs on `device`: a CUDA device, the libraries load, the
 * parameters fit the call. A missing library is the ordinary case (nothing said). */
bool hpvm_kernel_library_usable(hpvm_kernel_cache_t *cache, hpvm_kernel_site_state_t *state,
                                hpvm_device_t *device, const hpvm_rt_kernel_param_t *params,
                                uint32_t count);

/* The device addresses of the library call's tensors (their aligned pointers' buffers). */
void hpvm_kernel_library_buffers(const hpvm_kernel_buffers_t *run,
                                 const hpvm_rt_tensor_library_call_t *call,
                                 hpvm_cuda_library_buffers_t *out);

#endif /* HPVM_KERNEL_LIBRARIES_H */
