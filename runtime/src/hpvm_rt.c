/* hpvm_rt.c - the stable hpvm_rt_* ABI: each call resolves the (lazily created) global runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/profile.h"
#include "base/trace.h"
#include "mem/buffer_cache.h"
#include "runtime.h"
#include "sched/graph.h"

#define WITH_RUNTIME(runtime)                                                                    \
  hpvm_runtime_t *runtime;                                                                       \
  HPVM_RETURN_IF_ERROR(hpvm_runtime_global(&runtime))

hpvm_status_t hpvm_rt_init(void) {
  hpvm_runtime_t *runtime;
  return hpvm_runtime_global(&runtime);
}

void hpvm_rt_shutdown(void) {
  hpvm_runtime_global_shutdown();
  hpvm_buffer_cache_release();
}

void hpvm_rt_assert_failed(const char *message, const char *where) {
  hpvm_rt_check_at(HPVM_STATUS(FAILED_PRECONDITION, "%s",
                               message && *message ? message : "an assertion failed"),
                   where);
  /* Not reached: the status is an error. */
  abort();
}

uint32_t hpvm_rt_thread_count(void) {
  hpvm_runtime_t *runtime;
  hpvm_status_t status = hpvm_runtime_global(&runtime);
  if (status) {
    hpvm_status_free(status);
    return 1;
  }
  return hpvm_runtime_thread_count(runtime);
}

hpvm_status_t hpvm_rt_parallel_for(uint32_t rank, const int64_t *extents,
                                   hpvm_rt_parallel_for_fn_t body, void *context) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_parallel_for(runtime, rank, extents, body, context);
}

hpvm_status_t hpvm_rt_device_get(hpvm_rt_device_kind_t kind, hpvm_rt_device_t **out_device) {
  if (!out_device)
    return HPVM_STATUS(INVALID_ARGUMENT, "out_device is NULL");
  WITH_RUNTIME(runtime);
  return hpvm_runtime_device_get(runtime, kind, out_device);
}

const char *hpvm_rt_device_name(const hpvm_rt_device_t *device) {
  return device ? device->name : "(null)";
}

hpvm_status_t hpvm_rt_graph_create(uint32_t node_hint, hpvm_rt_graph_t **out_graph) {
  if (!out_graph)
    return HPVM_STATUS(INVALID_ARGUMENT, "out_graph is NULL");
  WITH_RUNTIME(runtime);
  return hpvm_runtime_graph_create(runtime, node_hint, out_graph);
}

/* A grid node's arguments (hpvm_rt_graph_add_grid), owned by its graph node. */
typedef struct grid_node_t {
  hpvm_rt_parallel_for_fn_t body;
  void *context;
  int64_t extents[3];
  uint32_t rank;
  const char *name; /* the graph node's copy */
  char where[];
} grid_node_t;

static hpvm_status_t grid_node_run(void *context, hpvm_rt_device_t *device, int64_t data_item) {
  (void)device;
  (void)data_item;
  grid_node_t *grid = context;
  hpvm_rt_trace_node(grid->name, NULL);
  hpvm_rt_check_at(hpvm_rt_parallel_for(grid->rank, grid->extents, grid->body, grid->context),
                   grid->where);
  hpvm_rt_trace_node_done(grid->name);
  return NULL;
}

hpvm_status_t hpvm_rt_graph_add_grid(hpvm_rt_graph_t *graph, hpvm_rt_parallel_for_fn_t body,
                                     const char *name, const char *where, uint32_t rank,
                                     const int64_t *extents, void *context, uint32_t *out_node) {
  const char *shown = name ? name : "";
  if (!graph || !body || !extents || !out_node)
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "grid node '%s' needs a graph, a body, extents and out_node", shown);
  if (rank < 1 || rank > 3)
    return HPVM_STATUS(INVALID_ARGUMENT, "grid node '%s' has rank %u; expected 1 to 3", shown,
                       rank);
  for (uint32_t d = 0; d < rank; ++d)
    if (extents[d] < 0)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "grid node '%s' has extent %lld in dimension %u; expected >= 0", shown,
                         (long long)extents[d], d);
  size_t where_size = where ? strlen(where) + 1 : 1;
  grid_node_t *grid;
  const char *node_name;
  HPVM_RETURN_IF_ERROR(hpvm_sched_graph_add_owned_node(graph, name, grid_node_run,
                                                       sizeof(*grid) + where_size,
                                                       (void **)&grid, &node_name, out_node));
  grid->name = node_name;
  grid->body = body;
  grid->context = context;
  grid->rank = rank;
  for (uint32_t d = 0; d < 3; ++d)
    grid->extents[d] = d < rank ? extents[d] : 1;
  if (where)
    memcpy(grid->where, where, where_size);
  return NULL;
}

hpvm_status_t hpvm_rt_launch(hpvm_rt_root_fn_t root, void *args, hpvm_rt_launch_t **out_launch) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_launch(runtime, root, args, out_launch);
}

hpvm_status_t hpvm_rt_pipeline_create(size_t input_size, size_t output_size, uint32_t capacity,
                                      hpvm_rt_pipeline_t **out) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_pipeline_create(runtime, input_size, output_size, capacity, out);
}

hpvm_status_t hpvm_rt_stream_launch(const hpvm_rt_pipeline_t *pipeline,
                                    hpvm_rt_stream_t **out_stream) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_stream_launch(runtime, pipeline, out_stream);
}

/* The objects tracked by the innermost hpvm_rt_call_guarded of this thread and not yet
 * untracked: an abandoned call's are untracked, so that its caller may pass the same
 * arrays again. */
typedef struct guard_journal_s {
  void **pointers;
  size_t count, capacity;
  bool overflowed; /* an entry could not be recorded */
} guard_journal_t;
static _Thread_local guard_journal_t *guard_journal;

static void journal_add(void *ptr) {
  guard_journal_t *journal = guard_journal;
  if (!journal)
    return;
  if (journal->count == journal->capacity) {
    size_t capacity = journal->capacity ? 2 * journal->capacity : 8;
    void **grown = realloc(journal->pointers, capacity * sizeof(void *));
    if (!grown) {
      journal->overflowed = true;
      return;
    }
    journal->pointers = grown;
    journal->capacity = capacity;
  }
  journal->pointers[journal->count++] = ptr;
}

static void journal_remove(void *ptr) {
  guard_journal_t *journal = guard_journal;
  if (!journal)
    return;
  for (size_t i = journal->count; i-- > 0;)
    if (journal->pointers[i] == ptr) {
      journal->pointers[i] = journal->pointers[--journal->count];
      return;
    }
}

hpvm_status_t hpvm_rt_track(void *ptr, size_t size) {
  WITH_RUNTIME(runtime);
  hpvm_status_t status = hpvm_mem_tracker_track(hpvm_runtime_tracker(runtime), ptr, size);
  if (!status)
    journal_add(ptr);
  return status;
}

hpvm_status_t hpvm_rt_untrack(void *ptr) {
  WITH_RUNTIME(runtime);
  hpvm_status_t status = hpvm_mem_tracker_untrack(hpvm_runtime_tracker(runtime), ptr);
  if (!status)
    journal_remove(ptr);
  return status;
}

hpvm_status_t hpvm_rt_call_guarded(void (*entry)(void **), void **args) {
  if (!entry)
    return HPVM_STATUS(INVALID_ARGUMENT, "hpvm_rt_call_guarded: expected an entry point, "
                                         "found NULL");
  guard_journal_t journal = {0};
  guard_journal_t *outer = guard_journal;
  guard_journal = &journal;
  hpvm_status_t status = hpvm_status_guarded_call(entry, args);
  guard_journal = outer;
  if (status) {
    /* Untracking copies device data back to the arrays, as the call's own untrack would
     * have; a failure here leaves the object tracked and changes nothing else. */
    for (size_t i = 0; i < journal.count; ++i)
      hpvm_status_free(hpvm_rt_untrack(journal.pointers[i]));
    if (journal.overflowed)
      status = hpvm_status_annotate(status, "(some objects the call tracked stay tracked: "
                                            "out of memory)");
  } else {
    /* Still tracked after a nested call: the enclosing call's to undo if it fails. */
    for (size_t i = 0; i < journal.count; ++i)
      journal_add(journal.pointers[i]);
  }
  free(journal.pointers);
  return status;
}

hpvm_status_t hpvm_rt_discard(void *ptr) {
  WITH_RUNTIME(runtime);
  return hpvm_mem_tracker_discard(hpvm_runtime_tracker(runtime), ptr);
}

hpvm_status_t hpvm_rt_request_host(void *ptr, size_t size, hpvm_rt_access_t access) {
  WITH_RUNTIME(runtime);
  return hpvm_mem_tracker_request(hpvm_runtime_tracker(runtime), ptr, size, NULL, access, NULL,
                                  NULL);
}

hpvm_status_t hpvm_rt_request_device(void *ptr, size_t size, hpvm_rt_device_t *device,
                                     hpvm_rt_access_t access, uint64_t *out_handle,
                                     size_t *out_offset) {
  if (!device)
    return HPVM_STATUS(INVALID_ARGUMENT, "request_device needs a device");
  WITH_RUNTIME(runtime);
  return hpvm_mem_tracker_request(hpvm_runtime_tracker(runtime), ptr, size, device, access,
                                  out_handle, out_offset);
}

hpvm_status_t hpvm_rt_kernel_run(hpvm_rt_kernel_site_t *site, const int64_t grid[3],
                                 const int64_t block[3], const hpvm_rt_kernel_param_t *params,
                                 uint32_t param_count, int32_t *out_ran) {
  if (out_ran)
    *out_ran = 0; /* also when the runtime cannot start */
  WITH_RUNTIME(runtime);
  return hpvm_runtime_kernel_run(runtime, site, grid, block, params, param_count, out_ran);
}

/* The CPU's part of a split grid: the compiled CPU version over a range of one dimension. */
typedef struct cpu_part_t {
  hpvm_runtime_t *runtime;
  uint32_t rank;
  const int64_t *grid;
  hpvm_rt_parallel_for_fn_t body;
  void *context;
  int dim;
  int64_t begin;
} cpu_part_t;

/* The body over a box of the part's grid: shifted to the whole grid's ids and extents. */
static void cpu_part_body(void *self, const hpvm_rt_instance_range_t *range) {
  const cpu_part_t *part = self;
  hpvm_rt_instance_range_t whole = *range;
  whole.begin[part->dim] += part->begin;
  whole.end[part->dim] += part->begin;
  for (uint32_t d = 0; d < part->rank; ++d)
    whole.extent[d] = part->grid[d];
  part->body(part->context, &whole);
}

static hpvm_status_t cpu_part_run(void *self, int dim, int64_t begin, int64_t end) {
  cpu_part_t *part = self;
  int64_t extents[3];
  for (uint32_t d = 0; d < part->rank; ++d)
    extents[d] = (int)d == dim ? end - begin : part->grid[d];
  part->dim = dim;
  part->begin = begin;
  return hpvm_runtime_parallel_for(part->runtime, part->rank, extents, cpu_part_body, part);
}

hpvm_status_t hpvm_rt_kernel_run_split(hpvm_rt_kernel_site_t *site, const int64_t grid[3],
                                       const int64_t block[3],
                                       const hpvm_rt_kernel_param_t *params, uint32_t param_count,
                                       int32_t hinted, uint32_t rank,
                                       hpvm_rt_parallel_for_fn_t body, void *context,
                                       int32_t *out_ran) {
  if (out_ran)
    *out_ran = 0;
  WITH_RUNTIME(runtime);
  if (!body || rank < 1 || rank > 3 || !grid)
    return HPVM_STATUS(INVALID_ARGUMENT, "kernel_run_split needs the grid and the CPU version's "
                                         "body and rank (1 to 3), found rank %u",
                       rank);
  for (uint32_t d = rank; d < 3; ++d)
    if (grid[d] != 1)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "kernel_run_split: grid[%u] = %lld beyond the CPU version's rank %u; "
                         "expected 1",
                         d, (long long)grid[d], rank);
  cpu_part_t part = {runtime, rank, grid, body, context, 0, 0};
  return hpvm_runtime_kernel_run_split(runtime, site, grid, block, params, param_count,
                                       hinted != 0, cpu_part_run, &part, out_ran);
}

void hpvm_rt_trace_node(const char *node, const char *device) {
  if (hpvm_trace_enabled())
    hpvm_trace_line("%s on %s", node ? node : "(unnamed)", device ? device : "cpu");
  /* A CPU run starts here; hpvm_rt_trace_node_done ends it. */
  if (!device && hpvm_profile_enabled())
    hpvm_profile_start(node ? node : "(unnamed)");
}

void hpvm_rt_trace_node_done(const char *node) {
  if (hpvm_profile_enabled())
    hpvm_profile_done(node ? node : "(unnamed)");
}

hpvm_status_t hpvm_rt_no_cpu_version(const char *node, const char *reason) {
  return HPVM_STATUS(FAILED_PRECONDITION,
                     "node '%s' ran on no device, and it has no CPU version (%s); "
                     "HPVM_TRACE=1 shows why no device ran it",
                     node ? node : "(unnamed)", reason ? reason : "no reason given");
}

hpvm_status_t hpvm_rt_grid_fits(const char *node, int32_t dim, int64_t extent, int32_t input,
                                int32_t axis, int64_t size) {
  if (extent <= size)
    return NULL;
  static const char dims[] = "xyz";
  return HPVM_STATUS(OUT_OF_RANGE,
                     "node '%s' runs %lld instances along %c, and each indexes dimension %d "
                     "of input %d by its %c id, which has %lld elements; expected at most %lld "
                     "instances (or an array of at least %lld)",
                     node ? node : "(unnamed)", (long long)extent,
                     dim >= 0 && dim < 3 ? dims[dim] : '?', (int)axis, (int)input,
                     dim >= 0 && dim < 3 ? dims[dim] : '?', (long long)size, (long long)size,
                     (long long)extent);
}

hpvm_status_t hpvm_rt_policy_set(hpvm_rt_policy_kind_t kind) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_policy_set(runtime, kind);
}

hpvm_status_t hpvm_rt_policy_assign(const char *node_name, hpvm_rt_device_kind_t device) {
  WITH_RUNTIME(runtime);
  return hpvm_runtime_policy_assign(runtime, node_name, device);
}

/*===--- GPU host code: thin, validated forwarding to the device vtable ----===*/

hpvm_status_t hpvm_rt_module_load(hpvm_rt_device_t *device, const hpvm_rt_module_image_t *image,
                                  hpvm_rt_module_t **out_module) {
  return hpvm_device_module_load(device, image, out_module);
}

void hpvm_rt_module_unload(hpvm_rt_module_t *module) { hpvm_device_module_unload(module); }

hpvm_status_t hpvm_rt_kernel_get(hpvm_rt_module_t *module, const char *name,
                                 hpvm_rt_kernel_t **out_kernel) {
  return hpvm_device_kernel_get(module, name, out_kernel);
}

hpvm_status_t hpvm_rt_kernel_launch(hpvm_rt_kernel_t *kernel, const hpvm_rt_launch_dims_t *dims,
                                    const hpvm_rt_kernel_arg_t *args, uint32_t arg_count) {
  return hpvm_device_kernel_launch(kernel, dims, args, arg_count, NULL);
}

hpvm_status_t hpvm_rt_device_alloc(hpvm_rt_device_t *device, size_t size, uint64_t *out_handle) {
  if (!device || !out_handle)
    return HPVM_STATUS(INVALID_ARGUMENT, "device_alloc needs a device and out_handle");
  return hpvm_device_buffer_alloc(device, size, HPVM_BUFFER_OWNER_USER, out_handle);
}

hpvm_status_t hpvm_rt_device_free(hpvm_rt_device_t *device, uint64_t handle) {
  if (!device)
    return HPVM_STATUS(INVALID_ARGUMENT, "device_free needs a device");
  if (!handle) /* like free(NULL) */
    return NULL;
  return hpvm_device_buffer_free(device, handle, HPVM_BUFFER_OWNER_USER);
}

hpvm_status_t hpvm_rt_device_copy_to_device(hpvm_rt_device_t *device, uint64_t dst_handle,
                                            size_t dst_offset, const void *src, size_t size) {
  if (!device || !dst_handle || (size && !src))
    return HPVM_STATUS(INVALID_ARGUMENT, "copy_to_device needs a device, a buffer and a source");
  return hpvm_device_copy_to_device(device, dst_handle, dst_offset, src, size);
}

hpvm_status_t hpvm_rt_device_copy_to_host(hpvm_rt_device_t *device, void *dst, uint64_t src_handle,
                                          size_t src_offset, size_t size) {
  if (!device || !src_handle || (size && !dst))
    return HPVM_STATUS(INVALID_ARGUMENT, "copy_to_host needs a device, a buffer and a target");
  return hpvm_device_copy_to_host(device, dst, src_handle, src_offset, size);
}

hpvm_status_t hpvm_rt_device_synchronize(hpvm_rt_device_t *device) {
  if (!device)
    return HPVM_STATUS(INVALID_ARGUMENT, "synchronize needs a device");
  return device->vtable->synchronize(device);
}

/* A program built with hpvm-cc -fsanitize links the runtime compiled with the same sanitizers
 * (libhpvm_rt_asan.a, _tsan.a). The device drivers the runtime loads are not: the OpenCL stack
 * (PoCL and its LLVM) keeps allocations until exit by design and synchronizes its threads in ways
 * ThreadSanitizer cannot see. Their reports are not the program's, so the sanitizers start with
 * these suppressions (what the runtime's own tests give them in runtime/test/sanitizers/); a
 * program's LSAN_OPTIONS / TSAN_OPTIONS suppressions add to them. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libLLVM\nleak:libOpenCL\nleak:libclang-cpp\nleak:libcuda\n";
}
#endif
#if __has_feature(thread_sanitizer)
__attribute__((visibility("default"))) const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) {
  return "called_from_lib:libpocl-devices-pthread.so\ncalled_from_lib:libpocl.so.2\n"
         "called_from_lib:libLLVM-15.so.1\ncalled_from_lib:libOpenCL.so.1\n"
         "called_from_lib:libclang-cpp.so.15\ncalled_from_lib:libcuda.so.1\n"
         "mutex:libpocl\nrace:libpocl\nrace:libLLVM\nrace:libclang-cpp\ndeadlock:libpocl\n";
}
#endif
#endif
