/* cache.h - the kernel cache's state, shared by the files of kernel/: the modules loaded for
 * the sites (one per device, image data and format) and each site's state. */
#ifndef HPVM_KERNEL_CACHE_H
#define HPVM_KERNEL_CACHE_H

#include <pthread.h>
#include <stdatomic.h>

#include "device/cuda/cuda_libraries.h"
#include "kernel/kernel_run.h"

/* One module per (device, image data, image format): the sites of one image share it. */
typedef struct hpvm_kernel_module_t {
  struct hpvm_kernel_module_t *next;
  hpvm_device_t *device;
  const void *data;
  hpvm_rt_image_format_t format;
  hpvm_device_module_t *module; /* NULL when loading failed */
  hpvm_status_t failure;        /* why, when module is NULL (warned when it happened) */
} hpvm_kernel_module_t;

/* What site->state points to.  Created once per site and runtime, freed by the cache. */
typedef struct hpvm_kernel_site_state_t {
  struct hpvm_kernel_site_state_t *next; /* the cache's list (cache mutex) */
  hpvm_kernel_cache_t *cache;
  hpvm_rt_kernel_site_t *site;
  /* Each set at most once, under the cache mutex, and read without it (acquire). */
  _Atomic(hpvm_device_kernel_t *) kernels[HPVM_RT_DEVICE_KIND_COUNT];
  /* Why the site can never run on that kind. */
  _Atomic(hpvm_status_t) failures[HPVM_RT_DEVICE_KIND_COUNT];
  atomic_flag warned; /* a per-call fallback was warned about */
  /* Why the site's library call never runs in this runtime (its parameters do not fit it, or
   * it failed before starting); set once (warned then), NULL while it may. */
  _Atomic(hpvm_status_t) library_failure;
} hpvm_kernel_site_state_t;

struct hpvm_kernel_cache_t {
  hpvm_allocator_t allocator;
  hpvm_mem_tracker_t *tracker;
  hpvm_kernel_device_get_fn_t device_get;
  void *device_get_self;
  hpvm_kernel_device_choice_t choice;
  int64_t picks[3][3];   /* the work-group picked for grids of rank 1, 2, 3 (HPVM_WORKGROUP) */
  pthread_mutex_t mutex; /* guards `sites`, `modules` and every module load / kernel lookup */
  hpvm_kernel_site_state_t *sites;
  hpvm_kernel_module_t *modules;
  hpvm_cuda_libraries_t *libraries; /* cuDNN and cuBLAS, loaded on first use */
};

static inline const char *hpvm_kernel_node_name(const hpvm_rt_kernel_site_t *site) {
  return site->node ? site->node : site->kernel;
}

static inline const char *hpvm_kernel_kind_name(hpvm_rt_device_kind_t kind) {
  return kind == HPVM_RT_DEVICE_CUDA ? "cuda" : kind == HPVM_RT_DEVICE_OPENCL ? "opencl" : "cpu";
}

/* The site's state in this cache, created on first use (published with a release store);
 * FAILED_PRECONDITION for a state of another site or cache. */
hpvm_status_t hpvm_kernel_site_state(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                                     hpvm_kernel_site_state_t **out_state);

/* The site's kernel on `device`, loading the module on first use.  NULL with an owned reason
 * when the site cannot run there; such failures are remembered, so later calls neither retry
 * nor warn again. */
hpvm_device_kernel_t *hpvm_kernel_site_kernel(hpvm_kernel_cache_t *cache,
                                              hpvm_kernel_site_state_t *state,
                                              hpvm_device_t *device,
                                              const hpvm_rt_module_image_t *image,
                                              hpvm_status_t *out_reason);

#endif /* HPVM_KERNEL_CACHE_H */
