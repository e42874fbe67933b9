/* split.c - a leaf's grid split across a device and the CPU.
 *
 * The device runs instances [0, k) of the outermost dimension (the last one whose extent is
 * not 1), the CPU's threads [k, n), at the same time; k is a multiple of the work-group size
 * along that dimension, so that no work-group of the device reaches past it (the kernel guards
 * against the whole grid, not against k).  Both write in place: every tracked buffer is made
 * host-valid first (the other copies of those written become stale); the device works on
 * temporaries, those it may write filled from a snapshot taken before the CPU starts and
 * copied back into a scratch; afterwards every byte of the scratch that differs from the
 * snapshot is the device's and goes to the host (independent instances write disjoint bytes,
 * so the merge is exact: the output is bit for bit a one-device run's).  A device part that
 * fails (before it starts, or after: failover.c) is run by the CPU after its own part, from the
 * host memory the device never wrote.  The device's share follows the measured times of the
 * two sides (update_share), kept per site and updated after each split launch; the first
 * launch splits evenly. */
#include "kernel/split.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/platform.h"
#include "base/trace.h"
#include "kernel/kernel_run.h"
#include "kernel/run_target.h"

enum { HPVM_KERNEL_SPLIT_PROBE = 16 };

/* A writable temporary's snapshot (what the device starts from) and scratch (what it wrote). */
typedef struct split_copy_t {
  char *host;
  size_t size;
  char *snapshot;
  char *result;
} split_copy_t;

/* The device's part, run on its own thread. */
typedef struct device_part_t {
  hpvm_kernel_cache_t *cache;
  hpvm_kernel_site_state_t *state;
  hpvm_kernel_target_t target;
  int64_t grid[3];
  const int64_t *block;
  bool pick;
  const hpvm_rt_kernel_param_t *params;
  uint32_t param_count;
  split_copy_t *copies;
  uint32_t copy_count;
  /* `planned` is set (and signalled) once the snapshots are taken or the run ended before. */
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool planned;
  hpvm_status_t status;
  int32_t ran;
  uint64_t ns;        /* the whole part: buffers, copies, the kernel */
  uint64_t launch_ns; /* the kernel alone */
  hpvm_kernel_reason_t reason;
} device_part_t;

static void signal_planned(device_part_t *part) {
  pthread_mutex_lock(&part->mutex);
  part->planned = true;
  pthread_cond_signal(&part->cond);
  pthread_mutex_unlock(&part->mutex);
}

/* The hook of hpvm_kernel_run_on_target: snapshots of the writable temporaries. */
static hpvm_status_t take_snapshots(void *self, hpvm_kernel_buffers_t *run) {
  device_part_t *part = self;
  hpvm_allocator_t allocator = part->cache->allocator;
  hpvm_status_t status = hpvm_allocator_calloc_array(allocator, run->group_count ? run->group_count
                                                                                 : 1,
                                                     sizeof(split_copy_t), (void **)&part->copies);
  for (uint32_t g = 0; g < run->group_count && !status; ++g) {
    temp_group_t *group = &run->groups[g];
    if (!group->writes)
      continue;
    split_copy_t *copy = &part->copies[part->copy_count++];
    copy->host = group->begin;
    copy->size = (size_t)(group->end - group->begin);
    status = hpvm_allocator_malloc(allocator, copy->size, (void **)&copy->snapshot);
    if (!status)
      status = hpvm_allocator_malloc(allocator, copy->size, (void **)&copy->result);
    if (!status) {
      memcpy(copy->snapshot, copy->host, copy->size);
      group->in = copy->snapshot;
      group->out = copy->result;
    }
  }
  signal_planned(part);
  return status;
}

static void free_copies(device_part_t *part) {
  hpvm_allocator_t allocator = part->cache->allocator;
  for (uint32_t i = 0; i < part->copy_count; ++i) {
    hpvm_allocator_free(allocator, part->copies[i].snapshot);
    hpvm_allocator_free(allocator, part->copies[i].result);
  }
  hpvm_allocator_free(allocator, part->copies);
}

/* Sleeps (factor - 1) times `ns` when `side` is the slowed one. */
static void slow_down(const hpvm_kernel_cache_t *cache, bool device, uint64_t ns) {
  const hpvm_kernel_slowdown_t *slowdown = &cache->slowdown;
  if (slowdown->factor <= 1 || (slowdown->side != HPVM_RT_DEVICE_CPU) != device)
    return;
  uint64_t extra = ns * (slowdown->factor - 1);
  struct timespec wait = {(time_t)(extra / 1000000000u), (long)(extra % 1000000000u)};
  while (nanosleep(&wait, &wait) != 0) {
  }
}

static void *run_device_part(void *self) {
  device_part_t *part = self;
  uint64_t start = hpvm_platform_now_ns();
  hpvm_kernel_run_hooks_t hooks = {true, take_snapshots, part, &part->launch_ns};
  bool retry = false;
  part->status = hpvm_kernel_run_on_target(part->cache, part->state, &part->target, part->grid,
                                           part->block, part->pick, part->params,
                                           part->param_count, &hooks, &part->reason, &part->ran,
                                           &retry);
  /* A slowed device runs its kernel `factor` times as long (its copies are the same). */
  uint64_t launched = hpvm_platform_now_ns();
  slow_down(part->cache, true, part->launch_ns);
  part->launch_ns += hpvm_platform_now_ns() - launched;
  part->ns = hpvm_platform_now_ns() - start;
  signal_planned(part); /* also when the run ended before planning */
  return NULL;
}

/* The device's bytes: those of its scratch that differ from the snapshot it started from. */
static void merge(const split_copy_t *copy) {
  size_t i = 0;
  for (; i + 8 <= copy->size; i += 8) {
    uint64_t wrote, before;
    memcpy(&wrote, copy->result + i, 8);
    memcpy(&before, copy->snapshot + i, 8);
    if (wrote == before)
      continue;
    for (size_t j = i; j < i + 8; ++j)
      if (copy->result[j] != copy->snapshot[j])
        copy->host[j] = copy->result[j];
  }
  for (; i < copy->size; ++i)
    if (copy->result[i] != copy->snapshot[i])
      copy->host[i] = copy->result[i];
}

/* Every tracked buffer host-valid (those written: the only valid copy), as the CPU needs. */
static hpvm_status_t host_copies(hpvm_kernel_cache_t *cache, const hpvm_rt_kernel_param_t *params,
                                 uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const hpvm_rt_kernel_param_t *param = &params[i];
    void *base;
    size_t size;
    if (param->kind != HPVM_RT_PARAM_BUFFER || !param->host ||
        !hpvm_mem_tracker_find(cache->tracker, param->host, &base, &size))
      continue;
    HPVM_RETURN_IF_ERROR(hpvm_mem_tracker_request(
        cache->tracker, param->host, (size_t)param->size, NULL,
        param->access == HPVM_RT_ACCESS_IN ? HPVM_RT_ACCESS_IN : HPVM_RT_ACCESS_INOUT, NULL,
        NULL));
  }
  return NULL;
}

/* The device's instances along the split dimension: the share of n, a multiple of `unit`,
 * leaving the CPU at least one instance. */
static int64_t device_instances(double share, int64_t n, int64_t unit) {
  int64_t k = (int64_t)(share * (double)n / (double)unit + 0.5) * unit;
  int64_t most = (n - 1) / unit * unit;
  return k < unit ? unit : k > most ? most : k;
}

/* The next share from this launch's times. The device's part costs a fixed time (its buffers
 * and copies, whatever k is) plus a time per instance (its kernel's), the CPU's a time per
 * instance. The split pays where its predicted time, both parts ending together, is under
 * each side alone (the device's alone counted at its kernel's time: its data resident); then
 * the share moves halfway toward that balance (noise damped), else, from the second
 * measurement on (the first launch on a device may include compiling the kernel), to the
 * faster side at once (the next launches run it alone: run_one_side). */
static void update_share(hpvm_kernel_site_state_t *state, double share, int64_t k, int64_t n,
                         const device_part_t *part, uint64_t cpu_ns) {
  double kernel = (double)(part->launch_ns ? part->launch_ns : 1);
  double fixed = part->ns > part->launch_ns ? (double)(part->ns - part->launch_ns) : 0.0;
  double device_each = kernel / (double)k;
  double cpu_each = (double)(cpu_ns ? cpu_ns : 1) / (double)(n - k);
  double balanced = (cpu_each * (double)n - fixed) / (device_each + cpu_each) / (double)n;
  balanced = balanced < 0.0 ? 0.0 : balanced > 1.0 ? 1.0 : balanced;
  double split = cpu_each * (double)n * (1.0 - balanced);
  double cpu_alone = cpu_each * (double)n, device_alone = device_each * (double)n;
  double next = 0.5 * share + 0.5 * balanced;
  if (atomic_fetch_add(&state->split_measured, 1) >= 1) {
    if (cpu_alone <= split && cpu_alone <= device_alone)
      next = 0.0;
    else if (device_alone <= split)
      next = 1.0;
  }
  atomic_store(&state->split_share, next < 1e-9 ? 1e-9 : next);
}

static void trace_split(const device_part_t *part, int dim, int64_t k, int64_t n, bool device_ran,
                        double share) {
  if (!hpvm_trace_enabled())
    return;
  static const char axis[3] = {'x', 'y', 'z'};
  char name[160];
  hpvm_kernel_trace_name(part->target.device, name, sizeof(name));
  const char *node = hpvm_kernel_node_name(part->state->site);
  if (device_ran)
    hpvm_trace_line("%s on %s [0, %lld) and cpu [%lld, %lld) along %c (split %.2f)", node, name,
                    (long long)k, (long long)k, (long long)n, axis[dim], share);
  else
    hpvm_trace_line("%s on cpu [0, %lld) after %s did not run its part [0, %lld) along %c",
                    node, (long long)n, name, (long long)k, axis[dim]);
}

/* Runs the split: the device's part on its own thread, the CPU's on this one. */
static hpvm_status_t run_split(device_part_t *part, double share, int dim, int64_t n,
                               int64_t unit, hpvm_kernel_cpu_part_fn_t cpu_part,
                               void *cpu_self) {
  int64_t k = device_instances(share, n, unit);
  part->grid[dim] = k;
  HPVM_RETURN_IF_ERROR(host_copies(part->cache, part->params, part->param_count));
  pthread_mutex_init(&part->mutex, NULL);
  pthread_cond_init(&part->cond, NULL);
  pthread_t thread;
  bool threaded = pthread_create(&thread, NULL, run_device_part, part) == 0;
  if (!threaded)
    run_device_part(part); /* no thread to be had: one side after the other */
  pthread_mutex_lock(&part->mutex);
  while (!part->planned)
    pthread_cond_wait(&part->cond, &part->mutex);
  pthread_mutex_unlock(&part->mutex);
  uint64_t start = hpvm_platform_now_ns();
  hpvm_status_t status = cpu_part(cpu_self, dim, k, n);
  uint64_t cpu_ns = hpvm_platform_now_ns() - start;
  slow_down(part->cache, false, cpu_ns);
  cpu_ns = hpvm_platform_now_ns() - start;
  if (threaded)
    pthread_join(thread, NULL);
  pthread_mutex_destroy(&part->mutex);
  pthread_cond_destroy(&part->cond);
  bool device_ran = !part->status && part->ran;
  if (device_ran && !status) {
    for (uint32_t i = 0; i < part->copy_count; ++i)
      merge(&part->copies[i]);
    update_share(part->state, share, k, n, part, cpu_ns);
  } else if (!part->status && !status) {
    status = cpu_part(cpu_self, dim, 0, k); /* the device's part, on the CPU */
  }
  free_copies(part);
  if (!status)
    trace_split(part, dim, k, n, device_ran, share);
  if (part->status) {
    hpvm_status_free(status);
    return part->status;
  }
  return status;
}

/* The node on one side alone (the CPU when `cpu`), slowed as HPVM_SPLIT_SLOWDOWN says. */
static hpvm_status_t run_one_side(device_part_t *part, bool cpu, int dim, int64_t n,
                                  hpvm_kernel_cpu_part_fn_t cpu_part, void *cpu_self,
                                  int32_t *out_ran) {
  if (hpvm_trace_enabled())
    hpvm_trace_line("%s keeps to the %s: the split %.2f leaves the %s under half a work-group",
                    hpvm_kernel_node_name(part->state->site), cpu ? "cpu" : "device",
                    atomic_load(&part->state->split_share), cpu ? "device" : "cpu");
  uint64_t start = hpvm_platform_now_ns();
  hpvm_status_t status;
  if (cpu) {
    status = host_copies(part->cache, part->params, part->param_count);
    if (!status)
      status = cpu_part(cpu_self, dim, 0, n);
    *out_ran = !status;
  } else {
    status = hpvm_kernel_run(part->cache, part->state->site, part->grid, part->block,
                             part->params, part->param_count, out_ran);
  }
  slow_down(part->cache, !cpu, hpvm_platform_now_ns() - start);
  return status;
}

hpvm_status_t hpvm_kernel_run_split(hpvm_kernel_cache_t *cache, hpvm_rt_kernel_site_t *site,
                                    const int64_t grid[3], const int64_t block[3],
                                    const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                    bool hinted, hpvm_kernel_cpu_part_fn_t cpu_part,
                                    void *cpu_self, int32_t *out_ran) {
  bool wanted = cache->split == HPVM_KERNEL_SPLIT_ALL ||
                (hinted && cache->split == HPVM_KERNEL_SPLIT_HINTED);
  if (!wanted || !cpu_part || !site || !grid || !out_ran || (param_count && !params))
    return hpvm_kernel_run(cache, site, grid, block, params, param_count, out_ran);
  *out_ran = 0;
  HPVM_RETURN_IF_ERROR(hpvm_kernel_check_params(params, param_count));
  bool pick, empty;
  HPVM_RETURN_IF_ERROR(hpvm_kernel_check_dims(grid, block, &pick, &empty));
  int rank = grid[2] != 1 ? 3 : grid[1] != 1 ? 2 : 1;
  int dim = rank - 1;
  int64_t unit = pick ? cache->picks[rank - 1][dim] : block[dim];
  hpvm_kernel_site_state_t *state = NULL;
  if (!empty && grid[dim] >= 2 * unit)
    HPVM_RETURN_IF_ERROR(hpvm_kernel_site_state(cache, site, &state));
  device_part_t part;
  memset(&part, 0, sizeof(part));
  if (state)
    hpvm_kernel_choose_device(cache, state, params, param_count, &part.target, &part.reason);
  /* Too small a grid, no device, or a library call (which computes the whole node): as one
   * device would run it. */
  if (!part.target.device || part.target.library)
    return hpvm_kernel_run(cache, site, grid, block, params, param_count, out_ran);
  part.cache = cache;
  part.state = state;
  memcpy(part.grid, grid, sizeof(part.grid));
  part.block = block;
  part.pick = pick;
  part.params = params;
  part.param_count = param_count;
  part.reason.length = 0;
  part.reason.text[0] = '\0';
  double share = atomic_load(&state->split_share);
  share = share > 0.0 ? share : 0.5;
  /* A side whose part would be under half a work-group does not pay for the split (the
   * device's copies, the merge): the other side runs alone, with a split again every
   * HPVM_KERNEL_SPLIT_PROBE launches to measure both anew. */
  double least = 0.5 * (double)unit / (double)grid[dim];
  if ((share < least || share > 1.0 - least) &&
      atomic_fetch_add(&state->split_skipped, 1) + 1 < HPVM_KERNEL_SPLIT_PROBE)
    return run_one_side(&part, share < least, dim, grid[dim], cpu_part, cpu_self, out_ran);
  atomic_store(&state->split_skipped, 0);
  HPVM_RETURN_IF_ERROR(run_split(&part, share, dim, grid[dim], unit, cpu_part, cpu_self));
  *out_ran = 1;
  return NULL;
}
