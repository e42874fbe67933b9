/* Recording, sending and building pipelines (plan.h). */
#define _GNU_SOURCE
#include "mpi/plan.h"
#include "mpi/real.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* The base of the stage functions' offsets. */
static void plan_anchor(void) {}

static void *grow(void *array, size_t element, uint32_t count) {
  void *grown = realloc(array, element * (count + 1));
  if (!grown)
    abort();
  return grown;
}

static void *copy_sizes(const size_t *sizes, uint32_t count) {
  uint64_t *copy = malloc(sizeof *copy * (count + 1));
  if (!copy)
    abort();
  for (uint32_t i = 0; i < count; ++i)
    copy[i] = sizes[i];
  return copy;
}

/* Whether `fn` is in the same loaded object as this layer (so its offset means the same on
 * every rank). */
static int same_object(const void *fn) {
  Dl_info mine, theirs;
  void *anchor = (void *)(uintptr_t)plan_anchor;
  if (!dladdr(anchor, &mine) || !dladdr(fn, &theirs))
    return 0;
  return mine.dli_fbase == theirs.dli_fbase;
}

void hpvm_mpi_plan_add_stage(hpvm_mpi_plan_t *plan, const hpvm_rt_stage_version_t *versions,
                             uint32_t version_count, void *context, uint32_t input_count,
                             const size_t *input_sizes, uint32_t output_count,
                             const size_t *output_sizes) {
  plan->stages = grow(plan->stages, sizeof *plan->stages, plan->stage_count);
  hpvm_mpi_stage_t *stage = &plan->stages[plan->stage_count++];
  stage->version_count = version_count;
  stage->versions = malloc(sizeof *stage->versions * (version_count + 1));
  if (!stage->versions)
    abort();
  for (uint32_t v = 0; v < version_count; ++v) {
    const void *fn = (const void *)(uintptr_t)versions[v].fn;
    if (!same_object(fn))
      plan->refusal = "a stage function is not in the program's image";
    stage->versions[v].device = (int32_t)versions[v].device;
    stage->versions[v].offset = (int64_t)((intptr_t)fn - (intptr_t)plan_anchor);
  }
  if (context)
    plan->refusal = "a stage has a context pointer, which cannot travel";
  if (version_count > HPVM_MPI_PLAN_LIMIT || input_count > HPVM_MPI_PLAN_LIMIT ||
      output_count > HPVM_MPI_PLAN_LIMIT || plan->stage_count > HPVM_MPI_PLAN_LIMIT) {
    plan->refusal = "the pipeline has more stages, versions or ports than the MPI layer takes";
    version_count = input_count = output_count = 0;
  }
  stage->in_count = input_count;
  stage->out_count = output_count;
  stage->in_sizes = copy_sizes(input_sizes, input_count);
  stage->out_sizes = copy_sizes(output_sizes, output_count);
}

void hpvm_mpi_plan_connect(hpvm_mpi_plan_t *plan, uint32_t src, uint32_t src_port,
                           uint32_t dst, uint32_t dst_port) {
  plan->connects = grow(plan->connects, sizeof *plan->connects, plan->connect_count);
  plan->connects[plan->connect_count++] = (hpvm_mpi_connect_t){src, src_port, dst, dst_port};
}

#define PUT(value) hpvm_mpi_bytes_append(out, &(value), sizeof(value))

void hpvm_mpi_plan_encode(const hpvm_mpi_plan_t *plan, hpvm_mpi_bytes_t *out) {
  PUT(plan->input_size);
  PUT(plan->output_size);
  PUT(plan->capacity);
  PUT(plan->stage_count);
  for (uint32_t s = 0; s < plan->stage_count; ++s) {
    const hpvm_mpi_stage_t *stage = &plan->stages[s];
    PUT(stage->version_count);
    hpvm_mpi_bytes_append(out, stage->versions, sizeof *stage->versions * stage->version_count);
    PUT(stage->in_count);
    hpvm_mpi_bytes_append(out, stage->in_sizes, sizeof(uint64_t) * stage->in_count);
    PUT(stage->out_count);
    hpvm_mpi_bytes_append(out, stage->out_sizes, sizeof(uint64_t) * stage->out_count);
  }
  PUT(plan->connect_count);
  hpvm_mpi_bytes_append(out, plan->connects, sizeof *plan->connects * plan->connect_count);
}

/* Reads `size` bytes at *at into `to` (malloc'd when `to` is NULL: returned). */
static void *take(const char *data, size_t total, size_t *at, size_t size, int *ok) {
  void *to = malloc(size ? size : 1);
  if (!to)
    abort();
  if (*ok && *at + size <= total) {
    memcpy(to, data + *at, size);
    *at += size;
  } else {
    *ok = 0;
    memset(to, 0, size ? size : 1);
  }
  return to;
}

#define GET(field)                                                                       \
  do {                                                                                   \
    void *value = take(data, size, &at, sizeof(field), &ok);                             \
    memcpy(&(field), value, sizeof(field));                                              \
    free(value);                                                                         \
  } while (0)

/* An array of `count` elements at *at, when `count` is at most `limit` (else not ok). */
static void *take_array(const char *data, size_t total, size_t *at, uint32_t count,
                        uint32_t limit, size_t element, int *ok) {
  *ok = *ok && count <= limit;
  return take(data, total, at, *ok ? element * count : 0, ok);
}

int hpvm_mpi_plan_decode(const char *data, size_t size, hpvm_mpi_plan_t *plan) {
  memset(plan, 0, sizeof *plan);
  size_t at = 0;
  int ok = 1;
  GET(plan->input_size);
  GET(plan->output_size);
  GET(plan->capacity);
  uint32_t stages = 0;
  GET(stages);
  for (uint32_t s = 0; ok && s < stages && s < HPVM_MPI_PLAN_LIMIT; ++s) {
    plan->stages = grow(plan->stages, sizeof *plan->stages, plan->stage_count);
    hpvm_mpi_stage_t *stage = &plan->stages[plan->stage_count++];
    memset(stage, 0, sizeof *stage);
    GET(stage->version_count);
    stage->versions = take_array(data, size, &at, stage->version_count, HPVM_MPI_PLAN_LIMIT,
                                 sizeof *stage->versions, &ok);
    GET(stage->in_count);
    stage->in_sizes = take_array(data, size, &at, stage->in_count, HPVM_MPI_PLAN_LIMIT,
                                 sizeof(uint64_t), &ok);
    GET(stage->out_count);
    stage->out_sizes = take_array(data, size, &at, stage->out_count, HPVM_MPI_PLAN_LIMIT,
                                  sizeof(uint64_t), &ok);
  }
  uint32_t connects = 0;
  GET(connects);
  plan->connects = take_array(data, size, &at, connects, HPVM_MPI_PLAN_LIMIT * 16,
                              sizeof *plan->connects, &ok);
  plan->connect_count = ok ? connects : 0;
  return ok && stages == plan->stage_count && at == size;
}

hpvm_status_t hpvm_mpi_plan_build(const hpvm_mpi_plan_t *plan, hpvm_rt_pipeline_t **out) {
  hpvm_rt_pipeline_t *pipeline = NULL;
  hpvm_status_t status = __real_hpvm_rt_pipeline_create(
      plan->input_size, plan->output_size, plan->capacity, &pipeline);
  for (uint32_t s = 0; !status && s < plan->stage_count; ++s) {
    const hpvm_mpi_stage_t *stage = &plan->stages[s];
    hpvm_rt_stage_version_t versions[HPVM_MPI_PLAN_LIMIT];
    for (uint32_t v = 0; v < stage->version_count; ++v) {
      versions[v].device = (hpvm_rt_device_kind_t)stage->versions[v].device;
      intptr_t fn = (intptr_t)plan_anchor + (intptr_t)stage->versions[v].offset;
      versions[v].fn = (hpvm_rt_stage_fn_t)fn;
    }
    size_t in_sizes[HPVM_MPI_PLAN_LIMIT], out_sizes[HPVM_MPI_PLAN_LIMIT];
    for (uint32_t i = 0; i < stage->in_count; ++i)
      in_sizes[i] = (size_t)stage->in_sizes[i];
    for (uint32_t i = 0; i < stage->out_count; ++i)
      out_sizes[i] = (size_t)stage->out_sizes[i];
    uint32_t index = 0;
    status = __real_hpvm_rt_pipeline_add_stage(pipeline, NULL, versions, stage->version_count,
                                               NULL, stage->in_count, in_sizes,
                                               stage->out_count, out_sizes, &index);
  }
  for (uint32_t c = 0; !status && c < plan->connect_count; ++c) {
    const hpvm_mpi_connect_t *k = &plan->connects[c];
    status = __real_hpvm_rt_pipeline_connect(pipeline, k->src, k->src_port, k->dst,
                                             k->dst_port);
  }
  if (status) {
    __real_hpvm_rt_pipeline_destroy(pipeline);
    return status;
  }
  *out = pipeline;
  return NULL;
}

void hpvm_mpi_plan_free(hpvm_mpi_plan_t *plan) {
  for (uint32_t s = 0; s < plan->stage_count; ++s) {
    free(plan->stages[s].versions);
    free(plan->stages[s].in_sizes);
    free(plan->stages[s].out_sizes);
  }
  free(plan->stages);
  free(plan->connects);
  memset(plan, 0, sizeof *plan);
}
