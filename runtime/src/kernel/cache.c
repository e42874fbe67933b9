/* cache.c - the kernel cache: HPVM_DEVICE and HPVM_WORKGROUP, the modules loaded for kernel
 * sites (shared by image and device) and every site's state, kernels and failures. */
#include "kernel/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/platform.h"
#include "base/trace.h"

hpvm_status_t hpvm_kernel_device_choice_parse(const char *text,
                                              hpvm_kernel_device_choice_t *out_choice) {
  if (!text || !*text)
    *out_choice = HPVM_KERNEL_DEVICE_ANY;
  else if (strcmp(text, "cpu") == 0)
    *out_choice = HPVM_KERNEL_DEVICE_CPU;
  else if (strcmp(text, "cuda") == 0)
    *out_choice = HPVM_KERNEL_DEVICE_CUDA;
  else if (strcmp(text, "opencl") == 0)
    *out_choice = HPVM_KERNEL_DEVICE_OPENCL;
  else
    return HPVM_STATUS(INVALID_ARGUMENT, "HPVM_DEVICE='%s' is not one of cpu, cuda, opencl", text);
  return NULL;
}

/* HPVM_WORKGROUP: the work-groups the runtime picks when the program leaves the choice to it,
 * as a comma-separated list of shapes "X", "XxY", "XxYxZ", each replacing the pick for grids
 * of its rank (default 256, 16x16, 8x8x4). Unset or empty keeps the defaults; anything else
 * that is not such a list is an error, so that a typo does not silently change the launch. */
hpvm_status_t hpvm_kernel_workgroup_parse(const char *text, int64_t picks[3][3]) {
  static const int64_t defaults[3][3] = {{256, 1, 1}, {16, 16, 1}, {8, 8, 4}};
  memcpy(picks, defaults, sizeof(defaults));
  if (!text || !*text)
    return NULL;
  const char *cursor = text;
  for (;;) {
    int64_t shape[3] = {1, 1, 1};
    int rank = 0;
    for (;;) {
      char *end = NULL;
      errno = 0;
      unsigned long long value = strtoull(cursor, &end, 10);
      if (rank == 3 || errno || end == cursor || *cursor == '-' || *cursor == '+' || value == 0 ||
          value > 1024)
        return HPVM_STATUS(INVALID_ARGUMENT,
                           "HPVM_WORKGROUP='%s': expected comma-separated shapes X, XxY or XxYxZ "
                           "of integers in 1..1024 (at offset %d)",
                           text, (int)(cursor - text));
      shape[rank++] = (int64_t)value;
      cursor = end;
      if (*cursor != 'x')
        break;
      ++cursor;
    }
    memcpy(picks[rank - 1], shape, sizeof(shape));
    if (*cursor == '\0')
      return NULL;
    if (*cursor != ',')
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "HPVM_WORKGROUP='%s': expected ',' or the end after a shape, found '%c' "
                         "(at offset %d)",
                         text, *cursor, (int)(cursor - text));
    ++cursor;
  }
}

hpvm_status_t hpvm_kernel_slowdown_parse(const char *text, hpvm_kernel_slowdown_t *out) {
  out->side = HPVM_RT_DEVICE_CPU;
  out->factor = 1;
  if (!text || !*text)
    return NULL;
  const char *colon = strchr(text, ':');
  size_t side = colon ? (size_t)(colon - text) : 0;
  char *end = NULL;
  errno = 0;
  unsigned long factor = colon && colon[1] >= '0' && colon[1] <= '9'
                             ? strtoul(colon + 1, &end, 10)
                             : 0;
  bool cpu = side == 3 && strncmp(text, "cpu", 3) == 0;
  bool device = side == 6 && strncmp(text, "device", 6) == 0;
  if ((!cpu && !device) || !end || *end || errno || factor < 1 || factor > 1000)
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "HPVM_SPLIT_SLOWDOWN='%.64s': expected cpu:<factor> or device:<factor> "
                       "with a factor from 1 to 1000",
                       text);
  out->side = cpu ? HPVM_RT_DEVICE_CPU : HPVM_RT_DEVICE_CUDA;
  out->factor = (uint32_t)factor;
  return NULL;
}

hpvm_status_t hpvm_kernel_cache_create(hpvm_allocator_t allocator, hpvm_mem_tracker_t *tracker,
                                       hpvm_kernel_device_get_fn_t device_get,
                                       void *device_get_self, hpvm_kernel_device_choice_t choice,
                                       hpvm_kernel_cache_t **out_cache) {
  int64_t picks[3][3];
  HPVM_RETURN_IF_ERROR(hpvm_kernel_workgroup_parse(getenv("HPVM_WORKGROUP"), picks));
  /* HPVM_FAILOVER: 1 (default) reruns a node on the CPU after its kernel failed (failover.c);
   * 0 makes such a failure the node's error. */
  uint64_t failover = 1, split = 0;
  bool present, split_present;
  HPVM_RETURN_IF_ERROR(hpvm_platform_env_integer("HPVM_FAILOVER", 0, 1, &failover, &present));
  HPVM_RETURN_IF_ERROR(hpvm_platform_env_integer("HPVM_SPLIT", 0, 1, &split, &split_present));
  /* HPVM_CUDA_NARROW: 1 (default) launches a kernel's 32-bit variant where the launch fits it
   * (kernel_run.c); 0 always the 64-bit kernel. */
  uint64_t narrow = 1;
  bool narrow_present;
  HPVM_RETURN_IF_ERROR(
      hpvm_platform_env_integer("HPVM_CUDA_NARROW", 0, 1, &narrow, &narrow_present));
  hpvm_kernel_slowdown_t slowdown;
  HPVM_RETURN_IF_ERROR(hpvm_kernel_slowdown_parse(getenv("HPVM_SPLIT_SLOWDOWN"), &slowdown));
  hpvm_kernel_cache_t *cache;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*cache), (void **)&cache));
  hpvm_status_t status = hpvm_cuda_libraries_create(allocator, &cache->libraries);
  if (status) {
    hpvm_allocator_free(allocator, cache);
    return status;
  }
  cache->allocator = allocator;
  cache->tracker = tracker;
  cache->device_get = device_get;
  cache->device_get_self = device_get_self;
  cache->choice = choice;
  cache->failover = !present || failover == 1;
  cache->split = !split_present ? HPVM_KERNEL_SPLIT_HINTED
                 : split == 1   ? HPVM_KERNEL_SPLIT_ALL
                                : HPVM_KERNEL_SPLIT_NONE;
  cache->slowdown = slowdown;
  cache->narrow = !narrow_present || narrow == 1;
  memcpy(cache->picks, picks, sizeof(picks));
  pthread_mutex_init(&cache->mutex, NULL);
  *out_cache = cache;
  return NULL;
}

void hpvm_kernel_cache_destroy(hpvm_kernel_cache_t *cache) {
  if (!cache)
    return;
  for (hpvm_kernel_site_state_t *state = cache->sites; state;) {
    hpvm_kernel_site_state_t *next = state->next;
    /* The site is the program's (a global of the generated code): it works again, with a
     * fresh state, under the next runtime. */
    __atomic_store_n(&state->site->state, NULL, __ATOMIC_RELEASE);
    for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind)
      hpvm_status_free(atomic_load(&state->failures[kind]));
    hpvm_status_free(atomic_load(&state->library_failure));
    hpvm_allocator_free(cache->allocator, state);
    state = next;
  }
  for (hpvm_kernel_module_t *entry = cache->modules; entry;) {
    hpvm_kernel_module_t *next = entry->next;
    hpvm_device_module_unload(entry->module); /* frees its kernels */
    hpvm_status_free(entry->failure);
    hpvm_allocator_free(cache->allocator, entry);
    entry = next;
  }
  hpvm_cuda_libraries_destroy(cache->libraries); /* handles before their devices close */
  pthread_mutex_destroy(&cache->mutex);
  hpvm_allocator_free(cache->allocator, cache);
}

/* The site's state in this cache, created on first use (published with a release store). */
hpvm_status_t hpvm_kernel_site_state(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                                     hpvm_kernel_site_state_t **out_state) {
  hpvm_kernel_site_state_t *state = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
  if (!state) {
    hpvm_status_t status = NULL;
    pthread_mutex_lock(&cache->mutex);
    state = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (!state) {
      status = hpvm_allocator_calloc(cache->allocator, sizeof(*state), (void **)&state);
      if (!status) {
        state->cache = cache;
        state->site = site;
        for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind) {
          atomic_init(&state->kernels[kind], NULL);
          atomic_init(&state->failures[kind], NULL);
        }
        atomic_init(&state->library_failure, NULL);
        atomic_flag_clear(&state->warned);
        state->next = cache->sites;
        cache->sites = state;
        __atomic_store_n(&site->state, state, __ATOMIC_RELEASE);
      }
    }
    pthread_mutex_unlock(&cache->mutex);
    HPVM_RETURN_IF_ERROR(status);
  }
  if (state->cache != cache || state->site != site)
    return HPVM_STATUS(FAILED_PRECONDITION,
                       "kernel site of node '%s' holds the state of another site or runtime "
                       "(a copied site, a site used by two runtimes at once, or a state field "
                       "that was not zero-initialised)",
                       hpvm_kernel_node_name(site));
  *out_state = state;
  return NULL;
}

/* The loaded module of `image` on `device`, loading it on first use (cache mutex held).  A
 * failed load is remembered (and warned about once); only a failure to allocate the entry
 * itself is returned. */
static hpvm_status_t module_for(hpvm_kernel_cache_t *cache, hpvm_device_t *device,
                                const hpvm_rt_module_image_t *image,
                                const hpvm_rt_kernel_site_t *site,
                                hpvm_kernel_module_t **out_entry) {
  for (hpvm_kernel_module_t *entry = cache->modules; entry; entry = entry->next) {
    if (entry->device == device && entry->data == image->data && entry->format == image->format) {
      *out_entry = entry;
      return NULL;
    }
  }
  hpvm_kernel_module_t *entry;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(cache->allocator, sizeof(*entry), (void **)&entry));
  entry->device = device;
  entry->data = image->data;
  entry->format = image->format;
  hpvm_status_t status = hpvm_device_module_load(device, image, &entry->module);
  if (status) {
    entry->module = NULL;
    entry->failure = status;
    hpvm_warning("cannot load the %s image of node '%s' on %s, so none of its kernels runs "
                 "there: %s: %s",
                 hpvm_kernel_kind_name(device->kind), hpvm_kernel_node_name(site), device->name,
                 hpvm_status_code_name(hpvm_status_code(status)), hpvm_status_message(status));
  }
  entry->next = cache->modules;
  cache->modules = entry;
  *out_entry = entry;
  return NULL;
}

/* The site's kernel on `device`, loading the module on first use.  NULL with an owned reason
 * when the site cannot run there; such failures are remembered, so later calls neither retry
 * nor warn again. */
hpvm_device_kernel_t *hpvm_kernel_site_kernel(hpvm_kernel_cache_t *cache,
                                              hpvm_kernel_site_state_t *state,
                                              hpvm_device_t *device,
                                              const hpvm_rt_module_image_t *image,
                                              hpvm_status_t *out_reason) {
  int kind = (int)device->kind;
  hpvm_device_kernel_t *kernel = atomic_load_explicit(&state->kernels[kind], memory_order_acquire);
  if (kernel)
    return kernel;
  hpvm_status_t failure = atomic_load_explicit(&state->failures[kind], memory_order_acquire);
  if (failure) {
    *out_reason = hpvm_status_clone(failure);
    return NULL;
  }
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_status_t transient = NULL;
  pthread_mutex_lock(&cache->mutex);
  kernel = atomic_load_explicit(&state->kernels[kind], memory_order_relaxed);
  failure = atomic_load_explicit(&state->failures[kind], memory_order_relaxed);
  if (!kernel && !failure) {
    hpvm_kernel_module_t *entry = NULL;
    transient = module_for(cache, device, image, site, &entry);
    if (!transient) {
      hpvm_status_t status = NULL;
      if (entry->failure) {
        status = hpvm_status_clone(entry->failure);
      } else {
        status = hpvm_device_kernel_get(entry->module, site->kernel, &kernel);
        if (status) {
          kernel = NULL;
          hpvm_warning("node '%s' cannot run on %s: %s: %s", hpvm_kernel_node_name(site),
                       device->name, hpvm_status_code_name(hpvm_status_code(status)),
                       hpvm_status_message(status));
        }
      }
      if (status) {
        atomic_store_explicit(&state->failures[kind], status, memory_order_release);
        failure = status;
      } else {
        atomic_store_explicit(&state->kernels[kind], kernel, memory_order_release);
      }
    }
  }
  pthread_mutex_unlock(&cache->mutex);
  if (kernel)
    return kernel;
  *out_reason = transient ? transient : hpvm_status_clone(failure);
  return NULL;
}

hpvm_device_kernel_t *hpvm_kernel_site_narrow_kernel(hpvm_kernel_cache_t *cache,
                                                     hpvm_kernel_site_state_t *state,
                                                     hpvm_device_t *device,
                                                     const hpvm_rt_module_image_t *image) {
  int kind = (int)device->kind;
  if (atomic_load_explicit(&state->narrow_known[kind], memory_order_acquire))
    return atomic_load_explicit(&state->narrow[kind], memory_order_relaxed);
  const hpvm_rt_kernel_site_t *site = state->site;
  char name[256];
  int length = snprintf(name, sizeof(name), "%s%s", site->kernel, HPVM_RT_NARROW_KERNEL_SUFFIX);
  hpvm_device_kernel_t *kernel = NULL;
  pthread_mutex_lock(&cache->mutex);
  if (!atomic_load_explicit(&state->narrow_known[kind], memory_order_relaxed)) {
    hpvm_kernel_module_t *entry = NULL;
    /* The module is loaded (the 64-bit kernel came from it): this finds it. */
    hpvm_status_t status = module_for(cache, device, image, site, &entry);
    if (!status && !entry->failure && length > 0 && (size_t)length < sizeof(name))
      status = hpvm_device_kernel_get(entry->module, name, &kernel);
    if (status)
      kernel = NULL; /* no variant (an older image): the 64-bit kernel runs */
    hpvm_status_free(status);
    atomic_store_explicit(&state->narrow[kind], kernel, memory_order_relaxed);
    atomic_store_explicit(&state->narrow_known[kind], true, memory_order_release);
  }
  kernel = atomic_load_explicit(&state->narrow[kind], memory_order_relaxed);
  pthread_mutex_unlock(&cache->mutex);
  return kernel;
}
