/* policy.h - scheduling policies: which device version runs node N for data item k. */
#ifndef HPVM_SCHED_POLICY_H
#define HPVM_SCHED_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/allocator.h"

/* What a policy may look at when choosing.  `device_usable(kind)` says whether the device is
 * present, healthy and not busy right now (only the dynamic policy asks). */
typedef struct hpvm_sched_choice_t {
  const char *node_name;                  /* may be NULL */
  const hpvm_rt_device_kind_t *versions;  /* device of each version */
  uint32_t version_count;                 /* >= 1 */
  int64_t data_item;                      /* -1 for non-streaming runs */
  bool (*device_usable)(void *self, hpvm_rt_device_kind_t kind);
  void *device_usable_self;
} hpvm_sched_choice_t;

typedef struct hpvm_sched_policy_t hpvm_sched_policy_t;

/* The interface every policy implements (HPVM dissertation: getVersion(node, dataItem)).
 * New policies (cost models, ...) provide another vtable. */
typedef struct hpvm_sched_policy_vtable_t {
  void (*destroy)(hpvm_sched_policy_t *policy);
  /* Returns the index of the version to run, < choice->version_count.  Must be thread-safe:
   * called concurrently for different nodes and items. */
  uint32_t (*select)(hpvm_sched_policy_t *policy, const hpvm_sched_choice_t *choice);
  /* Records a static assignment (name -> device); UNIMPLEMENTED if the policy has none. */
  hpvm_status_t (*assign)(hpvm_sched_policy_t *policy, const char *node_name,
                          hpvm_rt_device_kind_t device);
} hpvm_sched_policy_vtable_t;

struct hpvm_sched_policy_t {
  const hpvm_sched_policy_vtable_t *vtable;
  hpvm_rt_policy_kind_t kind;
  /* When the chosen non-CPU version fails, rerun the node's CPU version (dynamic policy). */
  bool fall_back_on_failure;
  hpvm_allocator_t allocator;
};

/* Creates one of the three built-in policies. */
hpvm_status_t hpvm_sched_policy_create(hpvm_allocator_t allocator, hpvm_rt_policy_kind_t kind,
                                       hpvm_sched_policy_t **out_policy);
/* Parses "static-node", "static-item" or "dynamic"; INVALID_ARGUMENT otherwise. */
hpvm_status_t hpvm_sched_policy_parse(const char *text, hpvm_rt_policy_kind_t *out_kind);
void hpvm_sched_policy_destroy(hpvm_sched_policy_t *policy);

/* The index of the first version for `kind`, or version_count if there is none. */
uint32_t hpvm_sched_choice_find(const hpvm_sched_choice_t *choice, hpvm_rt_device_kind_t kind);

#endif /* HPVM_SCHED_POLICY_H */
