/* split.h - one grid split across a device and the CPU: a contiguous range of the outermost
 * dimension on the device, the rest on the CPU's threads at the same time. */
#ifndef HPVM_KERNEL_SPLIT_H
#define HPVM_KERNEL_SPLIT_H

#include "kernel/cache.h"

/* Runs the CPU version over the instances begin <= id < end of dimension `dim` (the other
 * dimensions whole); the ids and extents it sees are the whole grid's. */
typedef hpvm_status_t (*hpvm_kernel_cpu_part_fn_t)(void *self, int dim, int64_t begin,
                                                   int64_t end);

/* See hpvm_rt_kernel_run_split: hpvm_kernel_run, or, for a leaf `hinted` for both sides
 * (HPVM_SPLIT decides), the grid split between the device hpvm_kernel_run would choose and
 * `cpu_part`.  *out_ran = 1 when the node ran (split or on the device alone); 0 with an OK
 * status: nothing ran, the caller runs the CPU version over the whole grid. */
hpvm_status_t hpvm_kernel_run_split(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                                    const int64_t grid[3], const int64_t block[3],
                                    const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                    bool hinted, hpvm_kernel_cpu_part_fn_t cpu_part,
                                    void *cpu_self, int32_t *out_ran);

#endif /* HPVM_KERNEL_SPLIT_H */
