/* runtime.c - owns pool, policy, devices and tracker; version selection with CPU fallback. */
#include "runtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "base/platform.h"
#include "sched/graph.h"
#include "stream/pipeline.h"

struct hpvm_runtime_t {
  hpvm_allocator_t allocator;
  uint32_t thread_count;
  uint32_t stream_capacity;
  hpvm_sched_pool_t *pool;
  pthread_rwlock_t policy_lock; /* policy swaps are rare; selections are concurrent */
  hpvm_sched_policy_t *policy;
  pthread_mutex_t device_mutex; /* serialises opening a driver, nothing else */
  _Atomic(hpvm_device_t *) devices[HPVM_RT_DEVICE_KIND_COUNT];
  hpvm_status_t device_errors[HPVM_RT_DEVICE_KIND_COUNT]; /* why a driver failed to open */
  bool only_given_devices;
  hpvm_mem_tracker_t *tracker;
  hpvm_kernel_cache_t *kernels; /* hpvm_rt_kernel_run's modules and site states */
};

struct hpvm_rt_launch_t {
  hpvm_sched_task_t task; /* first: the pool hands this pointer back */
  hpvm_runtime_t *runtime;
  hpvm_rt_root_fn_t root;
  void *args;
  hpvm_status_t status;
  pthread_mutex_t mutex;
  bool done; /* guarded by mutex */
};

static hpvm_status_t kernel_device_get(void *self, hpvm_rt_device_kind_t kind,
                                       hpvm_device_t **out_device) {
  return hpvm_runtime_device_get(self, kind, out_device);
}

hpvm_status_t hpvm_runtime_create(const hpvm_runtime_options_t *options,
                                  hpvm_runtime_t **out_runtime) {
  *out_runtime = NULL;
  hpvm_runtime_options_t defaults;
  memset(&defaults, 0, sizeof(defaults));
  if (!options)
    options = &defaults;
  hpvm_allocator_t allocator = options->allocator.alloc ? options->allocator
                                                        : hpvm_allocator_system();
  uint64_t value;
  bool present;
  uint32_t threads = options->thread_count;
  hpvm_status_t status = NULL;
  if (!threads) {
    status = hpvm_platform_env_integer("HPVM_NUM_THREADS", 1, 4096, &value, &present);
    threads = present ? (uint32_t)value : hpvm_platform_cpu_count();
  }
  uint32_t capacity = options->stream_capacity;
  if (!status && !capacity) {
    status = hpvm_platform_env_integer("HPVM_STREAM_CAPACITY", 1, 1u << 30, &value, &present);
    capacity = present ? (uint32_t)value : HPVM_STREAM_DEFAULT_CAPACITY;
  }
  hpvm_rt_policy_kind_t policy_kind = HPVM_RT_POLICY_DYNAMIC;
  if (!status && options->has_policy) {
    policy_kind = options->policy;
  } else if (!status && getenv("HPVM_POLICY") && *getenv("HPVM_POLICY")) {
    status = hpvm_status_annotate(hpvm_sched_policy_parse(getenv("HPVM_POLICY"), &policy_kind),
                                  "HPVM_POLICY");
  }
  hpvm_kernel_device_choice_t kernel_device = HPVM_KERNEL_DEVICE_ANY;
  if (!status && options->has_kernel_device)
    kernel_device = options->kernel_device;
  else if (!status)
    status = hpvm_kernel_device_choice_parse(getenv("HPVM_DEVICE"), &kernel_device);
  /* Read again where an OpenCL device is made; checked here so that a bad value stops every
   * program, not only those that reach for OpenCL. */
  if (!status)
    status = hpvm_platform_env_integer("HPVM_OPENCL_DEVICE", 0, 255, &value, &present);
  hpvm_runtime_t *runtime = NULL;
  if (!status)
    status = hpvm_allocator_calloc(allocator, sizeof(*runtime), (void **)&runtime);
  if (status) {
    for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind)
      hpvm_device_destroy(options->devices[kind]);
    return status;
  }
  runtime->allocator = allocator;
  runtime->thread_count = threads;
  runtime->stream_capacity = capacity;
  runtime->only_given_devices = options->only_given_devices;
  pthread_rwlock_init(&runtime->policy_lock, NULL);
  pthread_mutex_init(&runtime->device_mutex, NULL);
  for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind)
    atomic_init(&runtime->devices[kind], options->devices[kind]);
  status = hpvm_sched_policy_create(allocator, policy_kind, &runtime->policy);
  if (!status)
    status = hpvm_mem_tracker_create(allocator, &runtime->tracker);
  if (!status)
    status = hpvm_kernel_cache_create(allocator, runtime->tracker, kernel_device_get, runtime,
                                      kernel_device, &runtime->kernels);
  if (!status)
    status = hpvm_sched_pool_create(allocator, threads - 1, &runtime->pool);
  if (status) {
    hpvm_status_free(hpvm_runtime_destroy(runtime));
    return status;
  }
  *out_runtime = runtime;
  return NULL;
}

hpvm_status_t hpvm_runtime_destroy(hpvm_runtime_t *runtime) {
  if (!runtime)
    return NULL;
  hpvm_sched_pool_destroy(runtime->pool);
  /* Modules before the devices they live on; site states go back to NULL. */
  hpvm_kernel_cache_destroy(runtime->kernels);
  hpvm_status_t status = hpvm_mem_tracker_destroy(runtime->tracker);
  for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind) {
    hpvm_device_destroy(atomic_load(&runtime->devices[kind]));
    hpvm_status_free(runtime->device_errors[kind]);
  }
  hpvm_sched_policy_destroy(runtime->policy);
  pthread_rwlock_destroy(&runtime->policy_lock);
  pthread_mutex_destroy(&runtime->device_mutex);
  hpvm_allocator_free(runtime->allocator, runtime);
  return status;
}

uint32_t hpvm_runtime_thread_count(const hpvm_runtime_t *runtime) { return runtime->thread_count; }
hpvm_sched_pool_t *hpvm_runtime_pool(hpvm_runtime_t *runtime) { return runtime->pool; }
hpvm_mem_tracker_t *hpvm_runtime_tracker(hpvm_runtime_t *runtime) { return runtime->tracker; }

/*===--- devices ----------------------------------------------------------===*/

hpvm_status_t hpvm_runtime_device_get(hpvm_runtime_t *runtime, hpvm_rt_device_kind_t kind,
                                      hpvm_device_t **out_device) {
  if ((unsigned)kind >= HPVM_RT_DEVICE_KIND_COUNT)
    return HPVM_STATUS(INVALID_ARGUMENT, "unknown device kind %d", (int)kind);
  hpvm_device_t *device = atomic_load_explicit(&runtime->devices[kind], memory_order_acquire);
  if (device) {
    *out_device = device;
    return NULL;
  }
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&runtime->device_mutex);
  device = atomic_load(&runtime->devices[kind]);
  if (!device && runtime->device_errors[kind]) {
    status = hpvm_status_clone(runtime->device_errors[kind]);
  } else if (!device) {
    if (runtime->only_given_devices && kind != HPVM_RT_DEVICE_CPU)
      status = HPVM_STATUS(UNAVAILABLE, "no %s device was given to this runtime",
                           kind == HPVM_RT_DEVICE_CUDA ? "cuda" : "opencl");
    else if (kind == HPVM_RT_DEVICE_CPU)
      status = hpvm_cpu_device_create(runtime->allocator, &device);
    else if (kind == HPVM_RT_DEVICE_CUDA)
      status = hpvm_cuda_device_create(runtime->allocator, &device);
    else
      status = hpvm_opencl_device_create(runtime->allocator, &device);
    if (status) {
      /* Remember a missing driver: probing it again on every node would cost a dlopen. */
      if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE)
        runtime->device_errors[kind] = hpvm_status_clone(status);
    } else {
      atomic_store_explicit(&runtime->devices[kind], device, memory_order_release);
    }
  }
  pthread_mutex_unlock(&runtime->device_mutex);
  if (!status)
    *out_device = device;
  return status;
}

/*===--- version selection ------------------------------------------------===*/

static bool device_usable(void *self, hpvm_rt_device_kind_t kind) {
  hpvm_runtime_t *runtime = self;
  hpvm_device_t *device;
  hpvm_status_t status = hpvm_runtime_device_get(runtime, kind, &device);
  if (status) {
    hpvm_status_free(status);
    return false;
  }
  return !atomic_load(&device->failed) && atomic_load(&device->inflight) < device->max_inflight;
}

static hpvm_status_t run_version(hpvm_runtime_t *runtime, hpvm_rt_device_kind_t kind,
                                 uint32_t version, hpvm_sched_invoke_fn_t invoke,
                                 void *invoke_self, hpvm_device_t **out_device) {
  hpvm_device_t *device = NULL;
  *out_device = NULL;
  HPVM_RETURN_IF_ERROR(hpvm_runtime_device_get(runtime, kind, &device));
  *out_device = device;
  /* The CPU is never busy for the dynamic policy, so it needs no in-flight count; skipping it
   * keeps stage threads from contending on one cache line per item. */
  if (kind == HPVM_RT_DEVICE_CPU)
    return invoke(invoke_self, version, device);
  atomic_fetch_add(&device->inflight, 1);
  hpvm_status_t status = invoke(invoke_self, version, device);
  atomic_fetch_sub(&device->inflight, 1);
  return status;
}

static hpvm_status_t runtime_run(void *self, const char *name, const hpvm_rt_device_kind_t *versions,
                                 uint32_t version_count, int64_t data_item,
                                 hpvm_sched_invoke_fn_t invoke, void *invoke_self) {
  hpvm_runtime_t *runtime = self;
  hpvm_device_t *device;
  /* A node with only a CPU version has nothing to choose: no policy lock on the hot path. */
  if (version_count == 1 && versions[0] == HPVM_RT_DEVICE_CPU)
    return run_version(runtime, HPVM_RT_DEVICE_CPU, 0, invoke, invoke_self, &device);
  hpvm_sched_choice_t choice = {name, versions, version_count, data_item, device_usable, runtime};
  pthread_rwlock_rdlock(&runtime->policy_lock);
  uint32_t selected = runtime->policy->vtable->select(runtime->policy, &choice);
  bool fall_back = runtime->policy->fall_back_on_failure;
  pthread_rwlock_unlock(&runtime->policy_lock);
  if (selected >= version_count)
    selected = 0;
  hpvm_status_t status =
      run_version(runtime, versions[selected], selected, invoke, invoke_self, &device);
  if (status && fall_back && versions[selected] != HPVM_RT_DEVICE_CPU) {
    uint32_t cpu = hpvm_sched_choice_find(&choice, HPVM_RT_DEVICE_CPU);
    if (cpu < version_count) {
      /* A device that reports itself unavailable is not chosen again by this runtime. */
      if (device && hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE)
        atomic_store(&device->failed, true);
      hpvm_status_free(status);
      status = run_version(runtime, HPVM_RT_DEVICE_CPU, cpu, invoke, invoke_self, &device);
    }
  }
  return status;
}

/* A stage's grids use the pool's workers only while fewer stage bodies run than the pool
 * has participants: balanced stages keep the cores busy by themselves (a 6-stage pipeline
 * on 2 cores ran 1.6x slower with every stage fanning its grid out), while one heavy stage
 * behind idle ones still gets every core. */
static void runtime_bind_stage_thread(void *self, const _Atomic uint32_t *running_stages) {
  (void)self;
  hpvm_sched_pool_bind_caller_load(running_stages);
}

hpvm_sched_runner_t hpvm_runtime_runner(hpvm_runtime_t *runtime) {
  hpvm_sched_runner_t runner = {runtime_run, runtime_bind_stage_thread, runtime};
  return runner;
}

hpvm_status_t hpvm_runtime_policy_set(hpvm_runtime_t *runtime, hpvm_rt_policy_kind_t kind) {
  hpvm_sched_policy_t *policy;
  HPVM_RETURN_IF_ERROR(hpvm_sched_policy_create(runtime->allocator, kind, &policy));
  pthread_rwlock_wrlock(&runtime->policy_lock);
  hpvm_sched_policy_t *old = runtime->policy;
  runtime->policy = policy;
  pthread_rwlock_unlock(&runtime->policy_lock);
  hpvm_sched_policy_destroy(old);
  return NULL;
}

hpvm_status_t hpvm_runtime_policy_assign(hpvm_runtime_t *runtime, const char *node_name,
                                         hpvm_rt_device_kind_t device) {
  if ((unsigned)device >= HPVM_RT_DEVICE_KIND_COUNT)
    return HPVM_STATUS(INVALID_ARGUMENT, "unknown device kind %d", (int)device);
  /* The write lock: assign mutates the policy's table while selections may run. */
  pthread_rwlock_wrlock(&runtime->policy_lock);
  hpvm_status_t status = runtime->policy->vtable->assign(runtime->policy, node_name, device);
  pthread_rwlock_unlock(&runtime->policy_lock);
  return status;
}

/*===--- kernel versions of nodes -------------------------------------------===*/

hpvm_status_t hpvm_runtime_kernel_run(hpvm_runtime_t *runtime, hpvm_rt_kernel_site_t *site,
                                      const int64_t grid[3], const int64_t block[3],
                                      const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                      int32_t *out_ran) {
  return hpvm_kernel_run(runtime->kernels, site, grid, block, params, param_count, out_ran);
}

hpvm_status_t hpvm_runtime_kernel_run_split(hpvm_runtime_t *runtime, hpvm_rt_kernel_site_t *site,
                                            const int64_t grid[3], const int64_t block[3],
                                            const hpvm_rt_kernel_param_t *params,
                                            uint32_t param_count, bool hinted,
                                            hpvm_kernel_cpu_part_fn_t cpu_part, void *cpu_self,
                                            int32_t *out_ran) {
  return hpvm_kernel_run_split(runtime->kernels, site, grid, block, params, param_count, hinted,
                               cpu_part, cpu_self, out_ran);
}

/*===--- graphs, launches, streams ----------------------------------------===*/

hpvm_status_t hpvm_runtime_parallel_for(hpvm_runtime_t *runtime, uint32_t rank,
                                        const int64_t *extents, hpvm_rt_parallel_for_fn_t body,
                                        void *context) {
  return hpvm_sched_pool_parallel_for(runtime->pool, rank, extents, body, context, NULL);
}

hpvm_status_t hpvm_runtime_graph_create(hpvm_runtime_t *runtime, uint32_t node_hint,
                                        hpvm_rt_graph_t **out_graph) {
  return hpvm_sched_graph_create(runtime->allocator, runtime->pool, hpvm_runtime_runner(runtime),
                                 node_hint, out_graph);
}

/* args: the launch, and where the root's returned status goes. */
static void call_root(void **args) {
  hpvm_rt_launch_t *launch = args[0];
  *(hpvm_status_t *)args[1] = launch->root(launch->args);
}

static void launch_task_run(hpvm_sched_task_t *task) {
  hpvm_rt_launch_t *launch = (hpvm_rt_launch_t *)task;
  /* The waiter may free the launch as soon as it sees it done. */
  hpvm_sched_pool_t *pool = launch->runtime->pool;
  /* The root's errors, returned or raised by its compiled code (hpvm_rt_check_at, which
   * would end the process on a worker thread), go to the wait. */
  hpvm_status_t returned = NULL;
  void *args[2] = {launch, &returned};
  hpvm_status_t raised = hpvm_status_guarded_call(call_root, args);
  hpvm_status_t status = raised ? raised : returned;
  pthread_mutex_lock(&launch->mutex);
  launch->status = status;
  launch->done = true;
  pthread_mutex_unlock(&launch->mutex);
  hpvm_sched_pool_notify(pool); /* a helping waiter idles on the pool's epoch */
}

hpvm_status_t hpvm_runtime_launch(hpvm_runtime_t *runtime, hpvm_rt_root_fn_t root, void *args,
                                  hpvm_rt_launch_t **out_launch) {
  if (!root || !out_launch)
    return HPVM_STATUS(INVALID_ARGUMENT, "launch needs a root function and out_launch");
  hpvm_rt_launch_t *launch;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(runtime->allocator, sizeof(*launch), (void **)&launch));
  launch->runtime = runtime;
  launch->root = root;
  launch->args = args;
  launch->task.run = launch_task_run;
  pthread_mutex_init(&launch->mutex, NULL);
  hpvm_sched_pool_submit(runtime->pool, &launch->task);
  *out_launch = launch;
  return NULL;
}

hpvm_status_t hpvm_rt_wait(hpvm_rt_launch_t *launch) {
  if (!launch)
    return HPVM_STATUS(INVALID_ARGUMENT, "wait of a NULL launch");
  hpvm_runtime_t *runtime = launch->runtime;
  /* Help while waiting: the root (or its nodes) may still be queued, and the grids its nodes
   * run on workers have this thread's share (with 2 threads, the half that the worker would
   * otherwise run too). Idle on the pool's epoch, which each new grid and the end of the
   * launch move. */
  for (;;) {
    uint32_t seen = hpvm_sched_pool_epoch(runtime->pool);
    pthread_mutex_lock(&launch->mutex);
    bool done = launch->done;
    pthread_mutex_unlock(&launch->mutex);
    if (done)
      break;
    if (!hpvm_sched_pool_help(runtime->pool))
      hpvm_sched_pool_idle(runtime->pool, seen);
  }
  hpvm_status_t status = launch->status;
  pthread_mutex_destroy(&launch->mutex);
  hpvm_allocator_free(runtime->allocator, launch);
  return status;
}

hpvm_status_t hpvm_runtime_pipeline_create(hpvm_runtime_t *runtime, size_t input_size,
                                           size_t output_size, uint32_t capacity,
                                           hpvm_rt_pipeline_t **out_pipeline) {
  if (!out_pipeline)
    return HPVM_STATUS(INVALID_ARGUMENT, "out_pipeline is NULL");
  return hpvm_stream_pipeline_create(runtime->allocator, input_size, output_size, capacity,
                                     runtime->stream_capacity, out_pipeline);
}

hpvm_status_t hpvm_runtime_stream_launch(hpvm_runtime_t *runtime,
                                         const hpvm_rt_pipeline_t *pipeline,
                                         hpvm_rt_stream_t **out_stream) {
  if (!out_stream)
    return HPVM_STATUS(INVALID_ARGUMENT, "out_stream is NULL");
  return hpvm_stream_launch(pipeline, hpvm_runtime_runner(runtime), runtime->thread_count,
                            out_stream);
}

/*===--- the global runtime -----------------------------------------------===*/

static pthread_mutex_t global_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(hpvm_runtime_t *) global_runtime;

hpvm_status_t hpvm_runtime_global(hpvm_runtime_t **out_runtime) {
  hpvm_runtime_t *runtime = atomic_load_explicit(&global_runtime, memory_order_acquire);
  if (runtime) {
    *out_runtime = runtime;
    return NULL;
  }
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&global_mutex);
  runtime = atomic_load(&global_runtime);
  if (!runtime) {
    status = hpvm_runtime_create(NULL, &runtime);
    if (!status)
      atomic_store_explicit(&global_runtime, runtime, memory_order_release);
  }
  pthread_mutex_unlock(&global_mutex);
  if (!status)
    *out_runtime = runtime;
  return status;
}

hpvm_device_t *hpvm_rt_device_peek(hpvm_rt_device_kind_t kind) {
  hpvm_runtime_t *runtime = atomic_load_explicit(&global_runtime, memory_order_acquire);
  if (!runtime || (unsigned)kind >= HPVM_RT_DEVICE_KIND_COUNT)
    return NULL;
  return atomic_load(&runtime->devices[kind]);
}

void hpvm_runtime_global_shutdown(void) {
  pthread_mutex_lock(&global_mutex);
  hpvm_runtime_t *runtime = atomic_exchange(&global_runtime, NULL);
  pthread_mutex_unlock(&global_mutex);
  hpvm_status_t status = hpvm_runtime_destroy(runtime);
  if (status) {
    /* Shutdown has no caller to return to; a failed device free is still worth knowing. */
    fprintf(stderr, "hpvm: warning: during shutdown: %s: %s\n",
            hpvm_status_code_name(hpvm_status_code(status)), hpvm_status_message(status));
    hpvm_status_free(status);
  }
}
