/* buffers.h - how a kernel call's parameters reach the device: its buffers (tracked objects
 * through the tracker, untracked memory through temporaries), work-group memory, arguments. */
#ifndef HPVM_KERNEL_BUFFERS_H
#define HPVM_KERNEL_BUFFERS_H

#include "kernel/cache.h"
#include "kernel/reason.h"

enum { HPVM_KERNEL_STACK_PARAMS = 16 };

/* How one parameter reaches the kernel. */
typedef struct param_slot_t {
  uint64_t value;  /* the 8-byte argument of a BUFFER parameter (device pointer or cl_mem) */
  uint64_t parent; /* the device buffer the range lies in (0 until resolved) */
  size_t offset;   /* where the range starts in `parent` */
  size_t bytes;    /* the range the kernel may touch */
  int32_t
      group; /* untracked: its temporary (index into hpvm_kernel_buffers_t.groups); -1 otherwise */
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
  /* Where the temporary is filled from and copied back to: `begin` unless a split grid points
   * them at its snapshot and its scratch (split.c). */
  const char *in;
  char *out;
} temp_group_t;

/* One call's working state. */
typedef struct hpvm_kernel_buffers_t {
  hpvm_kernel_cache_t *cache;
  hpvm_device_t *device;
  const hpvm_rt_kernel_param_t *params;
  uint32_t count;
  /* Failover: a tracked object the kernel may write gets a valid host copy before the device's
   * is requested, so that a kernel failing half-way loses nothing. */
  bool keep_host;
  /* Every buffer through a temporary, tracked or not (a split grid's device part). */
  bool untracked_only;
  param_slot_t *slots;
  temp_group_t *groups;
  uint32_t group_count;
  uint32_t *order;
  hpvm_rt_kernel_arg_t *args;
  /* Small calls (the usual case) need no heap. */
  param_slot_t stack_slots[HPVM_KERNEL_STACK_PARAMS];
  temp_group_t stack_groups[HPVM_KERNEL_STACK_PARAMS];
  uint32_t stack_order[HPVM_KERNEL_STACK_PARAMS];
  hpvm_rt_kernel_arg_t stack_args[HPVM_KERNEL_STACK_PARAMS];
} hpvm_kernel_buffers_t;

hpvm_status_t hpvm_kernel_buffers_init(hpvm_kernel_buffers_t *run, hpvm_kernel_cache_t *cache,
                                       hpvm_device_t *device, const hpvm_rt_kernel_param_t *params,
                                       uint32_t count);
void hpvm_kernel_buffers_free(hpvm_kernel_buffers_t *run);
/* Decides, without side effects, how every BUFFER parameter reaches the kernel: its range,
 * tracked or not, the temporaries of untracked ranges.  Returns an error for a malformed
 * call; sets *out_ok = false (with the reason) when the device cannot take the parameters. */
hpvm_status_t hpvm_kernel_buffers_plan(hpvm_kernel_buffers_t *run, hpvm_kernel_reason_t *reason,
                                       bool *out_ok);
/* Makes every buffer parameter's device memory ready (see buffers.c).  Stops at the first
 * failure; hpvm_kernel_buffers_release releases what was done. */
hpvm_status_t hpvm_kernel_buffers_prepare(hpvm_kernel_buffers_t *run);
/* Releases sub-buffers and in-use holds, copies written temporaries back when `copy_back`,
 * frees the temporaries.  Returns the first error (everything is released regardless). */
hpvm_status_t hpvm_kernel_buffers_release(hpvm_kernel_buffers_t *run, bool copy_back);
/* After a fallback: the tracked objects requested for writing get a valid host copy again. */
hpvm_status_t hpvm_kernel_buffers_restore_host(hpvm_kernel_buffers_t *run);
/* Lays out the WORKGROUP parameters (see buffers.c); *out_ok = false (with the reason) when
 * the memory is more than the device gives one work-group. */
void hpvm_kernel_buffers_plan_workgroup(hpvm_kernel_buffers_t *run, hpvm_rt_launch_dims_t *dims,
                                        hpvm_kernel_reason_t *reason, bool *out_ok);
/* The kernel's arguments: values as they are, buffers as their device addresses (or handles),
 * OpenCL work-group memory as __local arguments. */
void hpvm_kernel_buffers_fill_args(hpvm_kernel_buffers_t *run);

#endif /* HPVM_KERNEL_BUFFERS_H */
