/* kernel_run.h - hpvm_rt_kernel_run: a node's kernel version on a device, else "run the CPU
 * one", through a kernel cache (cache.h). */
#ifndef HPVM_KERNEL_KERNEL_RUN_H
#define HPVM_KERNEL_KERNEL_RUN_H

#include "kernel/buffers.h"
#include "kernel/cache.h"

/* See hpvm_rt_kernel_run. */
hpvm_status_t hpvm_kernel_run(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                              const int64_t grid[3], const int64_t block[3],
                              const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                              int32_t *out_ran);

/* Whether a launch over `grid` with the planned buffers of `run` may run a kernel's 32-bit
 * variant (HPVM_RT_NARROW_KERNEL_SUFFIX): fewer than 2^31 instances (and along each dimension)
 * and every buffer parameter's range under 2^31 bytes. */
bool hpvm_kernel_fits_32_bits(const int64_t grid[3], const hpvm_kernel_buffers_t *run);

#endif /* HPVM_KERNEL_KERNEL_RUN_H */
