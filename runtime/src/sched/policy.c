/* policy.c - the three policies of the HPVM dissertation behind one vtable. */
#include "sched/policy.h"

#include <pthread.h>
#include <string.h>

uint32_t hpvm_sched_choice_find(const hpvm_sched_choice_t *choice, hpvm_rt_device_kind_t kind) {
  for (uint32_t i = 0; i < choice->version_count; ++i)
    if (choice->versions[i] == kind)
      return i;
  return choice->version_count;
}

/*===--- static per node ------------------------------------------------===*/

typedef struct node_assignment_t {
  char *name;
  hpvm_rt_device_kind_t device;
} node_assignment_t;

typedef struct static_node_policy_t {
  hpvm_sched_policy_t base;
  pthread_rwlock_t lock; /* assignments are rare, lookups frequent */
  node_assignment_t *assignments;
  uint32_t count;
  uint32_t capacity;
} static_node_policy_t;

static void static_node_destroy(hpvm_sched_policy_t *base) {
  static_node_policy_t *policy = (static_node_policy_t *)base;
  for (uint32_t i = 0; i < policy->count; ++i)
    hpvm_allocator_free(base->allocator, policy->assignments[i].name);
  hpvm_allocator_free(base->allocator, policy->assignments);
  pthread_rwlock_destroy(&policy->lock);
  hpvm_allocator_free(base->allocator, policy);
}

static uint32_t static_node_select(hpvm_sched_policy_t *base, const hpvm_sched_choice_t *choice) {
  static_node_policy_t *policy = (static_node_policy_t *)base;
  uint32_t selected = 0;
  if (!choice->node_name)
    return 0;
  pthread_rwlock_rdlock(&policy->lock);
  for (uint32_t i = 0; i < policy->count; ++i) {
    if (strcmp(policy->assignments[i].name, choice->node_name) == 0) {
      uint32_t found = hpvm_sched_choice_find(choice, policy->assignments[i].device);
      if (found < choice->version_count)
        selected = found;
      break;
    }
  }
  pthread_rwlock_unlock(&policy->lock);
  return selected;
}

static hpvm_status_t static_node_assign(hpvm_sched_policy_t *base, const char *node_name,
                                        hpvm_rt_device_kind_t device) {
  static_node_policy_t *policy = (static_node_policy_t *)base;
  if (!node_name)
    return HPVM_STATUS(INVALID_ARGUMENT, "node name is NULL");
  hpvm_status_t status = NULL;
  pthread_rwlock_wrlock(&policy->lock);
  for (uint32_t i = 0; i < policy->count; ++i) {
    if (strcmp(policy->assignments[i].name, node_name) == 0) {
      policy->assignments[i].device = device;
      pthread_rwlock_unlock(&policy->lock);
      return NULL;
    }
  }
  if (policy->count == policy->capacity) {
    uint32_t grown = policy->capacity ? policy->capacity * 2 : 8;
    status = hpvm_allocator_grow_array(base->allocator, (void **)&policy->assignments,
                                       policy->capacity, grown, sizeof(node_assignment_t));
    if (!status)
      policy->capacity = grown;
  }
  char *copy = NULL;
  if (!status)
    status = hpvm_allocator_strdup(base->allocator, node_name, &copy);
  if (!status) {
    policy->assignments[policy->count].name = copy;
    policy->assignments[policy->count].device = device;
    policy->count++;
  }
  pthread_rwlock_unlock(&policy->lock);
  return status;
}

static const hpvm_sched_policy_vtable_t static_node_vtable = {
    static_node_destroy, static_node_select, static_node_assign};

/*===--- static per data item -------------------------------------------===*/

static void simple_destroy(hpvm_sched_policy_t *policy) {
  hpvm_allocator_free(policy->allocator, policy);
}

static hpvm_status_t no_assign(hpvm_sched_policy_t *policy, const char *node_name,
                               hpvm_rt_device_kind_t device) {
  (void)policy;
  (void)device;
  return HPVM_STATUS(UNIMPLEMENTED,
                     "the active policy has no per-node assignments (node '%s'); use static-node",
                     node_name ? node_name : "");
}

/* Item k of a stream goes to version k mod #versions: the round-robin data-item assignment
 * that lets a CPU and a GPU version share one stream.  Non-streaming runs use version 0. */
static uint32_t static_item_select(hpvm_sched_policy_t *policy, const hpvm_sched_choice_t *choice) {
  (void)policy;
  if (choice->data_item < 0)
    return 0;
  return (uint32_t)((uint64_t)choice->data_item % choice->version_count);
}

static const hpvm_sched_policy_vtable_t static_item_vtable = {simple_destroy, static_item_select,
                                                              no_assign};

/*===--- dynamic --------------------------------------------------------===*/

/* The first (compiler-preferred) version whose device is usable now; otherwise the CPU
 * version; otherwise version 0 (which will report why it cannot run). */
static uint32_t dynamic_select(hpvm_sched_policy_t *policy, const hpvm_sched_choice_t *choice) {
  (void)policy;
  for (uint32_t i = 0; i < choice->version_count; ++i) {
    hpvm_rt_device_kind_t kind = choice->versions[i];
    if (kind == HPVM_RT_DEVICE_CPU)
      return i;
    if (choice->device_usable && choice->device_usable(choice->device_usable_self, kind))
      return i;
  }
  return 0;
}

static const hpvm_sched_policy_vtable_t dynamic_vtable = {simple_destroy, dynamic_select,
                                                          no_assign};

hpvm_status_t hpvm_sched_policy_create(hpvm_allocator_t allocator, hpvm_rt_policy_kind_t kind,
                                       hpvm_sched_policy_t **out_policy) {
  *out_policy = NULL;
  /* `kind` may be any integer from C callers: checked before the switch, which then
   * covers every value of the enum. */
  if ((unsigned)kind > (unsigned)HPVM_RT_POLICY_DYNAMIC)
    return HPVM_STATUS(INVALID_ARGUMENT, "unknown policy kind %d", (int)kind);
  hpvm_sched_policy_t *policy = NULL;
  switch (kind) {
  case HPVM_RT_POLICY_STATIC_NODE: {
    static_node_policy_t *node_policy;
    HPVM_RETURN_IF_ERROR(
        hpvm_allocator_calloc(allocator, sizeof(*node_policy), (void **)&node_policy));
    pthread_rwlock_init(&node_policy->lock, NULL);
    policy = &node_policy->base;
    policy->vtable = &static_node_vtable;
    break;
  }
  case HPVM_RT_POLICY_STATIC_ITEM:
  case HPVM_RT_POLICY_DYNAMIC:
    HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*policy), (void **)&policy));
    policy->vtable = kind == HPVM_RT_POLICY_DYNAMIC ? &dynamic_vtable : &static_item_vtable;
    break;
  }
  policy->kind = kind;
  policy->fall_back_on_failure = kind == HPVM_RT_POLICY_DYNAMIC;
  policy->allocator = allocator;
  *out_policy = policy;
  return NULL;
}

hpvm_status_t hpvm_sched_policy_parse(const char *text, hpvm_rt_policy_kind_t *out_kind) {
  if (text && strcmp(text, "static-node") == 0)
    *out_kind = HPVM_RT_POLICY_STATIC_NODE;
  else if (text && strcmp(text, "static-item") == 0)
    *out_kind = HPVM_RT_POLICY_STATIC_ITEM;
  else if (text && strcmp(text, "dynamic") == 0)
    *out_kind = HPVM_RT_POLICY_DYNAMIC;
  else
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "unknown policy '%s': expected static-node, static-item or dynamic",
                       text ? text : "(null)");
  return NULL;
}

void hpvm_sched_policy_destroy(hpvm_sched_policy_t *policy) {
  if (policy)
    policy->vtable->destroy(policy);
}
