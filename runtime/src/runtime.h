/* runtime.h - a runtime instance (pool, policy, devices, tracker) and the global one behind hpvm_rt_*. */
#ifndef HPVM_RUNTIME_H
#define HPVM_RUNTIME_H

#include "base/allocator.h"
#include "device/device.h"
#include "kernel/kernel_run.h"
#include "kernel/split.h"
#include "mem/tracker.h"
#include "sched/policy.h"
#include "sched/pool.h"
#include "sched/runner.h"

typedef struct hpvm_runtime_t hpvm_runtime_t;

/* Zero-initialised options mean "from the environment, else defaults". */
typedef struct hpvm_runtime_options_t {
  hpvm_allocator_t allocator;  /* .alloc == NULL: malloc/free */
  uint32_t thread_count;       /* total threads (workers + caller); 0: HPVM_NUM_THREADS / CPUs */
  bool has_policy;             /* use `policy` instead of HPVM_POLICY */
  hpvm_rt_policy_kind_t policy;
  uint32_t stream_capacity;    /* 0: HPVM_STREAM_CAPACITY / 64 */
  /* Devices handed to the runtime (it owns them from the call on, even if creation fails);
   * kinds left NULL are opened from their drivers on first use, unless `only_given_devices`
   * is set, in which case they are UNAVAILABLE (tests use this to control every device). */
  hpvm_device_t *devices[HPVM_RT_DEVICE_KIND_COUNT];
  bool only_given_devices;
  bool has_kernel_device; /* use `kernel_device` instead of HPVM_DEVICE */
  hpvm_kernel_device_choice_t kernel_device;
} hpvm_runtime_options_t;

hpvm_status_t hpvm_runtime_create(const hpvm_runtime_options_t *options,
                                  hpvm_runtime_t **out_runtime);
/* Joins the pool, frees tracked device copies, closes the devices.  Returns the first error
 * met while releasing (everything is released regardless). */
hpvm_status_t hpvm_runtime_destroy(hpvm_runtime_t *runtime);

/* The global runtime, created on first use (what every hpvm_rt_* call uses). */
hpvm_status_t hpvm_runtime_global(hpvm_runtime_t **out_runtime);
/* Destroys the global runtime (hpvm_rt_shutdown); the next hpvm_rt_* call makes a new one. */
void hpvm_runtime_global_shutdown(void);
/* The global runtime's device of `kind` if it is already open, else NULL; opens nothing. */
hpvm_device_t *hpvm_rt_device_peek(hpvm_rt_device_kind_t kind);

/* Instance versions of the ABI (the hpvm_rt_* functions call these on the global runtime). */
hpvm_status_t hpvm_runtime_device_get(hpvm_runtime_t *runtime, hpvm_rt_device_kind_t kind,
                                      hpvm_device_t **out_device);
uint32_t hpvm_runtime_thread_count(const hpvm_runtime_t *runtime);
hpvm_sched_pool_t *hpvm_runtime_pool(hpvm_runtime_t *runtime);
hpvm_mem_tracker_t *hpvm_runtime_tracker(hpvm_runtime_t *runtime);
hpvm_sched_runner_t hpvm_runtime_runner(hpvm_runtime_t *runtime);
hpvm_status_t hpvm_runtime_parallel_for(hpvm_runtime_t *runtime, uint32_t rank,
                                        const int64_t *extents, hpvm_rt_parallel_for_fn_t body,
                                        void *context);
hpvm_status_t hpvm_runtime_graph_create(hpvm_runtime_t *runtime, uint32_t node_hint,
                                        hpvm_rt_graph_t **out_graph);
hpvm_status_t hpvm_runtime_launch(hpvm_runtime_t *runtime, hpvm_rt_root_fn_t root, void *args,
                                  hpvm_rt_launch_t **out_launch);
hpvm_status_t hpvm_runtime_pipeline_create(hpvm_runtime_t *runtime, size_t input_size,
                                           size_t output_size, uint32_t capacity,
                                           hpvm_rt_pipeline_t **out_pipeline);
hpvm_status_t hpvm_runtime_stream_launch(hpvm_runtime_t *runtime,
                                         const hpvm_rt_pipeline_t *pipeline,
                                         hpvm_rt_stream_t **out_stream);
hpvm_status_t hpvm_runtime_kernel_run(hpvm_runtime_t *runtime, hpvm_rt_kernel_site_t *site,
                                      const int64_t grid[3], const int64_t block[3],
                                      const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                      int32_t *out_ran);
hpvm_status_t hpvm_runtime_kernel_run_split(hpvm_runtime_t *runtime, hpvm_rt_kernel_site_t *site,
                                            const int64_t grid[3], const int64_t block[3],
                                            const hpvm_rt_kernel_param_t *params,
                                            uint32_t param_count, bool hinted,
                                            hpvm_kernel_cpu_part_fn_t cpu_part, void *cpu_self,
                                            int32_t *out_ran);
hpvm_status_t hpvm_runtime_policy_set(hpvm_runtime_t *runtime, hpvm_rt_policy_kind_t kind);
hpvm_status_t hpvm_runtime_policy_assign(hpvm_runtime_t *runtime, const char *node_name,
                                         hpvm_rt_device_kind_t device);

#endif /* HPVM_RUNTIME_H */
