/* buffers.c - a kernel call's parameters on the device: the plan (without side effects), the
 * temporaries and tracker requests, sub-buffers, in-use holds, copies back, work-group memory
 * and the kernel's arguments. */
#include "kernel/buffers.h"

#include <string.h>

#include "device/opencl/opencl_device.h"
#include "kernel/cache.h"

hpvm_status_t hpvm_kernel_buffers_init(hpvm_kernel_buffers_t *run, hpvm_kernel_cache_t *cache,
                                       hpvm_device_t *device, const hpvm_rt_kernel_param_t *params,
                                       uint32_t count) {
  run->cache = cache;
  run->device = device;
  run->params = params;
  run->count = count;
  run->keep_host = cache->failover;
  run->untracked_only = false;
  run->group_count = 0;
  if (count <= HPVM_KERNEL_STACK_PARAMS) {
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
    status =
        hpvm_allocator_calloc_array(allocator, count, sizeof(*run->groups), (void **)&run->groups);
  if (!status)
    status =
        hpvm_allocator_calloc_array(allocator, count, sizeof(*run->order), (void **)&run->order);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, count, sizeof(*run->args), (void **)&run->args);
  return status;
}

void hpvm_kernel_buffers_free(hpvm_kernel_buffers_t *run) {
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
hpvm_status_t hpvm_kernel_buffers_plan(hpvm_kernel_buffers_t *run, hpvm_kernel_reason_t *reason,
                                       bool *out_ok) {
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
    uint64_t size = param->size;
    bool tracked = hpvm_mem_tracker_find(run->cache->tracker, host, &base, &object_size);
    size_t offset = tracked ? (size_t)(host - (char *)base) : 0;
    if (tracked) {
      size_t rest = object_size - offset;
      if (param->size > rest)
        return HPVM_STATUS(OUT_OF_RANGE,
                           "kernel_run: parameter %u: %llu bytes at %p leave the tracked object "
                           "[%p, +%zu)",
                           i, (unsigned long long)param->size, (void *)host, base, object_size);
      size = param->size ? param->size : rest;
    }
    if (tracked && !run->untracked_only) {
      slot->tracked = true;
      slot->bytes = (size_t)size;
      if (offset % align != 0) {
        hpvm_kernel_reason_add(
            reason,
            "parameter %u points %zu bytes into its tracked object, not a multiple of "
            "the base address alignment of %s (%zu bytes)",
            i, offset, run->device->name, align);
        *out_ok = false;
        return NULL;
      }
      continue;
    }
    if (size == 0) {
      hpvm_kernel_reason_add(
          reason,
          "parameter %u (%p) is not tracked and has size 0: the runtime cannot tell how "
          "many bytes to copy",
          i, (void *)host);
      *out_ok = false;
      return NULL;
    }
    if (size > SIZE_MAX || (uintptr_t)host > UINTPTR_MAX - size)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run: parameter %u: %p + %llu bytes wraps around memory", i,
                         (void *)host, (unsigned long long)size);
    slot->bytes = (size_t)size;
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
      group->in = NULL;
      group->out = NULL;
    }
    slot->group = (int32_t)(group - run->groups);
  }
  for (uint32_t i = 0; i < untracked; ++i) {
    param_slot_t *slot = &run->slots[run->order[i]];
    slot->offset =
        (size_t)((char *)run->params[run->order[i]].host - run->groups[slot->group].begin);
    if (slot->offset % align != 0) {
      hpvm_kernel_reason_add(
          reason,
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
 * the first failure; hpvm_kernel_buffers_release releases what was done. */
hpvm_status_t hpvm_kernel_buffers_prepare(hpvm_kernel_buffers_t *run) {
  hpvm_device_t *device = run->device;
  for (uint32_t g = 0; g < run->group_count; ++g) {
    temp_group_t *group = &run->groups[g];
    size_t size = (size_t)(group->end - group->begin);
    HPVM_RETURN_IF_ERROR(hpvm_status_annotate(
        hpvm_device_buffer_alloc(device, size, HPVM_BUFFER_OWNER_KERNEL_RUN, &group->handle),
        "allocating a %zu-byte temporary on %s", size, device->name));
    HPVM_RETURN_IF_ERROR(hpvm_status_annotate(
        hpvm_device_copy_to_device(device, group->handle, 0, group->in ? group->in : group->begin,
                                   size),
        "copying %zu bytes to %s", size, device->name));
  }
  bool opencl = hpvm_opencl_device_is(device);
  for (uint32_t i = 0; i < run->count; ++i) {
    param_slot_t *slot = &run->slots[i];
    const hpvm_rt_kernel_param_t *param = &run->params[i];
    if (param->kind != HPVM_RT_PARAM_BUFFER || !param->host)
      continue;
    if (slot->tracked) {
      if (run->keep_host && slot->writes && !slot->writes_all)
        HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(run->cache->tracker, param->host,
                                                      slot->bytes, NULL, HPVM_RT_ACCESS_IN, NULL,
                                                      NULL));
      HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(run->cache->tracker, param->host, slot->bytes,
                                                    device,
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
hpvm_status_t hpvm_kernel_buffers_release(hpvm_kernel_buffers_t *run, bool copy_back) {
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
          hpvm_device_copy_to_host(device, group->out ? group->out : group->begin, group->handle,
                                   0, size),
          "copying %zu bytes back from %s", size, device->name);
    hpvm_status_t status =
        hpvm_device_buffer_free(device, group->handle, HPVM_BUFFER_OWNER_KERNEL_RUN);
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
hpvm_status_t hpvm_kernel_buffers_restore_host(hpvm_kernel_buffers_t *run) {
  for (uint32_t i = 0; i < run->count; ++i) {
    param_slot_t *slot = &run->slots[i];
    if (slot->requested && slot->writes)
      HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(run->cache->tracker, run->params[i].host,
                                                    slot->bytes, NULL, HPVM_RT_ACCESS_INOUT, NULL,
                                                    NULL));
  }
  return NULL;
}

enum { WORKGROUP_ALIGN = 16, CUDA_SHARED_BYTES = 48 * 1024 };

/* Lays out the WORKGROUP parameters: OpenCL takes each as a __local argument of its size;
 * CUDA gets the byte offsets of the buffers in the launch's dynamic shared memory (each
 * aligned to 16 bytes), whose total goes into dims.  Sets *out_ok = false (with the reason)
 * when the memory is more than the device gives one work-group. */
void hpvm_kernel_buffers_plan_workgroup(hpvm_kernel_buffers_t *run, hpvm_rt_launch_dims_t *dims,
                                        hpvm_kernel_reason_t *reason, bool *out_ok) {
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
      hpvm_kernel_reason_add(
          reason,
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

/* The kernel's arguments: values as they are, buffers as their device addresses (or handles),
 * OpenCL work-group memory as __local arguments. */
void hpvm_kernel_buffers_fill_args(hpvm_kernel_buffers_t *run) {
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
