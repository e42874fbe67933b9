/* pipeline.c - stages fired by a few workers per stream, a ring per streaming edge, clean
 * end-of-stream and cancel. */
#include "stream/pipeline.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "base/platform.h"
#include "stream/ring.h"

typedef struct stage_desc_t {
  char *name;
  hpvm_rt_stage_version_t *versions;
  hpvm_rt_device_kind_t *version_devices;
  uint32_t version_count;
  void *context;
  uint32_t input_count;
  uint32_t output_count;
  size_t *input_sizes;
  size_t *output_sizes;
} stage_desc_t;

typedef struct edge_desc_t {
  uint32_t src, src_port, dst, dst_port;
} edge_desc_t;

struct hpvm_rt_pipeline_t {
  hpvm_allocator_t allocator;
  _Atomic uint32_t references; /* the creator + every launched stream */
  _Atomic bool frozen;         /* launched once: no more changes */
  size_t input_size;
  size_t output_size;
  uint32_t capacity;
  stage_desc_t *stages;
  uint32_t stage_count, stage_capacity;
  edge_desc_t *edges;
  uint32_t edge_count, edge_capacity;
};

typedef struct stage_run_t {
  struct hpvm_rt_stream_t *stream;
  const stage_desc_t *desc;
  hpvm_stream_ring_t **inputs;       /* input_count */
  hpvm_stream_ring_t **output_rings; /* flat: the rings of port p start at output_begin[p] */
  uint32_t *output_begin;            /* output_count + 1 entries */
  void **scratch;                    /* per output port with no consumer */
  const void **in_items;
  void **out_items;
  int64_t item;
  _Atomic bool claimed;   /* a worker is firing this stage (it alone touches the rest) */
  _Atomic bool finished;  /* the stage ended: its rings are released, it fires no more */
} stage_run_t;

struct hpvm_rt_stream_t {
  hpvm_allocator_t allocator;
  hpvm_rt_pipeline_t *pipeline; /* retained */
  hpvm_sched_runner_t runner;
  hpvm_stream_ring_t **rings; /* one per edge */
  stage_run_t *stages;
  hpvm_stream_ring_t **host_inputs;
  uint32_t host_input_count;
  hpvm_stream_ring_t *host_output;
  pthread_mutex_t push_mutex; /* host pushes may come from several threads */
  pthread_mutex_t pop_mutex;
  bool input_closed; /* guarded by push_mutex */
  pthread_mutex_t error_mutex;
  hpvm_status_t first_error; /* guarded by error_mutex */
  _Atomic uint32_t running_stages; /* stage bodies running now (see runner.h) */

  /* Workers: min(stages, threads) threads that fire whichever stage is ready. */
  pthread_t *workers;
  uint32_t worker_count, workers_started;
  _Atomic uint32_t worker_index; /* each worker takes the next on start */
  _Atomic uint32_t stages_left;
  /* Idle workers sleep on `wake` until `generation` moves; a change to any ring of the
   * stream bumps it when someone sleeps (see stream_notify). */
  _Atomic uint32_t sleepers;
  _Atomic uint64_t generation;
  pthread_mutex_t wake_mutex;
  pthread_cond_t wake;
};

/*===--- description ------------------------------------------------------===*/

hpvm_status_t hpvm_stream_pipeline_create(hpvm_allocator_t allocator, size_t input_size,
                                          size_t output_size, uint32_t capacity,
                                          uint32_t default_capacity,
                                          hpvm_rt_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  if (capacity == 0)
    capacity = default_capacity;
  if (capacity < HPVM_STREAM_MIN_CAPACITY)
    capacity = HPVM_STREAM_MIN_CAPACITY;
  hpvm_rt_pipeline_t *pipeline;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*pipeline), (void **)&pipeline));
  pipeline->allocator = allocator;
  atomic_init(&pipeline->references, 1);
  pipeline->input_size = input_size;
  pipeline->output_size = output_size;
  pipeline->capacity = capacity;
  *out_pipeline = pipeline;
  return NULL;
}

static void stage_desc_release(hpvm_allocator_t allocator, stage_desc_t *stage) {
  hpvm_allocator_free(allocator, stage->name);
  hpvm_allocator_free(allocator, stage->versions);
  hpvm_allocator_free(allocator, stage->version_devices);
  hpvm_allocator_free(allocator, stage->input_sizes);
  hpvm_allocator_free(allocator, stage->output_sizes);
}

static void pipeline_release(hpvm_rt_pipeline_t *pipeline) {
  if (atomic_fetch_sub(&pipeline->references, 1) != 1)
    return;
  for (uint32_t i = 0; i < pipeline->stage_count; ++i)
    stage_desc_release(pipeline->allocator, &pipeline->stages[i]);
  hpvm_allocator_free(pipeline->allocator, pipeline->stages);
  hpvm_allocator_free(pipeline->allocator, pipeline->edges);
  hpvm_allocator_free(pipeline->allocator, pipeline);
}

void hpvm_rt_pipeline_destroy(hpvm_rt_pipeline_t *pipeline) {
  if (pipeline)
    pipeline_release(pipeline);
}

static hpvm_status_t copy_sizes(hpvm_allocator_t allocator, const size_t *sizes, uint32_t count,
                                size_t **out) {
  *out = NULL;
  if (!count)
    return NULL;
  if (!sizes)
    return HPVM_STATUS(INVALID_ARGUMENT, "%u ports but no sizes", count);
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, count, sizeof(size_t), (void **)out));
  memcpy(*out, sizes, count * sizeof(size_t));
  return NULL;
}

hpvm_status_t hpvm_rt_pipeline_add_stage(hpvm_rt_pipeline_t *pipeline, const char *name,
                                         const hpvm_rt_stage_version_t *versions,
                                         uint32_t version_count, void *context,
                                         uint32_t input_count, const size_t *input_sizes,
                                         uint32_t output_count, const size_t *output_sizes,
                                         uint32_t *out_stage) {
  if (!pipeline || !versions || version_count == 0 || !out_stage)
    return HPVM_STATUS(INVALID_ARGUMENT, "stage needs a pipeline, >= 1 version and out_stage");
  if (atomic_load(&pipeline->frozen))
    return HPVM_STATUS(FAILED_PRECONDITION, "pipeline was launched; it can no longer change");
  if (input_count > 1024 || output_count > 1024)
    return HPVM_STATUS(INVALID_ARGUMENT, "stage '%s' has more than 1024 ports", name ? name : "");
  for (uint32_t i = 0; i < version_count; ++i)
    if (!versions[i].fn || (unsigned)versions[i].device >= HPVM_RT_DEVICE_KIND_COUNT)
      return HPVM_STATUS(INVALID_ARGUMENT, "stage '%s' version %u has no function or a bad device",
                         name ? name : "", i);
  hpvm_allocator_t allocator = pipeline->allocator;
  if (pipeline->stage_count == pipeline->stage_capacity) {
    uint32_t grown = pipeline->stage_capacity ? pipeline->stage_capacity * 2 : 4;
    HPVM_RETURN_IF_ERROR(hpvm_allocator_grow_array(allocator, (void **)&pipeline->stages,
                                                   pipeline->stage_capacity, grown,
                                                   sizeof(stage_desc_t)));
    pipeline->stage_capacity = grown;
  }
  stage_desc_t stage;
  memset(&stage, 0, sizeof(stage));
  hpvm_status_t status = hpvm_allocator_strdup(allocator, name, &stage.name);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, version_count, sizeof(*versions),
                                         (void **)&stage.versions);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, version_count, sizeof(hpvm_rt_device_kind_t),
                                         (void **)&stage.version_devices);
  if (!status)
    status = copy_sizes(allocator, input_sizes, input_count, &stage.input_sizes);
  if (!status)
    status = copy_sizes(allocator, output_sizes, output_count, &stage.output_sizes);
  if (status) {
    stage_desc_release(allocator, &stage);
    return status;
  }
  memcpy(stage.versions, versions, version_count * sizeof(*versions));
  for (uint32_t i = 0; i < version_count; ++i)
    stage.version_devices[i] = versions[i].device;
  stage.version_count = version_count;
  stage.context = context;
  stage.input_count = input_count;
  stage.output_count = output_count;
  pipeline->stages[pipeline->stage_count] = stage;
  *out_stage = pipeline->stage_count++;
  return NULL;
}

static const char *stage_name(const hpvm_rt_pipeline_t *pipeline, uint32_t s) {
  const char *name = pipeline->stages[s].name;
  return name ? name : "?";
}

/* Refuses an edge src -> dst between stages that would close a cycle, i.e. when src is
 * already reachable from dst (or src == dst).  A stage fires only when every input holds an
 * item, so the stages on a cycle wait for each other forever: the first push would block.
 * The message names the stages on the cycle, as the dialect's verifier does for graphs. */
static hpvm_status_t check_no_cycle(const hpvm_rt_pipeline_t *pipeline, uint32_t src,
                                    uint32_t src_port, uint32_t dst, uint32_t dst_port) {
  uint32_t n = pipeline->stage_count;
  /* parent[s]: the stage we reached s from in a breadth-first search from dst (n = unseen). */
  uint32_t *parent, *queue;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(pipeline->allocator, n, sizeof(uint32_t),
                                                   (void **)&parent));
  hpvm_status_t status = hpvm_allocator_calloc_array(pipeline->allocator, n, sizeof(uint32_t),
                                                     (void **)&queue);
  if (status) {
    hpvm_allocator_free(pipeline->allocator, parent);
    return status;
  }
  for (uint32_t s = 0; s < n; ++s)
    parent[s] = n;
  uint32_t head = 0, tail = 0;
  parent[dst] = dst;
  queue[tail++] = dst;
  bool reached = src == dst;
  while (!reached && head < tail) {
    uint32_t s = queue[head++];
    for (uint32_t e = 0; e < pipeline->edge_count && !reached; ++e) {
      const edge_desc_t *edge = &pipeline->edges[e];
      if (edge->src != s || edge->dst == HPVM_RT_PIPELINE_HOST || parent[edge->dst] != n)
        continue;
      parent[edge->dst] = s;
      queue[tail++] = edge->dst;
      reached = edge->dst == src;
    }
  }
  if (reached) {
    /* The cycle is src -> dst -> ... -> src; walk the parents back from src to dst. */
    uint32_t length = 0;
    for (uint32_t s = src; s != dst; s = parent[s])
      queue[length++] = s; /* queue is free now: reuse it for the reversed path */
    char path[512];
    size_t used = (size_t)snprintf(path, sizeof(path), "'%s' -> '%s'", stage_name(pipeline, src),
                                   stage_name(pipeline, dst));
    for (uint32_t i = length; i-- > 0 && used < sizeof(path);)
      used += (size_t)snprintf(path + used, sizeof(path) - used, " -> '%s'",
                               stage_name(pipeline, queue[i]));
    status = HPVM_STATUS(INVALID_ARGUMENT,
                         "edge %u:%u -> %u:%u closes a cycle of stages: %s; a streaming pipeline "
                         "must be acyclic (the stages on a cycle would wait for each other "
                         "forever)",
                         src, src_port, dst, dst_port, path);
  }
  hpvm_allocator_free(pipeline->allocator, queue);
  hpvm_allocator_free(pipeline->allocator, parent);
  return status;
}

hpvm_status_t hpvm_rt_pipeline_connect(hpvm_rt_pipeline_t *pipeline, uint32_t src,
                                       uint32_t src_port, uint32_t dst, uint32_t dst_port) {
  if (!pipeline)
    return HPVM_STATUS(INVALID_ARGUMENT, "pipeline is NULL");
  if (atomic_load(&pipeline->frozen))
    return HPVM_STATUS(FAILED_PRECONDITION, "pipeline was launched; it can no longer change");
  if (src == HPVM_RT_PIPELINE_HOST ? src_port != 0
                                   : src >= pipeline->stage_count ||
                                         src_port >= pipeline->stages[src].output_count)
    return HPVM_STATUS(INVALID_ARGUMENT, "edge source %u port %u does not exist", src, src_port);
  if (dst == HPVM_RT_PIPELINE_HOST ? dst_port != 0
                                   : dst >= pipeline->stage_count ||
                                         dst_port >= pipeline->stages[dst].input_count)
    return HPVM_STATUS(INVALID_ARGUMENT, "edge destination %u port %u does not exist", dst,
                       dst_port);
  size_t src_size = src == HPVM_RT_PIPELINE_HOST ? pipeline->input_size
                                                 : pipeline->stages[src].output_sizes[src_port];
  size_t dst_size = dst == HPVM_RT_PIPELINE_HOST ? pipeline->output_size
                                                 : pipeline->stages[dst].input_sizes[dst_port];
  if (src_size != dst_size)
    return HPVM_STATUS(INVALID_ARGUMENT, "edge %u:%u -> %u:%u carries %zu-byte items into a %zu-byte port",
                       src, src_port, dst, dst_port, src_size, dst_size);
  for (uint32_t i = 0; i < pipeline->edge_count; ++i)
    if (pipeline->edges[i].dst == dst && pipeline->edges[i].dst_port == dst_port)
      return HPVM_STATUS(INVALID_ARGUMENT, "input %u:%u is already fed", dst, dst_port);
  if (src != HPVM_RT_PIPELINE_HOST && dst != HPVM_RT_PIPELINE_HOST)
    HPVM_RETURN_IF_ERROR(check_no_cycle(pipeline, src, src_port, dst, dst_port));
  if (pipeline->edge_count == pipeline->edge_capacity) {
    uint32_t grown = pipeline->edge_capacity ? pipeline->edge_capacity * 2 : 8;
    HPVM_RETURN_IF_ERROR(hpvm_allocator_grow_array(pipeline->allocator, (void **)&pipeline->edges,
                                                   pipeline->edge_capacity, grown,
                                                   sizeof(edge_desc_t)));
    pipeline->edge_capacity = grown;
  }
  edge_desc_t edge = {src, src_port, dst, dst_port};
  pipeline->edges[pipeline->edge_count++] = edge;
  return NULL;
}

/*===--- running ----------------------------------------------------------===*/

static void stream_record_error(hpvm_rt_stream_t *stream, hpvm_status_t status) {
  pthread_mutex_lock(&stream->error_mutex);
  if (!stream->first_error)
    stream->first_error = status;
  else
    hpvm_status_free(status);
  pthread_mutex_unlock(&stream->error_mutex);
}

static void stream_cancel_rings(hpvm_rt_stream_t *stream) {
  if (!stream->rings) /* launch failed before the rings existed */
    return;
  for (uint32_t i = 0; i < stream->pipeline->edge_count; ++i)
    if (stream->rings[i])
      hpvm_stream_ring_cancel(stream->rings[i]);
}

/* What a host call reports once the pipeline stopped: the stage's error if there is one. */
static hpvm_status_t stream_stopped_status(hpvm_rt_stream_t *stream, const char *what) {
  pthread_mutex_lock(&stream->error_mutex);
  hpvm_status_t status = hpvm_status_clone(stream->first_error);
  pthread_mutex_unlock(&stream->error_mutex);
  if (status)
    return status;
  return HPVM_STATUS(CANCELLED, "%s: the stream was cancelled", what);
}

static hpvm_status_t stage_invoke(void *self, uint32_t version, hpvm_rt_device_t *device) {
  stage_run_t *run = self;
  return run->desc->versions[version].fn(run->desc->context, device, run->item, run->in_items,
                                         run->out_items);
}

/* Tells idle workers that a ring of the stream changed (an item, a free slot, a state).
 * Called after the change is published; pairs with worker_idle (a Dekker handshake: the
 * notifier publishes then reads `sleepers`, a sleeper counts itself then re-reads the rings,
 * both across seq_cst fences, so one of the two always sees the other). */
static void stream_notify(hpvm_rt_stream_t *stream) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&stream->sleepers, memory_order_relaxed) == 0)
    return;
  pthread_mutex_lock(&stream->wake_mutex);
  atomic_fetch_add(&stream->generation, 1);
  pthread_cond_broadcast(&stream->wake);
  pthread_mutex_unlock(&stream->wake_mutex);
}

/* How a stage ends.  Every way out releases both neighbours so that nothing upstream or
 * downstream can stay blocked on this stage:
 *  - END: an input ended. Abandon the other inputs (their producers drop items instead of
 *    blocking), close the outputs (consumers drain what we pushed, then see the end).
 *  - STOPPED: a ring was cancelled (host cancel, or a failure upstream/downstream) or our body
 *    failed. Cancel the inputs (producers stop) but still close the outputs, so items already
 *    pushed reach the host before it sees the error. */
typedef enum stage_exit_e { STAGE_END, STAGE_STOPPED } stage_exit_t;

static void stage_finish(stage_run_t *run, stage_exit_t how) {
  const stage_desc_t *desc = run->desc;
  for (uint32_t i = 0; i < desc->input_count; ++i) {
    if (how == STAGE_END)
      hpvm_stream_ring_abandon(run->inputs[i]);
    else
      hpvm_stream_ring_cancel(run->inputs[i]);
  }
  for (uint32_t port = 0; port < desc->output_count; ++port)
    for (uint32_t k = run->output_begin[port]; k < run->output_begin[port + 1]; ++k)
      hpvm_stream_ring_close(run->output_rings[k]);
  atomic_store(&run->finished, true);
  atomic_fetch_sub(&run->stream->stages_left, 1);
}

/* What a stage can do now, from its rings alone: fire, end, or nothing until a ring changes.
 * `owner`: the worker that claimed the stage asks (exact, and cheap: the rings' cached
 * indices); otherwise any worker asks, from what is published (a hint).  An input at its
 * end ends the stage even while another is empty: a stage fires only with an item on every
 * input, so nothing that arrives later could fire it. */
typedef enum stage_readiness_e { STAGE_WAITS, STAGE_FIRES, STAGE_ENDS, STAGE_STOPS } stage_readiness_t;

static stage_readiness_t stage_readiness(const stage_run_t *run, bool owner) {
  const stage_desc_t *desc = run->desc;
  bool waits = false;
  for (uint32_t i = 0; i < desc->input_count; ++i) {
    hpvm_stream_result_t result = owner ? hpvm_stream_ring_poll_pop(run->inputs[i])
                                        : hpvm_stream_ring_peek_pop(run->inputs[i]);
    if (result == HPVM_STREAM_CLOSED)
      return STAGE_ENDS;
    if (result == HPVM_STREAM_CANCELLED)
      return STAGE_STOPS;
    waits |= result == HPVM_STREAM_WOULD_BLOCK;
  }
  if (waits)
    return STAGE_WAITS;
  for (uint32_t k = 0; k < run->output_begin[desc->output_count]; ++k) {
    hpvm_stream_result_t result = owner ? hpvm_stream_ring_poll_push(run->output_rings[k])
                                        : hpvm_stream_ring_peek_push(run->output_rings[k]);
    if (result == HPVM_STREAM_WOULD_BLOCK)
      return STAGE_WAITS;
    if (result != HPVM_STREAM_OK) /* only a cancel: we alone close our outputs */
      return STAGE_STOPS;
  }
  return STAGE_FIRES;
}

/* Fires the stage once; every ring was seen ready, so nothing here waits.  Pushes and pops
 * are deferred (stage_publish makes them visible). */
static bool stage_fire(stage_run_t *run) {
  hpvm_rt_stream_t *stream = run->stream;
  const stage_desc_t *desc = run->desc;
  for (uint32_t i = 0; i < desc->input_count; ++i)
    if (hpvm_stream_ring_begin_pop(run->inputs[i], &run->in_items[i]) != HPVM_STREAM_OK)
      return false;
  for (uint32_t port = 0; port < desc->output_count; ++port) {
    uint32_t begin = run->output_begin[port];
    if (begin == run->output_begin[port + 1])
      run->out_items[port] = run->scratch[port];
    else if (hpvm_stream_ring_begin_push(run->output_rings[begin], &run->out_items[port]) !=
             HPVM_STREAM_OK)
      return false;
  }
  atomic_fetch_add_explicit(&stream->running_stages, 1, memory_order_relaxed);
  hpvm_status_t status = stream->runner.run(stream->runner.self, desc->name, desc->version_devices,
                                            desc->version_count, run->item, stage_invoke, run);
  atomic_fetch_sub_explicit(&stream->running_stages, 1, memory_order_relaxed);
  if (status) {
    /* Recorded before our outputs close, so the host sees this error, not a plain end. */
    stream_record_error(stream, hpvm_status_annotate(status, "stage '%s' item %lld",
                                                     desc->name ? desc->name : "?",
                                                     (long long)run->item));
    return false;
  }
  for (uint32_t port = 0; port < desc->output_count; ++port) {
    uint32_t begin = run->output_begin[port], end = run->output_begin[port + 1];
    if (begin == end)
      continue;
    hpvm_stream_ring_end_push_deferred(run->output_rings[begin]);
    /* Fan-out: every further consumer gets its own copy (copy semantics of HPVM edges). */
    for (uint32_t k = begin + 1; k < end; ++k) {
      void *slot;
      if (hpvm_stream_ring_begin_push(run->output_rings[k], &slot) != HPVM_STREAM_OK)
        return false;
      memcpy(slot, run->out_items[port], desc->output_sizes[port]);
      hpvm_stream_ring_end_push_deferred(run->output_rings[k]);
    }
  }
  for (uint32_t i = 0; i < desc->input_count; ++i)
    hpvm_stream_ring_end_pop_deferred(run->inputs[i]);
  run->item++;
  return true;
}

/* Items a worker fires from one stage before it looks at the others again: long enough to
 * keep the stage's code and data hot, short enough that downstream stages (which free the
 * slots upstream ones need) are not starved. */
#define STAGE_BATCH 16
#define STAGE_PAUSES 8

/* Makes the stage's deferred pushes and pops visible and tells idle workers. */
static void stage_publish(stage_run_t *run) {
  const stage_desc_t *desc = run->desc;
  for (uint32_t k = 0; k < run->output_begin[desc->output_count]; ++k)
    hpvm_stream_ring_flush_push(run->output_rings[k]);
  for (uint32_t i = 0; i < desc->input_count; ++i)
    hpvm_stream_ring_flush_pop(run->inputs[i]);
  stream_notify(run->stream);
}

/* A firing that took this long is published at once: next to it a publication costs
 * nothing, and the next stage (perhaps on an idle worker) should not wait for a batch. */
#define STAGE_PUBLISH_NOW_NS 2000

/* After one firing within a batch: publish now if the firing was long or someone waits for
 * it (a worker asleep could fire the next stage; a consumer asleep on a ring, such as the
 * host popping), otherwise at the end of the batch: one shared index update per batch
 * instead of per item is what makes small items cheap. */
static void stage_publish_if_wanted(stage_run_t *run, uint64_t fire_ns) {
  if (fire_ns >= STAGE_PUBLISH_NOW_NS ||
      atomic_load_explicit(&run->stream->sleepers, memory_order_relaxed) != 0) {
    stage_publish(run);
    return;
  }
  const stage_desc_t *desc = run->desc;
  for (uint32_t k = 0; k < run->output_begin[desc->output_count]; ++k)
    if (hpvm_stream_ring_consumer_sleeps(run->output_rings[k]))
      hpvm_stream_ring_flush_push(run->output_rings[k]);
}

/* Fires a stage that this worker claimed while it is ready (at most STAGE_BATCH items), or
 * ends it; publishes everything before it returns.  Returns whether any ring changed. */
static bool stage_run_batch(stage_run_t *run) {
  if (atomic_load_explicit(&run->finished, memory_order_relaxed))
    return false;
  uint32_t pauses = 0;
  for (uint32_t fired = 0; fired < STAGE_BATCH;) {
    switch (stage_readiness(run, true)) {
    case STAGE_WAITS:
      /* The next item is usually a stage body away on another core: publish what we have
       * (it may be what the others wait for) and look again a few times before letting go
       * of the stage, which costs a claim, a scan and cache misses on the next. */
      stage_publish(run);
      if (pauses++ < STAGE_PAUSES) {
        hpvm_platform_cpu_relax();
        break;
      }
      return fired > 0;
    case STAGE_ENDS:
      stage_publish(run);
      stage_finish(run, STAGE_END);
      return true;
    case STAGE_STOPS:
      stage_publish(run);
      stage_finish(run, STAGE_STOPPED);
      return true;
    case STAGE_FIRES: {
      uint64_t start = hpvm_platform_now_ns();
      if (!stage_fire(run)) {
        stage_publish(run);
        stage_finish(run, STAGE_STOPPED);
        return true;
      }
      stage_publish_if_wanted(run, hpvm_platform_now_ns() - start);
      ++fired;
      break;
    }
    }
  }
  stage_publish(run);
  return true;
}

/* One pass over the stages, downstream first from `first` (draining frees the slots upstream
 * stages need, and keeps the items in flight moving); returns whether any ring changed.
 * Workers start at different stages, so that with a worker per stage each keeps firing its
 * own (its rings' indices and the stage's data stay in its cache) instead of all of them
 * contending for the last stage. */
static bool worker_pass(hpvm_rt_stream_t *stream, uint32_t first) {
  bool changed = false;
  uint32_t stages = stream->pipeline->stage_count;
  for (uint32_t step = 0; step < stages; ++step) {
    stage_run_t *run = &stream->stages[(first + stages - step) % stages];
    if (atomic_load_explicit(&run->finished, memory_order_relaxed) ||
        atomic_load_explicit(&run->claimed, memory_order_relaxed) ||
        stage_readiness(run, false) == STAGE_WAITS)
      continue;
    if (atomic_exchange_explicit(&run->claimed, true, memory_order_acquire))
      continue;
    bool fired = stage_run_batch(run);
    atomic_store_explicit(&run->claimed, false, memory_order_release);
    if (fired) {
      stream_notify(stream); /* the stage is free again: another worker may take it */
      changed = true;
    }
  }
  return changed;
}

static bool any_stage_acts(hpvm_rt_stream_t *stream) {
  for (uint32_t s = 0; s < stream->pipeline->stage_count; ++s) {
    stage_run_t *run = &stream->stages[s];
    if (!atomic_load(&run->finished) && !atomic_load(&run->claimed) &&
        stage_readiness(run, false) != STAGE_WAITS)
      return true;
  }
  return false;
}

/* Nothing to fire: poll a little, then yield for a while (the host and the other workers
 * share the cores: a worker that spins holds the core the one about to give it an item
 * needs; spinning 1,000 pauses ran a 6-stage pipeline on 2 cores 3x slower than yielding),
 * then sleep until a ring of the stream changes. */
#define WORKER_IDLE_PAUSES 8
#define WORKER_IDLE_YIELDS 64

static void worker_idle(hpvm_rt_stream_t *stream) {
  for (uint32_t polls = 0; polls < WORKER_IDLE_PAUSES + WORKER_IDLE_YIELDS; ++polls) {
    if (polls < WORKER_IDLE_PAUSES)
      hpvm_platform_cpu_relax();
    else
      sched_yield();
    if (atomic_load(&stream->stages_left) == 0 || any_stage_acts(stream))
      return;
  }
  atomic_fetch_add(&stream->sleepers, 1);
  atomic_thread_fence(memory_order_seq_cst);
  uint64_t generation = atomic_load(&stream->generation);
  if (atomic_load(&stream->stages_left) != 0 && !any_stage_acts(stream)) {
    pthread_mutex_lock(&stream->wake_mutex);
    while (atomic_load(&stream->generation) == generation && atomic_load(&stream->stages_left))
      pthread_cond_wait(&stream->wake, &stream->wake_mutex);
    pthread_mutex_unlock(&stream->wake_mutex);
  }
  atomic_fetch_sub(&stream->sleepers, 1);
}

static void *worker_main(void *arg) {
  hpvm_rt_stream_t *stream = arg;
  if (stream->runner.bind_stage_thread)
    stream->runner.bind_stage_thread(stream->runner.self, &stream->running_stages);
  uint32_t index = atomic_fetch_add(&stream->worker_index, 1);
  uint32_t stages = stream->pipeline->stage_count;
  uint32_t first = stages - 1 - (uint32_t)((uint64_t)index * stages / stream->worker_count);
  while (atomic_load(&stream->stages_left) != 0)
    if (!worker_pass(stream, first))
      worker_idle(stream);
  stream_notify(stream); /* the last stage ended: wake the other workers so they exit */
  return NULL;
}

static void stage_run_release(hpvm_allocator_t allocator, stage_run_t *run) {
  if (run->scratch)
    for (uint32_t port = 0; port < run->desc->output_count; ++port)
      hpvm_allocator_free(allocator, run->scratch[port]);
  hpvm_allocator_free(allocator, run->scratch);
  hpvm_allocator_free(allocator, run->inputs);
  hpvm_allocator_free(allocator, run->output_rings);
  hpvm_allocator_free(allocator, run->output_begin);
  hpvm_allocator_free(allocator, (void *)run->in_items);
  hpvm_allocator_free(allocator, run->out_items);
}

/* Joins whatever started and frees everything; safe on a partially built stream. */
static void stream_free(hpvm_rt_stream_t *stream) {
  hpvm_rt_pipeline_t *pipeline = stream->pipeline;
  hpvm_allocator_t allocator = stream->allocator;
  for (uint32_t w = 0; w < stream->workers_started; ++w)
    pthread_join(stream->workers[w], NULL);
  hpvm_allocator_free(allocator, stream->workers);
  if (stream->stages) {
    for (uint32_t i = 0; i < pipeline->stage_count; ++i)
      if (stream->stages[i].desc)
        stage_run_release(allocator, &stream->stages[i]);
  }
  if (stream->rings)
    for (uint32_t i = 0; i < pipeline->edge_count; ++i)
      hpvm_stream_ring_destroy(stream->rings[i]);
  hpvm_allocator_free(allocator, stream->rings);
  hpvm_allocator_free(allocator, stream->stages);
  hpvm_allocator_free(allocator, stream->host_inputs);
  hpvm_status_free(stream->first_error);
  pthread_mutex_destroy(&stream->push_mutex);
  pthread_mutex_destroy(&stream->pop_mutex);
  pthread_mutex_destroy(&stream->error_mutex);
  pthread_mutex_destroy(&stream->wake_mutex);
  pthread_cond_destroy(&stream->wake);
  pipeline_release(pipeline);
  hpvm_allocator_free(allocator, stream);
}

static hpvm_status_t validate(const hpvm_rt_pipeline_t *pipeline) {
  for (uint32_t s = 0; s < pipeline->stage_count; ++s) {
    const stage_desc_t *stage = &pipeline->stages[s];
    if (stage->input_count == 0)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "stage '%s' has no inputs: a stage fires once per input item",
                         stage->name ? stage->name : "?");
    for (uint32_t port = 0; port < stage->input_count; ++port) {
      bool fed = false;
      for (uint32_t e = 0; e < pipeline->edge_count && !fed; ++e)
        fed = pipeline->edges[e].dst == s && pipeline->edges[e].dst_port == port;
      if (!fed)
        return HPVM_STATUS(INVALID_ARGUMENT, "input %u of stage '%s' is not connected", port,
                           stage->name ? stage->name : "?");
    }
  }
  bool output_fed = false;
  for (uint32_t e = 0; e < pipeline->edge_count; ++e)
    output_fed |= pipeline->edges[e].dst == HPVM_RT_PIPELINE_HOST;
  if (pipeline->output_size && !output_fed)
    return HPVM_STATUS(INVALID_ARGUMENT, "the host output (%zu-byte items) is not connected",
                       pipeline->output_size);
  return NULL;
}

static hpvm_status_t build_stage(hpvm_rt_stream_t *stream, uint32_t s) {
  hpvm_rt_pipeline_t *pipeline = stream->pipeline;
  hpvm_allocator_t allocator = stream->allocator;
  stage_run_t *run = &stream->stages[s];
  const stage_desc_t *desc = &pipeline->stages[s];
  run->stream = stream;
  run->desc = desc;
  uint32_t inputs = desc->input_count ? desc->input_count : 1;
  uint32_t outputs = desc->output_count ? desc->output_count : 1;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, inputs, sizeof(void *),
                                                   (void **)&run->inputs));
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, inputs, sizeof(void *),
                                                   (void **)&run->in_items));
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, outputs, sizeof(void *),
                                                   (void **)&run->out_items));
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, outputs, sizeof(void *),
                                                   (void **)&run->scratch));
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, (size_t)desc->output_count + 1,
                                                   sizeof(uint32_t), (void **)&run->output_begin));
  uint32_t fan_out = 0;
  for (uint32_t e = 0; e < pipeline->edge_count; ++e)
    fan_out += pipeline->edges[e].src == s;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, fan_out ? fan_out : 1,
                                                   sizeof(void *), (void **)&run->output_rings));
  uint32_t next = 0;
  for (uint32_t port = 0; port < desc->output_count; ++port) {
    run->output_begin[port] = next;
    for (uint32_t e = 0; e < pipeline->edge_count; ++e)
      if (pipeline->edges[e].src == s && pipeline->edges[e].src_port == port)
        run->output_rings[next++] = stream->rings[e];
    if (run->output_begin[port] == next)
      HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(allocator, desc->output_sizes[port],
                                                 &run->scratch[port]));
  }
  run->output_begin[desc->output_count] = next;
  for (uint32_t e = 0; e < pipeline->edge_count; ++e)
    if (pipeline->edges[e].dst == s)
      run->inputs[pipeline->edges[e].dst_port] = stream->rings[e];
  return NULL;
}

hpvm_status_t hpvm_stream_launch(const hpvm_rt_pipeline_t *const_pipeline,
                                 hpvm_sched_runner_t runner, uint32_t thread_count,
                                 hpvm_rt_stream_t **out_stream) {
  *out_stream = NULL;
  if (!const_pipeline)
    return HPVM_STATUS(INVALID_ARGUMENT, "pipeline is NULL");
  /* The description is logically const; a stream only retains it (reference count) and
   * freezes it, which are the "mutable" parts. */
  hpvm_rt_pipeline_t *pipeline = (hpvm_rt_pipeline_t *)(uintptr_t)const_pipeline;
  HPVM_RETURN_IF_ERROR(validate(pipeline));
  hpvm_allocator_t allocator = pipeline->allocator;
  hpvm_rt_stream_t *stream;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*stream), (void **)&stream));
  atomic_store(&pipeline->frozen, true);
  atomic_fetch_add(&pipeline->references, 1);
  stream->allocator = allocator;
  stream->pipeline = pipeline;
  stream->runner = runner;
  pthread_mutex_init(&stream->push_mutex, NULL);
  pthread_mutex_init(&stream->pop_mutex, NULL);
  pthread_mutex_init(&stream->error_mutex, NULL);
  pthread_mutex_init(&stream->wake_mutex, NULL);
  pthread_cond_init(&stream->wake, NULL);

  uint32_t edges = pipeline->edge_count;
  hpvm_status_t status = hpvm_allocator_calloc_array(allocator, edges ? edges : 1, sizeof(void *),
                                                     (void **)&stream->rings);
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, edges ? edges : 1, sizeof(void *),
                                         (void **)&stream->host_inputs);
  for (uint32_t e = 0; !status && e < edges; ++e) {
    const edge_desc_t *edge = &pipeline->edges[e];
    size_t size = edge->src == HPVM_RT_PIPELINE_HOST ? pipeline->input_size
                                                     : pipeline->stages[edge->src].output_sizes[edge->src_port];
    status = hpvm_stream_ring_create(allocator, size, pipeline->capacity, &stream->rings[e]);
    if (!status && edge->src == HPVM_RT_PIPELINE_HOST)
      stream->host_inputs[stream->host_input_count++] = stream->rings[e];
    if (!status && edge->dst == HPVM_RT_PIPELINE_HOST)
      stream->host_output = stream->rings[e];
  }
  if (!status && pipeline->stage_count)
    status = hpvm_allocator_calloc_array(allocator, pipeline->stage_count, sizeof(stage_run_t),
                                         (void **)&stream->stages);
  for (uint32_t s = 0; !status && s < pipeline->stage_count; ++s)
    status = build_stage(stream, s);
  /* As many workers as stages, but no more than the runtime's threads: more would only take
   * turns on the cores (a 6-stage pipeline on 2 cores with a thread per stage switched
   * threads ~10 times per item). */
  uint32_t workers = pipeline->stage_count < thread_count ? pipeline->stage_count : thread_count;
  if (workers == 0)
    workers = 1;
  atomic_store(&stream->stages_left, pipeline->stage_count);
  stream->worker_count = workers;
  if (!status)
    status = hpvm_allocator_calloc_array(allocator, workers, sizeof(pthread_t),
                                         (void **)&stream->workers);
  for (uint32_t w = 0; !status && w < workers && pipeline->stage_count; ++w) {
    int error = pthread_create(&stream->workers[w], NULL, worker_main, stream);
    if (error)
      status = HPVM_STATUS(RESOURCE_EXHAUSTED, "cannot start stream worker %u: %s", w,
                           strerror(error));
    else
      stream->workers_started++;
  }
  if (status) {
    stream_cancel_rings(stream);
    stream_free(stream);
    return status;
  }
  *out_stream = stream;
  return NULL;
}

hpvm_status_t hpvm_rt_stream_push(hpvm_rt_stream_t *stream, const void *item) {
  if (!stream || (!item && stream->pipeline->input_size))
    return HPVM_STATUS(INVALID_ARGUMENT, "push needs a stream and an item");
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&stream->push_mutex);
  if (stream->input_closed)
    status = HPVM_STATUS(FAILED_PRECONDITION, "push after the input was closed");
  for (uint32_t i = 0; !status && i < stream->host_input_count; ++i)
    if (hpvm_stream_ring_push(stream->host_inputs[i], item) != HPVM_STREAM_OK)
      status = stream_stopped_status(stream, "push");
  pthread_mutex_unlock(&stream->push_mutex);
  stream_notify(stream);
  return status;
}

hpvm_status_t hpvm_rt_stream_pop(hpvm_rt_stream_t *stream, void *out_item) {
  if (!stream || (!out_item && stream->pipeline->output_size))
    return HPVM_STATUS(INVALID_ARGUMENT, "pop needs a stream and an output buffer");
  if (!stream->host_output)
    return HPVM_STATUS(FAILED_PRECONDITION, "the stream has no host output to pop");
  pthread_mutex_lock(&stream->pop_mutex);
  hpvm_stream_result_t result = hpvm_stream_ring_pop(stream->host_output, out_item);
  pthread_mutex_unlock(&stream->pop_mutex);
  stream_notify(stream); /* a free slot: the last stage may fire */
  if (result == HPVM_STREAM_OK)
    return NULL;
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&stream->error_mutex);
  status = hpvm_status_clone(stream->first_error);
  pthread_mutex_unlock(&stream->error_mutex);
  if (status)
    return status;
  if (result == HPVM_STREAM_CLOSED)
    return HPVM_STATUS(OUT_OF_RANGE, "end of stream");
  return HPVM_STATUS(CANCELLED, "pop: the stream was cancelled");
}

void hpvm_rt_stream_close_input(hpvm_rt_stream_t *stream) {
  if (!stream)
    return;
  pthread_mutex_lock(&stream->push_mutex);
  if (!stream->input_closed) {
    stream->input_closed = true;
    for (uint32_t i = 0; i < stream->host_input_count; ++i)
      hpvm_stream_ring_close(stream->host_inputs[i]);
  }
  pthread_mutex_unlock(&stream->push_mutex);
  stream_notify(stream);
}

void hpvm_rt_stream_cancel(hpvm_rt_stream_t *stream) {
  if (stream) {
    stream_cancel_rings(stream);
    stream_notify(stream);
  }
}

hpvm_status_t hpvm_rt_stream_wait(hpvm_rt_stream_t *stream) {
  if (!stream)
    return HPVM_STATUS(INVALID_ARGUMENT, "stream is NULL");
  hpvm_rt_stream_close_input(stream);
  if (stream->host_output) {
    /* Outputs nobody will pop must not block the last stage: drain and drop them. */
    pthread_mutex_lock(&stream->pop_mutex);
    const void *slot;
    while (hpvm_stream_ring_begin_pop(stream->host_output, &slot) == HPVM_STREAM_OK) {
      hpvm_stream_ring_end_pop(stream->host_output);
      stream_notify(stream);
    }
    pthread_mutex_unlock(&stream->pop_mutex);
  }
  for (uint32_t w = 0; w < stream->workers_started; ++w)
    pthread_join(stream->workers[w], NULL);
  stream->workers_started = 0;
  hpvm_status_t status = stream->first_error;
  stream->first_error = NULL;
  stream_free(stream);
  return status;
}
