/* kernel_run.h - hpvm_rt_kernel_run: a node's kernel version on a device, else "run the CPU one".
 */
#ifndef HPVM_KERNEL_KERNEL_RUN_H
#define HPVM_KERNEL_KERNEL_RUN_H

#include "device/device.h"
#include "mem/tracker.h"

/* Where kernel versions may run (HPVM_DEVICE). */
typedef enum hpvm_kernel_device_choice_e {
  HPVM_KERNEL_DEVICE_ANY = 0,    /* unset: CUDA, else OpenCL, else the CPU version */
  HPVM_KERNEL_DEVICE_CPU = 1,    /* "cpu": never run kernels */
  HPVM_KERNEL_DEVICE_CUDA = 2,   /* "cuda": CUDA or the CPU version */
  HPVM_KERNEL_DEVICE_OPENCL = 3, /* "opencl": OpenCL or the CPU version */
} hpvm_kernel_device_choice_t;

/* Parses an HPVM_DEVICE value ("" = any); INVALID_ARGUMENT for anything else. */
hpvm_status_t hpvm_kernel_device_choice_parse(const char *text,
                                              hpvm_kernel_device_choice_t *out_choice);

/* Parses an HPVM_WORKGROUP value ("" = the defaults) into picks[rank - 1], the work-group the
 * runtime picks for grids of that rank; INVALID_ARGUMENT for anything but a comma-separated
 * list of shapes X, XxY, XxYxZ with extents in 1..1024. */
hpvm_status_t hpvm_kernel_workgroup_parse(const char *text, int64_t picks[3][3]);

/* How the cache obtains a device (the runtime's lazily opened devices). */
typedef hpvm_status_t (*hpvm_kernel_device_get_fn_t)(void *self, hpvm_rt_device_kind_t kind,
                                                     hpvm_device_t **out_device);

/* The per-runtime state behind hpvm_rt_kernel_run: the modules loaded for sites (shared by
 * image and device) and the state of every site that ran (site->state points into it). */
typedef struct hpvm_kernel_cache_t hpvm_kernel_cache_t;

/* `tracker` and the devices `device_get` returns must outlive the cache. */
hpvm_status_t hpvm_kernel_cache_create(hpvm_allocator_t allocator, hpvm_mem_tracker_t *tracker,
                                       hpvm_kernel_device_get_fn_t device_get,
                                       void *device_get_self, hpvm_kernel_device_choice_t choice,
                                       hpvm_kernel_cache_t **out_cache);
/* Unloads every module and frees every site state, setting each site's `state` back to NULL
 * (so the site works again with a later runtime).  No hpvm_kernel_run may be in flight.
 * NULL is a no-op. */
void hpvm_kernel_cache_destroy(hpvm_kernel_cache_t *cache);

/* See hpvm_rt_kernel_run. */
hpvm_status_t hpvm_kernel_run(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                              const int64_t grid[3], const int64_t block[3],
                              const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                              int32_t *out_ran);

#endif /* HPVM_KERNEL_KERNEL_RUN_H */
