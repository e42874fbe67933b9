/* run_target.h - the parts of hpvm_kernel_run (kernel_run.c) that a split grid (split.c) runs
 * one by one: the call's checks, the device choice, one run on the chosen device. */
#ifndef HPVM_KERNEL_RUN_TARGET_H
#define HPVM_KERNEL_RUN_TARGET_H

#include "kernel/buffers.h"

/* What a call runs: the kernel, or the site's library call, on `device`. */
typedef struct hpvm_kernel_target_t {
  hpvm_device_t *device;
  hpvm_device_kernel_t *kernel;
  bool library;
} hpvm_kernel_target_t;

/* How a run differs from hpvm_rt_kernel_run's (NULL: not at all). */
typedef struct hpvm_kernel_run_hooks_t {
  /* Every buffer through a temporary, tracked or not (the tracker is not asked), and no trace
   * line of its own. */
  bool untracked_only;
  /* Called once the buffers are planned, before anything is allocated: may point the
   * temporaries' copies elsewhere (temp_group_t.in / .out).  An error ends the run. */
  hpvm_status_t (*planned)(void *self, hpvm_kernel_buffers_t *run);
  void *self;
  /* Where the time from the launch (or library call) to its completion goes, when not NULL. */
  uint64_t *launch_ns;
} hpvm_kernel_run_hooks_t;

/* The caller's errors in the parameters; in grid and block (*out_pick when the runtime picks
 * the work-group size, *out_empty when the grid has no instance). */
hpvm_status_t hpvm_kernel_check_params(const hpvm_rt_kernel_param_t *params, uint32_t count);
hpvm_status_t hpvm_kernel_check_dims(const int64_t grid[3], const int64_t block[3],
                                     bool *out_pick, bool *out_empty);

/* The first device allowed by HPVM_DEVICE that has an image, is open and healthy, and has the
 * kernel; target->device is NULL (and `reason` says why) when there is none. */
void hpvm_kernel_choose_device(hpvm_kernel_cache_t *cache, hpvm_kernel_site_state_t *state,
                               const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                               hpvm_kernel_target_t *target, hpvm_kernel_reason_t *reason);

/* Runs the call on `target` over `grid` (plans, prepares the buffers, launches the kernel or
 * calls the library, copies back); *out_ran = 1 when it ran.  Otherwise the CPU version must
 * run (a NULL status: the reason traced, and warned where it is worth it; a failure after the
 * start is a failover, failover.c) or the call failed.  *out_retry when the library call failed
 * before it started: that is recorded (and warned), so that choosing again picks the kernel. */
hpvm_status_t hpvm_kernel_run_on_target(hpvm_kernel_cache_t *cache,
                                        hpvm_kernel_site_state_t *state,
                                        const hpvm_kernel_target_t *target, const int64_t grid[3],
                                        const int64_t block[3], bool pick,
                                        const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                        const hpvm_kernel_run_hooks_t *hooks,
                                        hpvm_kernel_reason_t *reason, int32_t *out_ran,
                                        bool *out_retry);

/* "cuda:<ordinal>" for CUDA devices, the device's name ("opencl:<device>") otherwise. */
void hpvm_kernel_trace_name(hpvm_device_t *device, char *out, size_t size);

#endif /* HPVM_KERNEL_RUN_TARGET_H */
