/* runner.h - how graphs and pipelines ask the runtime to run one of a node's device versions. */
#ifndef HPVM_SCHED_RUNNER_H
#define HPVM_SCHED_RUNNER_H

#include <stdatomic.h>
#include <stdint.h>

#include "hpvm/hpvm_rt.h"

/* Calls version `version` of the node on `device`. */
typedef hpvm_status_t (*hpvm_sched_invoke_fn_t)(void *self, uint32_t version,
                                                hpvm_rt_device_t *device);

/* Chooses a version with the scheduling policy, opens its device and invokes it (falling back
 * to the CPU version where the policy says so).  Implemented by the runtime; graphs and
 * pipelines only see this interface, which keeps sched/ and stream/ free of device code. */
typedef struct hpvm_sched_runner_t {
  hpvm_status_t (*run)(void *self, const char *name, const hpvm_rt_device_kind_t *versions,
                       uint32_t version_count, int64_t data_item, hpvm_sched_invoke_fn_t invoke,
                       void *invoke_self);
  /* Called once by each pipeline stage thread before its first item (may be NULL):
   * `running_stages` counts the stage bodies of its stream running right now, so that a grid
   * a stage body runs can tell whether the stages already keep every core busy. */
  void (*bind_stage_thread)(void *self, const _Atomic uint32_t *running_stages);
  void *self;
} hpvm_sched_runner_t;

#endif /* HPVM_SCHED_RUNNER_H */
