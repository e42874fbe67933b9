/* kernel_run.c - hpvm_rt_kernel_run: device choice, a per-site kernel cache, buffer parameters
 * (tracked objects through the tracker, untracked memory through temporaries) and the launch. */
#include "device/kernel_run.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/trace.h"
#include "device/cuda/cuda_device.h"
#include "device/cuda/cuda_libraries.h"
#include "device/opencl/opencl_device.h"

enum { KIND_COUNT = HPVM_RT_DEVICE_KIND_COUNT, STACK_PARAMS = 16, VALUE_MAX_BYTES = 64 };

/* One module per (device, image data, image format): the sites of one image share it. */
typedef struct loaded_module_t {
  struct loaded_module_t *next;
  hpvm_device_t *device;
  const void *data;
  hpvm_rt_image_format_t format;
  hpvm_device_module_t *module; /* NULL when loading failed */
  hpvm_status_t failure;        /* why, when module is NULL (warned when it happened) */
} loaded_module_t;

/* What site->state points to.  Created once per site and runtime, freed by the cache. */
typedef struct site_state_t {
  struct site_state_t *next; /* the cache's list (cache mutex) */
  hpvm_kernel_cache_t *cache;
  hpvm_rt_kernel_site_t *site;
  /* Each set at most once, under the cache mutex, and read without it (acquire). */
  _Atomic(hpvm_device_kernel_t *) kernels[KIND_COUNT];
  _Atomic(hpvm_status_t) failures[KIND_COUNT]; /* why the site can never run on that kind */
  atomic_flag warned;                          /* a per-call fallback was warned about */
  /* Why the site's library call never runs in this runtime (its parameters do not fit it, or
   * it failed before starting); set once (warned then), NULL while it may. */
  _Atomic(hpvm_status_t) library_failure;
} site_state_t;

struct hpvm_kernel_cache_t {
  hpvm_allocator_t allocator;
  hpvm_mem_tracker_t *tracker;
  hpvm_kernel_device_get_fn_t device_get;
  void *device_get_self;
  hpvm_kernel_device_choice_t choice;
  int64_t picks[3][3]; /* the work-group picked for grids of rank 1, 2, 3 (HPVM_WORKGROUP) */
  pthread_mutex_t mutex; /* guards `sites`, `modules` and every module load / kernel lookup */
  site_state_t *sites;
  loaded_module_t *modules;
  hpvm_cuda_libraries_t *libraries; /* cuDNN and cuBLAS, loaded on first use */
};

/*===--- reasons for running the CPU version --------------------------------===*/

typedef struct reason_t {
  size_t length;
  char text[2048];
} reason_t;

static void reason_add(reason_t *reason, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends "; <formatted>" (or just the text when empty); silently cut when full. */
static void reason_add(reason_t *reason, const char *format, ...) {
  size_t room = sizeof(reason->text) - reason->length;
  if (room <= 3)
    return;
  if (reason->length) {
    memcpy(reason->text + reason->length, "; ", 2);
    reason->length += 2;
    room -= 2;
  }
  va_list args;
  va_start(args, format);
  int written = vsnprintf(reason->text + reason->length, room, format, args);
  va_end(args);
  if (written > 0)
    reason->length += (size_t)written < room ? (size_t)written : room - 1;
  reason->text[reason->length] = '\0';
}

static const char *node_name(const hpvm_rt_kernel_site_t *site) {
  return site->node ? site->node : site->kernel;
}

static const char *kind_name(hpvm_rt_device_kind_t kind) {
  return kind == HPVM_RT_DEVICE_CUDA ? "cuda" : kind == HPVM_RT_DEVICE_OPENCL ? "opencl" : "cpu";
}

/* "cuda:<ordinal>" for CUDA devices, the device's name ("opencl:<device>") otherwise. */
static void trace_name(hpvm_device_t *device, char *out, size_t size) {
  if (hpvm_cuda_device_is(device))
    snprintf(out, size, "cuda:%d", hpvm_cuda_device_ordinal(device));
  else
    snprintf(out, size, "%s", device->name);
}

/* Nothing ran: the caller runs the CPU version.  Traced, never warned (a missing device or
 * image is the ordinary case; the failures worth a warning were warned where they happened). */
static hpvm_status_t fall_back(const hpvm_rt_kernel_site_t *site, const reason_t *reason) {
  if (hpvm_trace_enabled())
    hpvm_trace_line("%s falls back to cpu: %s", node_name(site), reason->text);
  return NULL;
}

/* Nothing ran although the device and the kernel exist: traced, and warned once per site. */
static hpvm_status_t fall_back_warned(site_state_t *state, hpvm_device_t *device,
                                      const reason_t *reason) {
  const hpvm_rt_kernel_site_t *site = state->site;
  if (!atomic_flag_test_and_set(&state->warned))
    hpvm_warning("node '%s': kernel '%s' cannot run on %s, the CPU version runs instead (warned "
                 "once per node): %s",
                 node_name(site), site->kernel, device->name, reason->text);
  return fall_back(site, reason);
}

/*===--- the cache ----------------------------------------------------------===*/

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

hpvm_status_t hpvm_kernel_cache_create(hpvm_allocator_t allocator, hpvm_mem_tracker_t *tracker,
                                       hpvm_kernel_device_get_fn_t device_get,
                                       void *device_get_self, hpvm_kernel_device_choice_t choice,
                                       hpvm_kernel_cache_t **out_cache) {
  int64_t picks[3][3];
  HPVM_RETURN_IF_ERROR(hpvm_kernel_workgroup_parse(getenv("HPVM_WORKGROUP"), picks));
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
  memcpy(cache->picks, picks, sizeof(picks));
  pthread_mutex_init(&cache->mutex, NULL);
  *out_cache = cache;
  return NULL;
}

void hpvm_kernel_cache_destroy(hpvm_kernel_cache_t *cache) {
  if (!cache)
    return;
  for (site_state_t *state = cache->sites; state;) {
    site_state_t *next = state->next;
    /* The site is the program's (a global of the generated code): it works again, with a
     * fresh state, under the next runtime. */
    __atomic_store_n(&state->site->state, NULL, __ATOMIC_RELEASE);
    for (int kind = 0; kind < KIND_COUNT; ++kind)
      hpvm_status_free(atomic_load(&state->failures[kind]));
    hpvm_status_free(atomic_load(&state->library_failure));
    hpvm_allocator_free(cache->allocator, state);
    state = next;
  }
  for (loaded_module_t *entry = cache->modules; entry;) {
    loaded_module_t *next = entry->next;
    hpvm_rt_module_unload(entry->module); /* frees its kernels */
    hpvm_status_free(entry->failure);
    hpvm_allocator_free(cache->allocator, entry);
    entry = next;
  }
  hpvm_cuda_libraries_destroy(cache->libraries); /* handles before their devices close */
  pthread_mutex_destroy(&cache->mutex);
  hpvm_allocator_free(cache->allocator, cache);
}

/* The site's state in this cache, created on first use (published with a release store). */
static hpvm_status_t site_state(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                                site_state_t **out_state) {
  site_state_t *state = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
  if (!state) {
    hpvm_status_t status = NULL;
    pthread_mutex_lock(&cache->mutex);
    state = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (!state) {
      status = hpvm_allocator_calloc(cache->allocator, sizeof(*state), (void **)&state);
      if (!status) {
        state->cache = cache;
        state->site = site;
        for (int kind = 0; kind < KIND_COUNT; ++kind) {
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
                       node_name(site));
  *out_state = state;
  return NULL;
}

/* The loaded module of `image` on `device`, loading it on first use (cache mutex held).  A
 * failed load is remembered (and warned about once); only a failure to allocate the entry
 * itself is returned. */
static hpvm_status_t module_for(hpvm_kernel_cache_t *cache, hpvm_device_t *device,
                                const hpvm_rt_module_image_t *image,
                                const hpvm_rt_kernel_site_t *site, loaded_module_t **out_entry) {
  for (loaded_module_t *entry = cache->modules; entry; entry = entry->next) {
    if (entry->device == device && entry->data == image->data && entry->format == image->format) {
      *out_entry = entry;
      return NULL;
    }
  }
  loaded_module_t *entry;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(cache->allocator, sizeof(*entry), (void **)&entry));
  entry->device = device;
  entry->data = image->data;
  entry->format = image->format;
  hpvm_status_t status = hpvm_rt_module_load(device, image, &entry->module);
  if (status) {
    entry->module = NULL;
    entry->failure = status;
    hpvm_warning("cannot load the %s image of node '%s' on %s, so none of its kernels runs "
                 "there: %s: %s",
                 kind_name(device->kind), node_name(site), device->name,
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
static hpvm_device_kernel_t *site_kernel(hpvm_kernel_cache_t *cache, site_state_t *state,
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
    loaded_module_t *entry = NULL;
    transient = module_for(cache, device, image, site, &entry);
    if (!transient) {
      hpvm_status_t status = NULL;
      if (entry->failure) {
        status = hpvm_status_clone(entry->failure);
      } else {
        status = hpvm_rt_kernel_get(entry->module, site->kernel, &kernel);
        if (status) {
          kernel = NULL;
          hpvm_warning("node '%s' cannot run on %s: %s: %s",
                       node_name(site), device->name,
                       hpvm_status_code_name(hpvm_status_code(status)),
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

/*===--- library calls (cuDNN, cuBLAS) -------------------------------------===*/

/* Records that the site's library call never runs in this runtime (the first reason stays),
 * warned once: its generated kernel runs instead. Takes `reason`. */
static void library_refuse(site_state_t *state, hpvm_status_t reason) {
  hpvm_status_t expected = NULL;
  if (!atomic_compare_exchange_strong(&state->library_failure, &expected, reason)) {
    hpvm_status_free(reason);
    return;
  }
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_warning("node '%s': its %s call cannot run, so its kernel runs instead (warned once per "
               "node): %s: %s",
               node_name(site), hpvm_cuda_library_name(site->library),
               hpvm_status_code_name(hpvm_status_code(reason)), hpvm_status_message(reason));
}

static int64_t product(const int64_t *values, int count) {
  int64_t result = 1;
  for (int i = 0; i < count; ++i)
    result = values[i] < 0 || (values[i] && result > INT64_MAX / values[i]) ? -1
                                                                             : result * values[i];
  return result;
}

/* Why the memref whose parameters start at `first` cannot be the call's `what` (`elements` f32
 * values at offset 0, written when `written`), or NULL. */
static hpvm_status_t check_library_memref(const hpvm_rt_kernel_param_t *params, uint32_t count,
                                          int32_t first, int64_t elements, const char *what,
                                          bool written) {
  if (first < 0 || (uint64_t)first + 3 > count || elements < 0 ||
      (uint64_t)elements > UINT64_MAX / 4)
    return HPVM_STATUS(INVALID_ARGUMENT, "the %s is not among the %u parameters", what, count);
  const hpvm_rt_kernel_param_t *data = &params[first + 1], *offset = &params[first + 2];
  if (data->kind != HPVM_RT_PARAM_BUFFER || !data->host ||
      (data->size && data->size < (uint64_t)elements * 4) ||
      (written && data->access == HPVM_RT_ACCESS_IN))
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "parameter %d is not the %s (a buffer of %lld floats%s)", first + 1, what,
                       (long long)elements, written ? " it writes" : "");
  if (offset->kind != HPVM_RT_PARAM_VALUE || offset->size != sizeof(int64_t) ||
      *(const int64_t *)offset->value != 0)
    return HPVM_STATUS(INVALID_ARGUMENT, "parameter %d is not the %s's offset 0", first + 2,
                       what);
  return NULL;
}

/* Why the parameters do not fit the site's library call, or NULL. */
static hpvm_status_t check_library_params(const hpvm_rt_tensor_library_call_t *call,
                                          const hpvm_rt_kernel_param_t *params, uint32_t count) {
  const int64_t *s = call->sizes;
  bool conv = call->op == HPVM_RT_TENSOR_LIBRARY_CONV2D;
  int64_t groups = call->groups > 0 ? call->groups : 1;
  int64_t x = conv ? product(s, 4) : product((const int64_t[]){s[0], s[1], s[3]}, 3);
  int64_t w = conv ? product((const int64_t[]){call->filter[0], s[1] / groups, call->filter[1],
                                               call->filter[2]},
                             4)
                   : product((const int64_t[]){s[0], s[3], s[2]}, 3);
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->x_param, x, "input", false));
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->w_param, w, "weights", false));
  if (call->bias_param >= 0)
    HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->bias_param,
                                              product(call->bias, 4), "bias", false));
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->output_param,
                                            product(call->output, 4), "output", true));
  if (call->scalars_param >= 0) {
    const hpvm_rt_kernel_param_t *scalars =
        (uint32_t)call->scalars_param < count ? &params[call->scalars_param] : NULL;
    if (!scalars || scalars->kind != HPVM_RT_PARAM_BUFFER || !scalars->host || !call->scalars ||
        scalars->size < call->scalars_size)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "parameter %d is not the struct of the %llu bytes of scalar outputs",
                         call->scalars_param, (unsigned long long)call->scalars_size);
  }
  return NULL;
}

/* Whether the site's library call runs on `device`: a CUDA device, the libraries load, the
 * parameters fit the call. A missing library is the ordinary case (nothing said). */
static bool library_usable(hpvm_kernel_cache_t *cache, site_state_t *state,
                           hpvm_device_t *device, const hpvm_rt_kernel_param_t *params,
                           uint32_t count) {
  const hpvm_rt_kernel_site_t *site = state->site;
  if (!site->library || !hpvm_cuda_device_is(device) || atomic_load(&state->library_failure))
    return false;
  if (!hpvm_cuda_libraries_available(cache->libraries, site->library))
    return false;
  hpvm_status_t status = check_library_params(site->library, params, count);
  if (status) {
    library_refuse(state, status);
    return false;
  }
  return true;
}

/* What a call runs: the kernel, or the site's library call, on `device`. */
typedef struct target_t {
  hpvm_device_t *device;
  hpvm_device_kernel_t *kernel;
  bool library;
} target_t;

/* The first device allowed by HPVM_DEVICE that has an image, is open and healthy, and has the
 * kernel; *out_device is NULL (and `reason` says why) when there is none. */
static void choose_device(hpvm_kernel_cache_t *cache, site_state_t *state,
                          const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                          target_t *target, reason_t *reason) {
  const hpvm_rt_kernel_site_t *site = state->site;
  memset(target, 0, sizeof(*target));
  hpvm_rt_device_kind_t kinds[2] = {HPVM_RT_DEVICE_CUDA, HPVM_RT_DEVICE_OPENCL};
  int count = 2;
  switch (cache->choice) {
  case HPVM_KERNEL_DEVICE_CPU:
    reason_add(reason, "HPVM_DEVICE=cpu");
    return;
  case HPVM_KERNEL_DEVICE_CUDA:
    reason_add(reason, "HPVM_DEVICE=cuda");
    count = 1;
    break;
  case HPVM_KERNEL_DEVICE_OPENCL:
    reason_add(reason, "HPVM_DEVICE=opencl");
    kinds[0] = HPVM_RT_DEVICE_OPENCL;
    count = 1;
    break;
  case HPVM_KERNEL_DEVICE_ANY:
    break;
  }
  for (int i = 0; i < count; ++i) {
    hpvm_rt_device_kind_t kind = kinds[i];
    const hpvm_rt_module_image_t *image =
        kind == HPVM_RT_DEVICE_CUDA ? site->cuda : site->opencl;
    if (!image) {
      reason_add(reason, "no %s image", kind_name(kind));
      continue;
    }
    hpvm_device_t *device = NULL;
    hpvm_status_t status = cache->device_get(cache->device_get_self, kind, &device);
    if (status) {
      reason_add(reason, "%s", hpvm_status_message(status));
      /* A missing driver or device is the ordinary case; anything else is worth a word. */
      if (hpvm_status_code(status) != HPVM_STATUS_UNAVAILABLE &&
          !atomic_flag_test_and_set(&state->warned))
        hpvm_warning("node '%s': cannot open the %s device, the CPU version runs instead "
                     "(warned once per node): %s: %s",
                     node_name(site), kind_name(kind),
                     hpvm_status_code_name(hpvm_status_code(status)),
                     hpvm_status_message(status));
      hpvm_status_free(status);
      continue;
    }
    if (atomic_load(&device->failed)) {
      reason_add(reason, "%s failed earlier", device->name);
      continue;
    }
    /* A library call needs no module: it is not loaded for it. */
    target->library = kind == HPVM_RT_DEVICE_CUDA &&
                      library_usable(cache, state, device, params, param_count);
    hpvm_device_kernel_t *kernel =
        target->library ? NULL : site_kernel(cache, state, device, image, &status);
    if (!kernel && !target->library) {
      reason_add(reason, "%s: %s", device->name, hpvm_status_message(status));
      hpvm_status_free(status);
      continue;
    }
    target->device = device;
    target->kernel = kernel;
    reason->length = 0; /* why other devices were passed over no longer matters */
    reason->text[0] = '\0';
    return;
  }
}

/*===--- launch dimensions --------------------------------------------------===*/

/* Caller errors in grid and block; *out_pick when the runtime picks the work-group size. */
static hpvm_status_t check_dims(const int64_t grid[3], const int64_t block[3], bool *out_pick,
                                bool *out_empty) {
  *out_empty = false;
  *out_pick = !block || (block[0] == 0 && block[1] == 0 && block[2] == 0);
  for (int d = 0; d < 3; ++d) {
    if (grid[d] < 0)
      return HPVM_STATUS(INVALID_ARGUMENT, "kernel_run: grid[%d] = %lld is negative", d,
                         (long long)grid[d]);
    if (grid[d] == 0)
      *out_empty = true;
  }
  if (*out_pick)
    return NULL;
  for (int d = 0; d < 3; ++d) {
    if (block[d] < 1)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run: block[%d] = %lld; expected all block extents 0 (the "
                         "runtime picks) or all >= 1",
                         d, (long long)block[d]);
    if (grid[d] % block[d] != 0)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run: grid[%d] = %lld is not a multiple of block[%d] = %lld", d,
                         (long long)grid[d], d, (long long)block[d]);
  }
  return NULL;
}

/* Work-groups and their size for a non-empty grid; false (with the reason) when they exceed
 * what `device` can launch. */
static bool launch_dims(const int64_t grid[3], const int64_t block[3], bool pick,
                        const int64_t picks[3][3], const hpvm_device_t *device,
                        hpvm_rt_launch_dims_t *dims, reason_t *reason) {
  int64_t sizes[3], groups[3];
  int rank = grid[2] != 1 ? 3 : grid[1] != 1 ? 2 : 1;
  for (int d = 0; d < 3; ++d) {
    if (pick)
      sizes[d] = picks[rank - 1][d] < grid[d] ? picks[rank - 1][d] : grid[d];
    else
      sizes[d] = block[d];
    groups[d] = grid[d] / sizes[d] + (grid[d] % sizes[d] != 0);
  }
  /* CUDA's limits (every GPU since compute capability 3.0); other devices take any uint32
   * and report their own limits at launch, before the kernel starts. */
  bool cuda = device->kind == HPVM_RT_DEVICE_CUDA;
  const int64_t any = (int64_t)UINT32_MAX;
  const int64_t max_groups[3] = {cuda ? (int64_t)INT32_MAX : any, cuda ? 65535 : any,
                                 cuda ? 65535 : any};
  const int64_t max_sizes[3] = {cuda ? 1024 : any, cuda ? 1024 : any, cuda ? 64 : any};
  static const char axis[3] = {'x', 'y', 'z'};
  for (int d = 0; d < 3; ++d) {
    if (groups[d] > max_groups[d]) {
      reason_add(reason, "the grid needs %lld work-groups along %c, more than %s allows (%lld)",
                 (long long)groups[d], axis[d], device->name, (long long)max_groups[d]);
      return false;
    }
    if (sizes[d] > max_sizes[d]) {
      reason_add(reason, "work-groups of %lld instances along %c are more than %s allows (%lld)",
                 (long long)sizes[d], axis[d], device->name, (long long)max_sizes[d]);
      return false;
    }
  }
  if (cuda && sizes[0] * sizes[1] * sizes[2] > 1024) {
    reason_add(reason, "work-groups of %lld x %lld x %lld instances are more than %s allows (1024)",
               (long long)sizes[0], (long long)sizes[1], (long long)sizes[2], device->name);
    return false;
  }
  for (int d = 0; d < 3; ++d) {
    dims->grid[d] = (uint32_t)groups[d];
    dims->block[d] = (uint32_t)sizes[d];
  }
  dims->shared_memory_bytes = 0;
  return true;
}

/*===--- buffer parameters --------------------------------------------------===*/

/* How one parameter reaches the kernel. */
typedef struct param_slot_t {
  uint64_t value;  /* the 8-byte argument of a BUFFER parameter (device pointer or cl_mem) */
  uint64_t parent; /* the device buffer the range lies in (0 until resolved) */
  size_t offset;   /* where the range starts in `parent` */
  size_t bytes;    /* the range the kernel may touch */
  int32_t group;   /* untracked: its temporary (index into run_t.groups); -1 otherwise */
  bool tracked;
  bool writes;     /* access OUT or INOUT */
  bool writes_all; /* OUT | HPVM_RT_PARAM_WRITES_ALL: a tracked copy needs no copy in */
  bool requested;  /* the tracker made the device copy valid (undone on a fallback) */
  bool in_use;     /* `parent` is held in the device's buffer registry */
  bool sub_buffer; /* `value` is an OpenCL sub-buffer to release */
} param_slot_t;

/* Untracked host ranges that overlap share one temporary device buffer (their union), so
 * that aliasing parameters see each other's writes and are copied back once. */
typedef struct temp_group_t {
  char *begin, *end;
  bool writes;
  uint64_t handle; /* 0 until allocated */
} temp_group_t;

/* One call's working state. */
typedef struct run_t {
  hpvm_kernel_cache_t *cache;
  hpvm_device_t *device;
  const hpvm_rt_kernel_param_t *params;
  uint32_t count;
  param_slot_t *slots;
  temp_group_t *groups;
  uint32_t group_count;
  uint32_t *order;
  hpvm_rt_kernel_arg_t *args;
  /* Small calls (the usual case) need no heap. */
  param_slot_t stack_slots[STACK_PARAMS];
  temp_group_t stack_groups[STACK_PARAMS];
  uint32_t stack_order[STACK_PARAMS];
  hpvm_rt_kernel_arg_t stack_args[STACK_PARAMS];
} run_t;

static hpvm_status_t run_init(run_t *run, hpvm_kernel_cache_t *cache, hpvm_device_t *device,
                              const hpvm_rt_kernel_param_t *params, uint32_t count) {
  run->cache = cache;
  run->device = device;
  run->params = params;
  run->count = count;
  run->group_count = 0;
  if (count <= STACK_PARAMS) {
    run->slots = run->stack_slots;
    run->groups = run->stack_groups;
    run->order = run->stack_order;
    run->args = run->stack_args;
    return NULL;
  }
  run->slots = NULL;
  run->groups = NULL;
  run->order = NULL;
  run->args = NULL;
  hpvm_allocator_t allocator = cache->allocator;
  hpvm_status_t status =
      hpvm_allocator_calloc_array(allocator, count, sizeof(*run->slots), (void **)&run->slots);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, count, sizeof(*run->groups),
                                         (void **)&run->groups);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, count, sizeof(*run->order),
                                         (void **)&run->order);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, count, sizeof(*run->args), (void **)&run->args);
  return status;
}

static void run_free(run_t *run) {
  if (run->slots == run->stack_slots)
    return;
  hpvm_allocator_t allocator = run->cache->allocator;
  hpvm_allocator_free(allocator, run->slots);
  hpvm_allocator_free(allocator, run->groups);
  hpvm_allocator_free(allocator, run->order);
  hpvm_allocator_free(allocator, run->args);
}

/* Decides, without side effects, how every BUFFER parameter reaches the kernel: its range,
 * tracked or not, the temporaries of untracked ranges.  Returns an error for a malformed
 * call; sets *out_ok = false (with the reason) when the device cannot take the parameters. */
static hpvm_status_t plan_buffers(run_t *run, reason_t *reason, bool *out_ok) {
  *out_ok = true;
  bool opencl = hpvm_opencl_device_is(run->device);
  size_t align = opencl ? hpvm_opencl_device_base_align(run->device) : 1;
  uint32_t untracked = 0;
  for (uint32_t i = 0; i < run->count; ++i) {
    const hpvm_rt_kernel_param_t *param = &run->params[i];
    param_slot_t *slot = &run->slots[i];
    memset(slot, 0, sizeof(*slot));
    slot->group = -1;
    if (param->kind != HPVM_RT_PARAM_BUFFER || !param->host)
      continue;
    slot->writes = param->access != HPVM_RT_ACCESS_IN;
    slot->writes_all = param->access == (HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL);
    char *host = param->host;
    void *base;
    size_t object_size;
    if (hpvm_mem_tracker_find(run->cache->tracker, host, &base, &object_size)) {
      size_t offset = (size_t)(host - (char *)base);
      size_t rest = object_size - offset;
      if (param->size > rest)
        return HPVM_STATUS(OUT_OF_RANGE,
                           "kernel_run: parameter %u: %llu bytes at %p leave the tracked object "
                           "[%p, +%zu)",
                           i, (unsigned long long)param->size, (void *)host, base, object_size);
      slot->tracked = true;
      slot->bytes = param->size ? (size_t)param->size : rest;
      if (offset % align != 0) {
        reason_add(reason,
                   "parameter %u points %zu bytes into its tracked object, not a multiple of "
                   "the base address alignment of %s (%zu bytes)",
                   i, offset, run->device->name, align);
        *out_ok = false;
        return NULL;
      }
      continue;
    }
    if (param->size == 0) {
      reason_add(reason,
                 "parameter %u (%p) is not tracked and has size 0: the runtime cannot tell how "
                 "many bytes to copy",
                 i, (void *)host);
      *out_ok = false;
      return NULL;
    }
    if (param->size > SIZE_MAX || (uintptr_t)host > UINTPTR_MAX - param->size)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run: parameter %u: %p + %llu bytes wraps around memory", i,
                         (void *)host, (unsigned long long)param->size);
    slot->bytes = (size_t)param->size;
    run->order[untracked++] = i;
  }
  /* Untracked ranges by start (insertion sort: a handful of parameters), then unions of the
   * overlapping ones. */
  for (uint32_t i = 1; i < untracked; ++i) {
    uint32_t index = run->order[i];
    char *host = run->params[index].host;
    uint32_t j = i;
    for (; j > 0 && (char *)run->params[run->order[j - 1]].host > host; --j)
      run->order[j] = run->order[j - 1];
    run->order[j] = index;
  }
  for (uint32_t i = 0; i < untracked; ++i) {
    param_slot_t *slot = &run->slots[run->order[i]];
    char *begin = run->params[run->order[i]].host, *end = begin + slot->bytes;
    temp_group_t *group = run->group_count ? &run->groups[run->group_count - 1] : NULL;
    if (group && begin < group->end) {
      if (end > group->end)
        group->end = end;
      group->writes |= slot->writes;
    } else {
      group = &run->groups[run->group_count++];
      group->begin = begin;
      group->end = end;
      group->writes = slot->writes;
      group->handle = 0;
    }
    slot->group = (int32_t)(group - run->groups);
  }
  for (uint32_t i = 0; i < untracked; ++i) {
    param_slot_t *slot = &run->slots[run->order[i]];
    slot->offset = (size_t)((char *)run->params[run->order[i]].host - run->groups[slot->group].begin);
    if (slot->offset % align != 0) {
      reason_add(reason,
                 "untracked parameter %u starts %zu bytes into the memory of an overlapping "
                 "parameter, not a multiple of the base address alignment of %s (%zu bytes)",
                 run->order[i], slot->offset, run->device->name, align);
      *out_ok = false;
      return NULL;
    }
  }
  return NULL;
}

/* Makes every buffer parameter's device memory ready: temporaries allocated and filled from
 * the host (OUT too: the kernel may write only part of them), tracked objects requested
 * (OUT as INOUT, for the same reason), sub-buffers made, every buffer held in use.  Stops at
 * the first failure; undo_buffers releases what was done. */
static hpvm_status_t prepare_buffers(run_t *run) {
  hpvm_device_t *device = run->device;
  for (uint32_t g = 0; g < run->group_count; ++g) {
    temp_group_t *group = &run->groups[g];
    size_t size = (size_t)(group->end - group->begin);
    HPVM_RETURN_IF_ERROR(hpvm_status_annotate(
        hpvm_device_buffer_alloc(device, size, HPVM_BUFFER_OWNER_KERNEL_RUN, &group->handle),
        "allocating a %zu-byte temporary on %s", size, device->name));
    HPVM_RETURN_IF_ERROR(hpvm_status_annotate(
        hpvm_device_copy_to_device(device, group->handle, 0, group->begin, size),
        "copying %zu bytes to %s", size, device->name));
  }
  bool opencl = hpvm_opencl_device_is(device);
  for (uint32_t i = 0; i < run->count; ++i) {
    param_slot_t *slot = &run->slots[i];
    const hpvm_rt_kernel_param_t *param = &run->params[i];
    if (param->kind != HPVM_RT_PARAM_BUFFER || !param->host)
      continue;
    if (slot->tracked) {
      HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(
          run->cache->tracker, param->host, slot->bytes, device,
          slot->writes_all ? HPVM_RT_ACCESS_OUT
          : slot->writes   ? HPVM_RT_ACCESS_INOUT
                           : HPVM_RT_ACCESS_IN,
          &slot->parent, &slot->offset));
      slot->requested = true;
    } else {
      slot->parent = run->groups[slot->group].handle;
    }
    /* Held until the copies back are done: the buffer cannot be freed (an untrack racing
     * with the launch) while the kernel uses it. */
    HPVM_RETURN_IF_ERROR(hpvm_buffer_registry_begin_use(&device->buffers, slot->parent,
                                                        slot->offset, slot->bytes,
                                                        "kernel argument", device->name));
    slot->in_use = true;
    if (!opencl) {
      slot->value = slot->parent + slot->offset; /* CUDA and host devices: an address */
    } else if (slot->offset == 0) {
      slot->value = slot->parent;
    } else {
      HPVM_RETURN_IF_ERROR(hpvm_opencl_sub_buffer_create(device, slot->parent, slot->offset,
                                                         slot->bytes, &slot->value));
      slot->sub_buffer = true;
    }
  }
  return NULL;
}

/* Releases sub-buffers and in-use holds, copies written temporaries back when `copy_back`,
 * frees the temporaries.  Returns the first error (everything is released regardless). */
static hpvm_status_t release_buffers(run_t *run, bool copy_back) {
  hpvm_device_t *device = run->device;
  for (uint32_t i = 0; i < run->count; ++i) {
    param_slot_t *slot = &run->slots[i];
    if (slot->sub_buffer)
      hpvm_opencl_sub_buffer_release(device, slot->value);
    if (slot->in_use)
      hpvm_buffer_registry_end_use(&device->buffers, slot->parent);
    slot->sub_buffer = slot->in_use = false;
  }
  hpvm_status_t first = NULL;
  for (uint32_t g = 0; g < run->group_count; ++g) {
    temp_group_t *group = &run->groups[g];
    if (!group->handle)
      continue;
    size_t size = (size_t)(group->end - group->begin);
    if (copy_back && group->writes && !first)
      first = hpvm_status_annotate(
          hpvm_device_copy_to_host(device, group->begin, group->handle, 0, size),
          "copying %zu bytes back from %s", size, device->name);
    hpvm_status_t status = hpvm_device_buffer_free(device, group->handle,
                                                   HPVM_BUFFER_OWNER_KERNEL_RUN);
    if (status && !first)
      first = status;
    else
      hpvm_status_free(status);
    group->handle = 0;
  }
  return first;
}

/* After a fallback: the tracked objects requested for writing get a valid host copy again
 * (their device copies hold the same data: the kernel did not run), so that the CPU version's
 * writes on the host are the newest. */
static hpvm_status_t restore_host(run_t *run) {
  for (uint32_t i = 0; i < run->count; ++i) {
    param_slot_t *slot = &run->slots[i];
    if (slot->requested && slot->writes)
      HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(run->cache->tracker, run->params[i].host,
                                                    slot->bytes, NULL, HPVM_RT_ACCESS_INOUT,
                                                    NULL, NULL));
  }
  return NULL;
}

/*===--- workgroup memory ---------------------------------------------------===*/

enum { WORKGROUP_ALIGN = 16, CUDA_SHARED_BYTES = 48 * 1024 };

/* Lays out the WORKGROUP parameters: OpenCL takes each as a __local argument of its size;
 * CUDA gets the byte offsets of the buffers in the launch's dynamic shared memory (each
 * aligned to 16 bytes), whose total goes into dims.  Sets *out_ok = false (with the reason)
 * when the memory is more than the device gives one work-group. */
static void plan_workgroup(run_t *run, hpvm_rt_launch_dims_t *dims, reason_t *reason,
                           bool *out_ok) {
  *out_ok = true;
  if (hpvm_opencl_device_is(run->device))
    return; /* the device reports its limit when the arguments are set, before any run */
  uint64_t total = 0;
  for (uint32_t i = 0; i < run->count; ++i) {
    const hpvm_rt_kernel_param_t *param = &run->params[i];
    if (param->kind != HPVM_RT_PARAM_WORKGROUP)
      continue;
    uint64_t bytes = param->size ? param->size : 1;
    uint64_t offset = (total + WORKGROUP_ALIGN - 1) / WORKGROUP_ALIGN * WORKGROUP_ALIGN;
    if (bytes > CUDA_SHARED_BYTES || offset + bytes > CUDA_SHARED_BYTES) {
      reason_add(reason,
                 "the work-group memory (%llu bytes with parameter %u) is more than the %d "
                 "bytes of shared memory %s gives a block",
                 (unsigned long long)(offset > CUDA_SHARED_BYTES ? offset : offset + bytes), i,
                 CUDA_SHARED_BYTES, run->device->name);
      *out_ok = false;
      return;
    }
    run->slots[i].value = offset;
    total = offset + bytes;
  }
  dims->shared_memory_bytes = (uint32_t)total;
}

/*===--- the entry point ----------------------------------------------------===*/

static hpvm_status_t check_params(const hpvm_rt_kernel_param_t *params, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const hpvm_rt_kernel_param_t *param = &params[i];
    if (param->kind == HPVM_RT_PARAM_VALUE) {
      if (!param->value || param->size < 1 || param->size > VALUE_MAX_BYTES)
        return HPVM_STATUS(INVALID_ARGUMENT,
                           "kernel_run: value parameter %u has %llu bytes at %p; expected 1..%d "
                           "bytes at a non-NULL address",
                           i, (unsigned long long)param->size, param->value, VALUE_MAX_BYTES);
    } else if (param->kind == HPVM_RT_PARAM_WORKGROUP) {
      if (param->size > UINT32_MAX)
        return HPVM_STATUS(INVALID_ARGUMENT,
                           "kernel_run: workgroup parameter %u asks for %llu bytes per "
                           "work-group; expected at most %u",
                           i, (unsigned long long)param->size, UINT32_MAX);
    } else if (param->kind == HPVM_RT_PARAM_BUFFER) {
      if (param->access != HPVM_RT_ACCESS_IN && param->access != HPVM_RT_ACCESS_OUT &&
          param->access != HPVM_RT_ACCESS_INOUT &&
          param->access != (HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL))
        return HPVM_STATUS(INVALID_ARGUMENT,
                           "kernel_run: buffer parameter %u has access %u; expected 1 (in), 2 "
                           "(out), 3 (inout) or 0x102 (out, every byte written)",
                           i, param->access);
    } else {
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run: parameter %u has kind %u; expected 0 (value), 1 (buffer) "
                         "or 2 (workgroup)",
                         i, param->kind);
    }
  }
  return NULL;
}

/* The kernel's arguments: values as they are, buffers as their device addresses (or handles),
 * OpenCL work-group memory as __local arguments. */
static void fill_args(run_t *run) {
  bool opencl = hpvm_opencl_device_is(run->device);
  for (uint32_t i = 0; i < run->count; ++i) {
    const hpvm_rt_kernel_param_t *param = &run->params[i];
    if (param->kind == HPVM_RT_PARAM_VALUE) {
      run->args[i].size = (size_t)param->size;
      run->args[i].value = param->value;
    } else if (param->kind == HPVM_RT_PARAM_WORKGROUP && opencl) {
      run->args[i].size = param->size ? (size_t)param->size : 1;
      run->args[i].value = NULL; /* __local memory */
    } else {
      run->args[i].size = sizeof(uint64_t);
      run->args[i].value = &run->slots[i].value;
    }
  }
}

/* The device addresses of the library call's tensors (their aligned pointers' buffers). */
static void library_buffers(const run_t *run, const hpvm_rt_tensor_library_call_t *call,
                            hpvm_cuda_library_buffers_t *out) {
  out->x = run->slots[call->x_param + 1].value;
  out->w = run->slots[call->w_param + 1].value;
  out->bias = call->bias_param >= 0 ? run->slots[call->bias_param + 1].value : 0;
  out->output = run->slots[call->output_param + 1].value;
}

/* Runs the call on `target` (plans, prepares the buffers, launches the kernel or calls the
 * library, copies back). *out_retry when the library call failed before it started: that is
 * recorded (and warned), so that choosing again picks the kernel. */
static hpvm_status_t run_on_target(hpvm_kernel_cache_t *cache, site_state_t *state,
                                   const target_t *target, const int64_t grid[3],
                                   const int64_t block[3], bool pick,
                                   const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                   reason_t *reason, int32_t *out_ran, bool *out_retry) {
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_device_t *device = target->device;
  *out_retry = false;
  hpvm_rt_launch_dims_t dims;
  memset(&dims, 0, sizeof(dims));
  if (!target->library && !launch_dims(grid, block, pick, cache->picks, device, &dims, reason))
    return fall_back_warned(state, device, reason);
  run_t run;
  hpvm_status_t status = run_init(&run, cache, device, params, param_count);
  bool ok = true;
  if (!status)
    status = plan_buffers(&run, reason, &ok);
  if (!status && ok)
    plan_workgroup(&run, &dims, reason, &ok);
  if (status || !ok) {
    run_free(&run);
    if (status && hpvm_status_code(status) == HPVM_STATUS_RESOURCE_EXHAUSTED) {
      reason_add(reason, "%s", hpvm_status_message(status)); /* host memory: try the CPU */
      hpvm_status_free(status);
      return fall_back_warned(state, device, reason);
    }
    if (status)
      return hpvm_status_annotate(status, "node '%s'", node_name(site));
    return fall_back_warned(state, device, reason);
  }
  bool started = false;
  status = prepare_buffers(&run);
  if (!status && target->library) {
    hpvm_cuda_library_buffers_t buffers;
    library_buffers(&run, site->library, &buffers);
    status = hpvm_cuda_library_run(cache->libraries, device, site->library, &buffers, &started);
  } else if (!status) {
    fill_args(&run);
    status = hpvm_device_kernel_launch(target->kernel, &dims, run.args, param_count, &started);
  }
  if (status && !started) {
    /* Nothing ran: undo and let the CPU version (or, after a library call, the kernel) run. */
    hpvm_status_free(release_buffers(&run, false));
    hpvm_status_t restored = restore_host(&run);
    run_free(&run);
    if (restored) {
      hpvm_status_free(status);
      return hpvm_status_annotate(restored,
                                  "node '%s': restoring the host copies after kernel '%s' could "
                                  "not start on %s",
                                  node_name(site), site->kernel, device->name);
    }
    if (target->library) {
      library_refuse(state, status);
      *out_retry = true;
      return NULL;
    }
    reason_add(reason, "%s: %s", hpvm_status_code_name(hpvm_status_code(status)),
               hpvm_status_message(status));
    hpvm_status_free(status);
    return fall_back_warned(state, device, reason);
  }
  const char *library = target->library ? hpvm_cuda_library_name(site->library) : NULL;
  if (status) {
    hpvm_status_free(release_buffers(&run, false));
    run_free(&run);
    /* A device that reports itself unavailable is not chosen again by this runtime. */
    if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE)
      atomic_store(&device->failed, true);
    return hpvm_status_annotate(status, "node '%s': %s '%s' failed on %s", node_name(site),
                                library ? "the library call of" : "kernel",
                                library ? library : site->kernel, device->name);
  }
  status = release_buffers(&run, true);
  run_free(&run);
  if (status)
    return hpvm_status_annotate(status, "node '%s': after kernel '%s' ran on %s",
                                node_name(site), site->kernel, device->name);
  /* The scalar outputs (constants) the kernel's first thread would have stored. */
  if (library && site->library->scalars_param >= 0)
    memcpy(params[site->library->scalars_param].host, site->library->scalars,
           (size_t)site->library->scalars_size);
  *out_ran = 1;
  if (hpvm_trace_enabled()) {
    char name[160];
    trace_name(device, name, sizeof(name));
    if (library)
      hpvm_trace_line("%s on %s (%s)", node_name(site), name, library);
    else
      hpvm_trace_line("%s on %s", node_name(site), name);
  }
  return NULL;
}

hpvm_status_t hpvm_kernel_run(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                              const int64_t grid[3], const int64_t block[3],
                              const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                              int32_t *out_ran) {
  if (out_ran)
    *out_ran = 0;
  if (!site || !site->kernel || !grid || !out_ran || (param_count && !params))
    return HPVM_STATUS(INVALID_ARGUMENT, "kernel_run needs a site with a kernel name, the grid, "
                                         "out_ran and the parameters");
  HPVM_RETURN_IF_ERROR(check_params(params, param_count));
  bool pick, empty;
  HPVM_RETURN_IF_ERROR(check_dims(grid, block, &pick, &empty));
  if (empty) {
    *out_ran = 1; /* no instance to run anywhere */
    return NULL;
  }
  site_state_t *state = NULL;
  HPVM_RETURN_IF_ERROR(site_state(cache, site, &state));
  /* At most twice: a library call that fails before it starts is not chosen again. */
  for (;;) {
    reason_t reason;
    reason.length = 0;
    reason.text[0] = '\0';
    target_t target;
    choose_device(cache, state, params, param_count, &target, &reason);
    if (!target.device)
      return fall_back(site, &reason);
    bool retry = false;
    hpvm_status_t status = run_on_target(cache, state, &target, grid, block, pick, params,
                                         param_count, &reason, out_ran, &retry);
    if (!retry)
      return status;
  }
}
