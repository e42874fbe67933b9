/* policy_test.c - the three scheduling policies through their vtable. */
#include "sched/policy.h"
#include "test_util.h"

static bool usable[HPVM_RT_DEVICE_KIND_COUNT];

static bool device_usable(void *self, hpvm_rt_device_kind_t kind) {
  (void)self;
  return usable[kind];
}

static uint32_t select_version(hpvm_sched_policy_t *policy, const char *name,
                               const hpvm_rt_device_kind_t *versions, uint32_t count,
                               int64_t item) {
  hpvm_sched_choice_t choice = {name, versions, count, item, device_usable, NULL};
  return policy->vtable->select(policy, &choice);
}

int main(void) {
  test_allocator_t state = {0};
  hpvm_allocator_t allocator = test_allocator_make(&state);
  const hpvm_rt_device_kind_t gpu_cpu[2] = {HPVM_RT_DEVICE_CUDA, HPVM_RT_DEVICE_CPU};
  const hpvm_rt_device_kind_t three[3] = {HPVM_RT_DEVICE_OPENCL, HPVM_RT_DEVICE_CUDA,
                                          HPVM_RT_DEVICE_CPU};
  hpvm_sched_policy_t *policy;

  /* Static per node: first version unless assigned; assignments by name, re-assignable. */
  CHECK_OK(hpvm_sched_policy_create(allocator, HPVM_RT_POLICY_STATIC_NODE, &policy));
  CHECK(!policy->fall_back_on_failure);
  CHECK_EQ_INT(select_version(policy, "n", gpu_cpu, 2, -1), 0);
  CHECK_OK(policy->vtable->assign(policy, "n", HPVM_RT_DEVICE_CPU));
  CHECK_EQ_INT(select_version(policy, "n", gpu_cpu, 2, -1), 1);
  CHECK_EQ_INT(select_version(policy, "m", gpu_cpu, 2, -1), 0);
  CHECK_EQ_INT(select_version(policy, NULL, gpu_cpu, 2, -1), 0);
  CHECK_OK(policy->vtable->assign(policy, "n", HPVM_RT_DEVICE_OPENCL)); /* no such version */
  CHECK_EQ_INT(select_version(policy, "n", gpu_cpu, 2, -1), 0);
  CHECK_EQ_INT(select_version(policy, "n", three, 3, 5), 0);
  for (int i = 0; i < 40; ++i) { /* grows the table */
    char name[16];
    snprintf(name, sizeof(name), "node%d", i);
    CHECK_OK(policy->vtable->assign(policy, name, HPVM_RT_DEVICE_CPU));
  }
  CHECK_EQ_INT(select_version(policy, "node39", three, 3, -1), 2);
  CHECK_CODE(policy->vtable->assign(policy, NULL, HPVM_RT_DEVICE_CPU), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_sched_policy_destroy(policy);

  /* Static per data item: item k -> version k mod #versions; non-streaming -> 0. */
  CHECK_OK(hpvm_sched_policy_create(allocator, HPVM_RT_POLICY_STATIC_ITEM, &policy));
  for (int64_t k = 0; k < 9; ++k)
    CHECK_EQ_INT(select_version(policy, "n", three, 3, k), k % 3);
  CHECK_EQ_INT(select_version(policy, "n", three, 3, -1), 0);
  hpvm_sched_policy_destroy(policy);

  /* Dynamic: the first usable accelerator in preference order, else the CPU. */
  CHECK_OK(hpvm_sched_policy_create(allocator, HPVM_RT_POLICY_DYNAMIC, &policy));
  CHECK(policy->fall_back_on_failure);
  CHECK_EQ_INT(select_version(policy, "n", three, 3, -1), 2);
  usable[HPVM_RT_DEVICE_CUDA] = true;
  CHECK_EQ_INT(select_version(policy, "n", three, 3, -1), 1);
  usable[HPVM_RT_DEVICE_OPENCL] = true;
  CHECK_EQ_INT(select_version(policy, "n", three, 3, 4), 0);
  const hpvm_rt_device_kind_t gpu_only[1] = {HPVM_RT_DEVICE_CUDA};
  usable[HPVM_RT_DEVICE_CUDA] = false;
  CHECK_EQ_INT(select_version(policy, "n", gpu_only, 1, -1), 0); /* will report UNAVAILABLE */
  hpvm_sched_policy_destroy(policy);

  hpvm_rt_policy_kind_t kind;
  CHECK_OK(hpvm_sched_policy_parse("static-item", &kind));
  CHECK_EQ_INT(kind, HPVM_RT_POLICY_STATIC_ITEM);
  CHECK_CODE(hpvm_sched_policy_parse("Dynamic", &kind), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_sched_policy_create(allocator, (hpvm_rt_policy_kind_t)5, &policy),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  printf("policy_test: OK\n");
  return 0;
}
