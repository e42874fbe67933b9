/* kernel_run.c - hpvm_rt_kernel_run: the device choice, the launch dimensions, and one call
 * through the cache (cache.c), its buffers (buffers.c) and a library call (libraries.c). */
#include "kernel/kernel_run.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/platform.h"
#include "base/trace.h"
#include "device/cuda/cuda_device.h"
#include "device/cuda/cuda_libraries.h"
#include "kernel/buffers.h"
#include "kernel/cache.h"
#include "kernel/failover.h"
#include "kernel/libraries.h"
#include "kernel/reason.h"
#include "kernel/run_target.h"

enum { VALUE_MAX_BYTES = 64 };

/*===--- falling back to the CPU version ------------------------------------===*/

void hpvm_kernel_trace_name(hpvm_device_t *device, char *out, size_t size) {
  if (hpvm_cuda_device_is(device))
    snprintf(out, size, "cuda:%d", hpvm_cuda_device_ordinal(device));
  else
    snprintf(out, size, "%s", device->name);
}

/* Nothing ran: the caller runs the CPU version.  Traced, never warned (a missing device or
 * image is the ordinary case; the failures worth a warning were warned where they happened). */
static hpvm_status_t fall_back(const hpvm_rt_kernel_site_t *site,
                               const hpvm_kernel_reason_t *reason) {
  if (hpvm_trace_enabled())
    hpvm_trace_line("%s falls back to cpu: %s", hpvm_kernel_node_name(site), reason->text);
  return NULL;
}

/* Nothing ran although the device and the kernel exist: traced, and warned once per site. */
static hpvm_status_t fall_back_warned(hpvm_kernel_site_state_t *state, hpvm_device_t *device,
                                      const hpvm_kernel_reason_t *reason) {
  const hpvm_rt_kernel_site_t *site = state->site;
  if (!atomic_flag_test_and_set(&state->warned))
    hpvm_warning("node '%s': kernel '%s' cannot run on %s, the CPU version runs instead (warned "
                 "once per node): %s",
                 hpvm_kernel_node_name(site), site->kernel, device->name, reason->text);
  return fall_back(site, reason);
}

void hpvm_kernel_choose_device(hpvm_kernel_cache_t *cache, hpvm_kernel_site_state_t *state,
                          const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                          hpvm_kernel_target_t *target, hpvm_kernel_reason_t *reason) {
  const hpvm_rt_kernel_site_t *site = state->site;
  memset(target, 0, sizeof(*target));
  hpvm_rt_device_kind_t kinds[2] = {HPVM_RT_DEVICE_CUDA, HPVM_RT_DEVICE_OPENCL};
  int count = 2;
  switch (cache->choice) {
  case HPVM_KERNEL_DEVICE_CPU:
    hpvm_kernel_reason_add(reason, "HPVM_DEVICE=cpu");
    return;
  case HPVM_KERNEL_DEVICE_CUDA:
    hpvm_kernel_reason_add(reason, "HPVM_DEVICE=cuda");
    count = 1;
    break;
  case HPVM_KERNEL_DEVICE_OPENCL:
    hpvm_kernel_reason_add(reason, "HPVM_DEVICE=opencl");
    kinds[0] = HPVM_RT_DEVICE_OPENCL;
    count = 1;
    break;
  case HPVM_KERNEL_DEVICE_ANY:
    break;
  }
  for (int i = 0; i < count; ++i) {
    hpvm_rt_device_kind_t kind = kinds[i];
    const hpvm_rt_module_image_t *image = kind == HPVM_RT_DEVICE_CUDA ? site->cuda : site->opencl;
    if (!image) {
      hpvm_kernel_reason_add(reason, "no %s image", hpvm_kernel_kind_name(kind));
      continue;
    }
    hpvm_device_t *device = NULL;
    hpvm_status_t status = cache->device_get(cache->device_get_self, kind, &device);
    if (status) {
      hpvm_kernel_reason_add(reason, "%s", hpvm_status_message(status));
      /* A missing driver or device is the ordinary case; anything else is worth a word. */
      if (hpvm_status_code(status) != HPVM_STATUS_UNAVAILABLE &&
          !atomic_flag_test_and_set(&state->warned))
        hpvm_warning("node '%s': cannot open the %s device, the CPU version runs instead "
                     "(warned once per node): %s: %s",
                     hpvm_kernel_node_name(site), hpvm_kernel_kind_name(kind),
                     hpvm_status_code_name(hpvm_status_code(status)), hpvm_status_message(status));
      hpvm_status_free(status);
      continue;
    }
    if (atomic_load(&device->failed)) {
      hpvm_kernel_reason_add(reason, "%s failed earlier", device->name);
      continue;
    }
    /* A library call needs no module: it is not loaded for it. */
    target->library = kind == HPVM_RT_DEVICE_CUDA &&
                      hpvm_kernel_library_usable(cache, state, device, params, param_count);
    hpvm_device_kernel_t *kernel =
        target->library ? NULL : hpvm_kernel_site_kernel(cache, state, device, image, &status);
    if (!kernel && !target->library) {
      hpvm_kernel_reason_add(reason, "%s: %s", device->name, hpvm_status_message(status));
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
hpvm_status_t hpvm_kernel_check_dims(const int64_t grid[3], const int64_t block[3], bool *out_pick,
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
                        hpvm_rt_launch_dims_t *dims, hpvm_kernel_reason_t *reason) {
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
      hpvm_kernel_reason_add(reason,
                             "the grid needs %lld work-groups along %c, more than %s allows (%lld)",
                             (long long)groups[d], axis[d], device->name, (long long)max_groups[d]);
      return false;
    }
    if (sizes[d] > max_sizes[d]) {
      hpvm_kernel_reason_add(
          reason, "work-groups of %lld instances along %c are more than %s allows (%lld)",
          (long long)sizes[d], axis[d], device->name, (long long)max_sizes[d]);
      return false;
    }
  }
  if (cuda && sizes[0] * sizes[1] * sizes[2] > 1024) {
    hpvm_kernel_reason_add(
        reason, "work-groups of %lld x %lld x %lld instances are more than %s allows (1024)",
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

/*===--- the entry point ----------------------------------------------------===*/

hpvm_status_t hpvm_kernel_check_params(const hpvm_rt_kernel_param_t *params, uint32_t count) {
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

bool hpvm_kernel_fits_32_bits(const int64_t grid[3], const hpvm_kernel_buffers_t *run) {
  const int64_t limit = (int64_t)1 << 31;
  if (grid[0] >= limit || grid[1] >= limit || grid[2] >= limit ||
      grid[0] * grid[1] >= limit || grid[0] * grid[1] * grid[2] >= limit)
    return false;
  for (uint32_t i = 0; i < run->count; ++i)
    if (run->params[i].kind == HPVM_RT_PARAM_BUFFER && run->slots[i].bytes >= (size_t)limit)
      return false;
  return true;
}

/* The kernel a launch of `target` runs: on CUDA its 32-bit variant where the grid and the
 * planned buffers fit it and the image has one (HPVM_CUDA_NARROW=0: never), else the kernel. */
static hpvm_device_kernel_t *launch_kernel(hpvm_kernel_cache_t *cache,
                                           hpvm_kernel_site_state_t *state,
                                           const hpvm_kernel_target_t *target,
                                           const int64_t grid[3],
                                           const hpvm_kernel_buffers_t *run) {
  if (!cache->narrow || target->device->kind != HPVM_RT_DEVICE_CUDA ||
      !hpvm_kernel_fits_32_bits(grid, run))
    return target->kernel;
  hpvm_device_kernel_t *narrow =
      hpvm_kernel_site_narrow_kernel(cache, state, target->device, state->site->cuda);
  return narrow ? narrow : target->kernel;
}

hpvm_status_t hpvm_kernel_run_on_target(hpvm_kernel_cache_t *cache,
                                        hpvm_kernel_site_state_t *state,
                                        const hpvm_kernel_target_t *target, const int64_t grid[3],
                                        const int64_t block[3], bool pick,
                                        const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                        const hpvm_kernel_run_hooks_t *hooks,
                                        hpvm_kernel_reason_t *reason, int32_t *out_ran,
                                        bool *out_retry) {
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_device_t *device = target->device;
  *out_retry = false;
  hpvm_rt_launch_dims_t dims;
  memset(&dims, 0, sizeof(dims));
  if (!target->library && !launch_dims(grid, block, pick, cache->picks, device, &dims, reason))
    return fall_back_warned(state, device, reason);
  hpvm_kernel_buffers_t run;
  hpvm_status_t status = hpvm_kernel_buffers_init(&run, cache, device, params, param_count);
  bool ok = true;
  if (!status && hooks)
    run.untracked_only = hooks->untracked_only;
  if (!status)
    status = hpvm_kernel_buffers_plan(&run, reason, &ok);
  if (!status && ok && hooks && hooks->planned)
    status = hooks->planned(hooks->self, &run);
  if (!status && ok)
    hpvm_kernel_buffers_plan_workgroup(&run, &dims, reason, &ok);
  if (status || !ok) {
    hpvm_kernel_buffers_free(&run);
    if (status && hpvm_status_code(status) == HPVM_STATUS_RESOURCE_EXHAUSTED) {
      hpvm_kernel_reason_add(reason, "%s",
                             hpvm_status_message(status)); /* host memory: try the CPU */
      hpvm_status_free(status);
      return fall_back_warned(state, device, reason);
    }
    if (status)
      return hpvm_status_annotate(status, "node '%s'", hpvm_kernel_node_name(site));
    return fall_back_warned(state, device, reason);
  }
  bool started = false;
  status = hpvm_kernel_buffers_prepare(&run);
  uint64_t launched = hpvm_platform_now_ns(); /* the kernel's own time, for split grids */
  if (!status && target->library) {
    hpvm_cuda_library_buffers_t buffers;
    hpvm_kernel_library_buffers(&run, site->library, &buffers);
    status = hpvm_cuda_library_run(cache->libraries, device, site->library, &buffers, &started);
  } else if (!status) {
    hpvm_kernel_buffers_fill_args(&run);
    status = hpvm_device_kernel_launch(launch_kernel(cache, state, target, grid, &run), &dims,
                                       run.args, param_count, &started);
  }
  if (hooks && hooks->launch_ns)
    *hooks->launch_ns = hpvm_platform_now_ns() - launched;
  if (status && !started) {
    /* Nothing ran: undo and let the CPU version (or, after a library call, the kernel) run. */
    hpvm_status_free(hpvm_kernel_buffers_release(&run, false));
    hpvm_status_t restored = hpvm_kernel_buffers_restore_host(&run);
    hpvm_kernel_buffers_free(&run);
    if (restored) {
      hpvm_status_free(status);
      return hpvm_status_annotate(restored,
                                  "node '%s': restoring the host copies after kernel '%s' could "
                                  "not start on %s",
                                  hpvm_kernel_node_name(site), site->kernel, device->name);
    }
    if (target->library) {
      hpvm_kernel_library_refuse(state, status);
      *out_retry = true;
      return NULL;
    }
    hpvm_kernel_reason_add(reason, "%s: %s", hpvm_status_code_name(hpvm_status_code(status)),
                           hpvm_status_message(status));
    hpvm_status_free(status);
    return fall_back_warned(state, device, reason);
  }
  const char *library = target->library ? hpvm_cuda_library_name(site->library) : NULL;
  if (status && cache->failover) {
    char what[160];
    snprintf(what, sizeof(what), "%s '%s'", library ? "the library call of" : "kernel",
             library ? library : site->kernel);
    return hpvm_kernel_failover(state, &run, status, what, reason);
  }
  if (status) {
    hpvm_status_free(hpvm_kernel_buffers_release(&run, false));
    hpvm_kernel_buffers_free(&run);
    /* A device that reports itself unavailable is not chosen again by this runtime. */
    if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE)
      atomic_store(&device->failed, true);
    return hpvm_status_annotate(
        status, "node '%s': %s '%s' failed on %s", hpvm_kernel_node_name(site),
        library ? "the library call of" : "kernel", library ? library : site->kernel, device->name);
  }
  status = hpvm_kernel_buffers_release(&run, true);
  hpvm_kernel_buffers_free(&run);
  if (status)
    return hpvm_status_annotate(status, "node '%s': after kernel '%s' ran on %s",
                                hpvm_kernel_node_name(site), site->kernel, device->name);
  /* The scalar outputs (constants) the kernel's first thread would have stored. */
  if (library && site->library->scalars_param >= 0)
    memcpy(params[site->library->scalars_param].host, site->library->scalars,
           (size_t)site->library->scalars_size);
  *out_ran = 1;
  if (hpvm_trace_enabled() && !(hooks && hooks->untracked_only)) {
    char name[160];
    hpvm_kernel_trace_name(device, name, sizeof(name));
    if (library)
      hpvm_trace_line("%s on %s (%s)", hpvm_kernel_node_name(site), name, library);
    else
      hpvm_trace_line("%s on %s", hpvm_kernel_node_name(site), name);
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
  HPVM_RETURN_IF_ERROR(hpvm_kernel_check_params(params, param_count));
  bool pick, empty;
  HPVM_RETURN_IF_ERROR(hpvm_kernel_check_dims(grid, block, &pick, &empty));
  if (empty) {
    *out_ran = 1; /* no instance to run anywhere */
    return NULL;
  }
  hpvm_kernel_site_state_t *state = NULL;
  HPVM_RETURN_IF_ERROR(hpvm_kernel_site_state(cache, site, &state));
  /* At most twice: a library call that fails before it starts is not chosen again. */
  for (;;) {
    hpvm_kernel_reason_t reason;
    reason.length = 0;
    reason.text[0] = '\0';
    hpvm_kernel_target_t target;
    hpvm_kernel_choose_device(cache, state, params, param_count, &target, &reason);
    if (!target.device)
      return fall_back(site, &reason);
    bool retry = false;
    hpvm_status_t status = hpvm_kernel_run_on_target(cache, state, &target, grid, block, pick,
                                                     params, param_count, NULL, &reason, out_ran,
                                                     &retry);
    if (!retry)
      return status;
  }
}
