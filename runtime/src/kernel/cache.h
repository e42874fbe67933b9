/* cache.h - the kernel cache: one per runtime, the modules loaded for kernel sites (one per
 * device, image data and format) and each site's state, which the files of kernel/ share. */
#ifndef HPVM_KERNEL_CACHE_H
#define HPVM_KERNEL_CACHE_H

#include <pthread.h>
#include <stdatomic.h>

#include "device/cuda/cuda_libraries.h"
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
  /* A split grid's share of the device (split.c): 0 until the first split measured it; the
   * launches since the last split (one side alone: a probe every HPVM_KERNEL_SPLIT_PROBE). */
  _Atomic double split_share;
  _Atomic uint32_t split_skipped;
  _Atomic uint32_t split_measured; /* split launches measured */
  /* The kernel's 32-bit variant (HPVM_RT_NARROW_KERNEL_SUFFIX; NULL: the image has none),
   * valid once narrow_known is set (both under the cache mutex). */
  _Atomic(hpvm_device_kernel_t *) narrow[HPVM_RT_DEVICE_KIND_COUNT];
  atomic_bool narrow_known[HPVM_RT_DEVICE_KIND_COUNT];
} hpvm_kernel_site_state_t;

/* Which leaves split their grid across the CPU and a device (HPVM_SPLIT). */
typedef enum hpvm_kernel_split_mode_e {
  HPVM_KERNEL_SPLIT_HINTED = 0, /* unset: those the compiler marked (CPU_OR_*_TARGET) */
  HPVM_KERNEL_SPLIT_NONE = 1,   /* "0" */
  HPVM_KERNEL_SPLIT_ALL = 2,    /* "1": every leaf with both versions that can */
} hpvm_kernel_split_mode_t;

/* HPVM_SPLIT_SLOWDOWN=<side>:<factor> (tests and benchmarks): the side's part of a split grid
 * takes `factor` times as long (it sleeps (factor - 1) times what it took). */
typedef struct hpvm_kernel_slowdown_t {
  hpvm_rt_device_kind_t side; /* HPVM_RT_DEVICE_CPU or the device (any other kind) */
  uint32_t factor;            /* 1: none */
} hpvm_kernel_slowdown_t;

/* Parses an HPVM_SPLIT_SLOWDOWN value (NULL or "" = none); INVALID_ARGUMENT for anything but
 * cpu:<factor> or device:<factor> with factor 1..1000. */
hpvm_status_t hpvm_kernel_slowdown_parse(const char *text, hpvm_kernel_slowdown_t *out);

struct hpvm_kernel_cache_t {
  hpvm_allocator_t allocator;
  hpvm_mem_tracker_t *tracker;
  hpvm_kernel_device_get_fn_t device_get;
  void *device_get_self;
  hpvm_kernel_device_choice_t choice;
  int64_t picks[3][3];   /* the work-group picked for grids of rank 1, 2, 3 (HPVM_WORKGROUP) */
  bool failover;         /* HPVM_FAILOVER (failover.c) */
  hpvm_kernel_split_mode_t split;  /* HPVM_SPLIT (split.c) */
  hpvm_kernel_slowdown_t slowdown; /* HPVM_SPLIT_SLOWDOWN (split.c) */
  bool narrow;           /* HPVM_CUDA_NARROW: 32-bit variants where a launch fits them */
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
/* The 32-bit variant of the site's kernel on `device` (its name + HPVM_RT_NARROW_KERNEL_SUFFIX
 * in `image`), or NULL when the image has none or its module did not load; looked up once. */
hpvm_device_kernel_t *hpvm_kernel_site_narrow_kernel(hpvm_kernel_cache_t *cache,
                                                     hpvm_kernel_site_state_t *state,
                                                     hpvm_device_t *device,
                                                     const hpvm_rt_module_image_t *image);

#endif /* HPVM_KERNEL_CACHE_H */
