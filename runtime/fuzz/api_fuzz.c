/* api_fuzz.c - libFuzzer target: random sequences of hpvm_rt.h calls with random arguments.
 *
 * Each input is a little program: every op reads an opcode and its arguments from the bytes.
 * The target keeps a model of what should be live (device buffers with their contents, tracked
 * host ranges) and checks every status against it:
 *  - every copy the runtime accepts lies inside its allocation, and every copy that would leave
 *    it is OUT_OF_RANGE (ASan checks the memory side; the model checks the status and data);
 *  - a free succeeds exactly for live handles of hpvm_rt_device_alloc;
 *  - tracker answers match the model of tracked ranges;
 *  - parallel-for runs every instance once; task graphs respect their edges and refuse cycles;
 *  - pipeline connects that succeed keep the stage graph acyclic, refused cycles are cycles, and
 *    launched streams deliver every pushed item or the stage's error, without hanging;
 *  - no status leaks: the runtime is shut down after every input, so LeakSanitizer sees any
 *    status or object that outlived its input.
 * A mismatch prints both sides and aborts, which libFuzzer reports as a crash. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpvm/hpvm_rt.h"

/*===--- input reader ------------------------------------------------------===*/

typedef struct reader_t {
  const uint8_t *data;
  size_t size, at;
} reader_t;

static uint8_t take_u8(reader_t *in) { return in->at < in->size ? in->data[in->at++] : 0; }
static uint32_t take_u32(reader_t *in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value = value << 8 | take_u8(in);
  return value;
}

/* Sizes and offsets worth trying around `limit` (an allocation's size): the edges, and values
 * whose sums wrap around. */
static size_t take_size(reader_t *in, size_t limit) {
  switch (take_u8(in) % 10) {
  case 0: return 0;
  case 1: return 1;
  case 2: return limit;
  case 3: return limit + 1;
  case 4: return limit ? limit - 1 : 0;
  case 5: return SIZE_MAX;
  case 6: return SIZE_MAX - 4;
  case 7: return (size_t)1 << (take_u8(in) % 64);
  case 8: return limit / 2;
  default: return take_u8(in);
  }
}

/*===--- checking ----------------------------------------------------------===*/

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "api_fuzz: invariant broken: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
  abort();
}

/* Consumes `status`, which must have `code` (and a message naming something when an error). */
static void expect(hpvm_status_t status, hpvm_status_code_t code, const char *what) {
  hpvm_status_code_t got = hpvm_status_code(status);
  if (got != code)
    fail("%s returned %s (%s), expected %s", what, hpvm_status_code_name(got),
         hpvm_status_message(status), hpvm_status_code_name(code));
  if (status && !*hpvm_status_message(status))
    fail("%s returned %s without a message", what, hpvm_status_code_name(got));
  hpvm_status_free(status);
}

/* Consumes `status`, which may be anything but must carry a message when it is an error. */
static hpvm_status_code_t consume(hpvm_status_t status) {
  hpvm_status_code_t code = hpvm_status_code(status);
  if (status && !*hpvm_status_message(status))
    fail("status %s without a message", hpvm_status_code_name(code));
  hpvm_status_free(status);
  return code;
}

/*===--- model -------------------------------------------------------------===*/

enum { MAX_BUFFERS = 16, MAX_ALLOC = 4096, ARENA = 4096, MAX_TRACKED = 16 };

typedef struct buffer_t {
  uint64_t handle;
  size_t size;
  uint8_t *shadow; /* what the buffer must hold (the bytes copied in so far; 0 elsewhere) */
  bool written;    /* whether shadow is known (device memory starts undefined) */
} buffer_t;

typedef struct model_t {
  hpvm_rt_device_t *cpu;
  buffer_t buffers[MAX_BUFFERS];
  uint64_t freed[MAX_BUFFERS]; /* stale handles to retry */
  uint32_t freed_count;
  struct {
    size_t offset, size;
  } tracked[MAX_TRACKED];
  uint32_t tracked_count;
} model_t;

static uint8_t arena[ARENA];       /* host memory the tracker tracks */
static uint8_t source[MAX_ALLOC];  /* copy sources */
static uint8_t target[MAX_ALLOC];  /* copy targets */

static buffer_t *live_buffer(model_t *model, uint64_t handle) {
  for (int i = 0; i < MAX_BUFFERS; ++i)
    if (model->buffers[i].handle && model->buffers[i].handle == handle)
      return &model->buffers[i];
  return NULL;
}

/* A handle to try: mostly live ones, sometimes stale, interior or made-up ones. */
static uint64_t take_handle(reader_t *in, model_t *model) {
  uint8_t choice = take_u8(in);
  buffer_t *buffer = &model->buffers[(choice >> 2) % MAX_BUFFERS];
  switch (choice & 3) {
  case 0:
  case 1:
    return buffer->handle ? buffer->handle : 0x1000;
  case 2:
    return model->freed_count ? model->freed[(choice >> 2) % model->freed_count] : 0xdead0;
  default:
    return buffer->handle ? buffer->handle + 1 + take_u8(in) % 16 : (uint64_t)take_u32(in) << 4;
  }
}

static void op_alloc(reader_t *in, model_t *model) {
  size_t size = take_size(in, MAX_ALLOC);
  if (size > MAX_ALLOC) /* huge sizes would only test malloc (and abort under ASan) */
    size = MAX_ALLOC;
  int slot = take_u8(in) % MAX_BUFFERS;
  if (model->buffers[slot].handle)
    return;
  uint64_t handle = 0;
  hpvm_status_t status = hpvm_rt_device_alloc(model->cpu, size, &handle);
  if (size == 0) {
    expect(status, HPVM_STATUS_INVALID_ARGUMENT, "device_alloc(0)");
    return;
  }
  expect(status, HPVM_STATUS_OK, "device_alloc");
  if (!handle || live_buffer(model, handle))
    fail("device_alloc returned handle 0x%llx, which is 0 or already live",
         (unsigned long long)handle);
  buffer_t *buffer = &model->buffers[slot];
  buffer->handle = handle;
  buffer->size = size;
  buffer->shadow = calloc(size, 1);
  buffer->written = false;
}

static void forget_buffer(model_t *model, buffer_t *buffer) {
  if (model->freed_count < MAX_BUFFERS)
    model->freed[model->freed_count++] = buffer->handle;
  else
    model->freed[buffer->handle % MAX_BUFFERS] = buffer->handle;
  free(buffer->shadow);
  memset(buffer, 0, sizeof(*buffer));
}

static void op_free(reader_t *in, model_t *model) {
  uint64_t handle = take_handle(in, model);
  buffer_t *buffer = live_buffer(model, handle);
  hpvm_status_t status = hpvm_rt_device_free(model->cpu, handle);
  if (buffer) {
    expect(status, HPVM_STATUS_OK, "device_free of a live buffer");
    forget_buffer(model, buffer);
  } else {
    expect(status, handle ? HPVM_STATUS_NOT_FOUND : HPVM_STATUS_OK, "device_free of a dead handle");
  }
}

static bool in_range(const buffer_t *buffer, size_t offset, size_t size) {
  return buffer && offset <= buffer->size && size <= buffer->size - offset;
}

static void op_copy(reader_t *in, model_t *model, bool to_device) {
  uint64_t handle = take_handle(in, model);
  buffer_t *buffer = live_buffer(model, handle);
  size_t limit = buffer ? buffer->size : 64;
  size_t offset = take_size(in, limit), size = take_size(in, limit);
  uint8_t fill = take_u8(in);
  hpvm_status_code_t expected = !handle          ? HPVM_STATUS_INVALID_ARGUMENT
                                : !buffer        ? HPVM_STATUS_NOT_FOUND
                                : !in_range(buffer, offset, size) ? HPVM_STATUS_OUT_OF_RANGE
                                                                  : HPVM_STATUS_OK;
  if (to_device) {
    memset(source, fill, sizeof(source));
    expect(hpvm_rt_device_copy_to_device(model->cpu, handle, offset, source, size), expected,
           "copy_to_device");
    if (expected == HPVM_STATUS_OK) {
      memset(buffer->shadow + offset, fill, size);
      buffer->written |= offset == 0 && size == buffer->size;
    }
  } else {
    memset(target, fill ^ 0x5a, sizeof(target));
    expect(hpvm_rt_device_copy_to_host(model->cpu, target, handle, offset, size), expected,
           "copy_to_host");
    if (expected == HPVM_STATUS_OK && buffer->written &&
        memcmp(target, buffer->shadow + offset, size) != 0)
      fail("copy_to_host of %zu bytes at %zu returned other data than was copied in", size,
           offset);
    for (size_t i = size; expected == HPVM_STATUS_OK && i < sizeof(target); ++i)
      if (target[i] != (uint8_t)(fill ^ 0x5a))
        fail("copy_to_host of %zu bytes wrote past them (byte %zu)", size, i);
  }
}

/*===--- tracker -----------------------------------------------------------===*/

/* Index of the tracked range containing arena offset `at`, or -1. */
static int tracked_at(const model_t *model, size_t at) {
  for (uint32_t i = 0; i < model->tracked_count; ++i)
    if (at >= model->tracked[i].offset && at - model->tracked[i].offset < model->tracked[i].size)
      return (int)i;
  return -1;
}

static void op_track(reader_t *in, model_t *model) {
  size_t offset = take_u32(in) % ARENA;
  size_t size = take_size(in, 64);
  if (size > ARENA - offset) /* outside the arena would be tracking memory we do not own */
    size = ARENA - offset;
  hpvm_status_code_t expected = HPVM_STATUS_OK;
  if (size == 0) {
    expected = HPVM_STATUS_INVALID_ARGUMENT;
  } else {
    for (uint32_t i = 0; i < model->tracked_count; ++i) {
      size_t begin = model->tracked[i].offset, end = begin + model->tracked[i].size;
      if (begin == offset)
        expected = HPVM_STATUS_ALREADY_EXISTS;
      else if (expected == HPVM_STATUS_OK && offset < end && begin < offset + size)
        expected = HPVM_STATUS_INVALID_ARGUMENT;
    }
  }
  if (expected == HPVM_STATUS_OK && model->tracked_count == MAX_TRACKED)
    return;
  expect(hpvm_rt_track(arena + offset, size), expected, "track");
  if (expected == HPVM_STATUS_OK) {
    model->tracked[model->tracked_count].offset = offset;
    model->tracked[model->tracked_count].size = size;
    model->tracked_count++;
  }
}

static void op_untrack(reader_t *in, model_t *model) {
  size_t offset = take_u8(in) & 1 && model->tracked_count
                      ? model->tracked[take_u8(in) % model->tracked_count].offset
                      : take_u32(in) % ARENA;
  int index = -1;
  for (uint32_t i = 0; i < model->tracked_count; ++i)
    if (model->tracked[i].offset == offset)
      index = (int)i;
  expect(hpvm_rt_untrack(arena + offset), index >= 0 ? HPVM_STATUS_OK : HPVM_STATUS_NOT_FOUND,
         "untrack");
  if (index >= 0)
    model->tracked[index] = model->tracked[--model->tracked_count];
}

static void op_request(reader_t *in, model_t *model, bool device) {
  size_t offset = take_u32(in) % ARENA;
  int index = tracked_at(model, offset);
  size_t left = index >= 0 ? model->tracked[index].size - (offset - model->tracked[index].offset) : 0;
  size_t size = take_size(in, left);
  int access = take_u8(in) % 4; /* 0 is not an access mode */
  hpvm_status_code_t expected = access == 0 ? HPVM_STATUS_INVALID_ARGUMENT
                                : index < 0 ? HPVM_STATUS_NOT_FOUND
                                : size > left ? HPVM_STATUS_OUT_OF_RANGE
                                              : HPVM_STATUS_OK;
  if (!device) {
    expect(hpvm_rt_request_host(arena + offset, size, (hpvm_rt_access_t)access), expected,
           "request_host");
    return;
  }
  uint64_t handle = 0;
  size_t out_offset = 0;
  expect(hpvm_rt_request_device(arena + offset, size, model->cpu, (hpvm_rt_access_t)access,
                                &handle, &out_offset),
         expected, "request_device");
  /* On the CPU the device copy is the host object itself. */
  if (expected == HPVM_STATUS_OK &&
      (handle != (uint64_t)(uintptr_t)(arena + model->tracked[index].offset) ||
       out_offset != offset - model->tracked[index].offset))
    fail("request_device on the cpu returned handle 0x%llx offset %zu", (unsigned long long)handle,
         out_offset);
}

/*===--- parallel-for, graphs, launches ------------------------------------===*/

typedef struct count_t {
  _Atomic int64_t instances;
  _Atomic int64_t bad;
} count_t;

static void count_body(void *context, const hpvm_rt_instance_range_t *range) {
  count_t *count = context;
  int64_t boxes = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    if (range->begin[d] < 0 || range->begin[d] > range->end[d] || range->end[d] > range->extent[d])
      atomic_fetch_add(&count->bad, 1);
    boxes *= range->end[d] - range->begin[d];
  }
  atomic_fetch_add(&count->instances, boxes);
}

static void op_parallel_for(reader_t *in) {
  uint32_t rank = take_u8(in) % 5;
  int64_t extents[4] = {0};
  int64_t total = 1;
  bool negative = false;
  for (int d = 0; d < 4; ++d) {
    int8_t raw = (int8_t)take_u8(in);
    extents[d] = raw % 20; /* keep grids small: the point is the call, not the work */
    if (d < (int)rank) {
      negative |= extents[d] < 0;
      total *= extents[d];
    }
  }
  count_t count = {0, 0};
  hpvm_status_code_t expected = rank < 1 || rank > 3 || negative ? HPVM_STATUS_INVALID_ARGUMENT
                                                                 : HPVM_STATUS_OK;
  expect(hpvm_rt_parallel_for(rank, extents, count_body, &count), expected, "parallel_for");
  if (expected == HPVM_STATUS_OK && (atomic_load(&count.instances) != total || count.bad))
    fail("parallel_for of %lld instances ran %lld (%lld bad boxes)", (long long)total,
         (long long)atomic_load(&count.instances), (long long)atomic_load(&count.bad));
}

enum { MAX_NODES = 8 };
typedef struct graph_state_t {
  _Atomic int64_t clock;
  int64_t started[MAX_NODES], finished[MAX_NODES];
  uint8_t fail_mask;
} graph_state_t;
typedef struct node_context_t {
  graph_state_t *state;
  uint32_t index;
} node_context_t;

static hpvm_status_t graph_node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)device;
  (void)item;
  node_context_t *node = context;
  graph_state_t *state = node->state;
  state->started[node->index] = atomic_fetch_add(&state->clock, 1) + 1;
  state->finished[node->index] = atomic_fetch_add(&state->clock, 1) + 1;
  if (state->fail_mask >> node->index & 1)
    return hpvm_status_create(HPVM_STATUS_ABORTED, "node %u fails on purpose", node->index);
  return NULL;
}

static void op_graph(reader_t *in) {
  uint32_t nodes = take_u8(in) % MAX_NODES;
  graph_state_t state;
  memset(&state, 0, sizeof(state));
  state.fail_mask = take_u8(in) & take_u8(in); /* failures are rarer than successes */
  node_context_t contexts[MAX_NODES];
  hpvm_rt_graph_t *graph = NULL;
  expect(hpvm_rt_graph_create(nodes, &graph), HPVM_STATUS_OK, "graph_create");
  /* Versions: CPU, sometimes a CUDA one first (the policy must fall back or report). */
  hpvm_rt_node_version_t versions[2] = {{HPVM_RT_DEVICE_CUDA, graph_node},
                                        {HPVM_RT_DEVICE_CPU, graph_node}};
  for (uint32_t n = 0; n < nodes; ++n) {
    contexts[n].state = &state;
    contexts[n].index = n;
    char name[8];
    snprintf(name, sizeof(name), "n%u", n);
    bool gpu = take_u8(in) & 1;
    uint32_t index = UINT32_MAX;
    expect(hpvm_rt_graph_add_node(graph, name, gpu ? versions : versions + 1, gpu ? 2 : 1,
                                  &contexts[n], &index),
           HPVM_STATUS_OK, "graph_add_node");
    if (index != n)
      fail("graph_add_node returned index %u for node %u", index, n);
  }
  expect(hpvm_rt_graph_add_node(graph, "bad", versions, 0, NULL, &(uint32_t){0}),
         HPVM_STATUS_INVALID_ARGUMENT, "graph_add_node without versions");
  uint8_t edges[MAX_NODES][MAX_NODES];
  memset(edges, 0, sizeof(edges));
  uint32_t edge_count = take_u8(in) % 12;
  for (uint32_t e = 0; e < edge_count; ++e) {
    uint32_t src = take_u8(in) % (MAX_NODES + 1), dst = take_u8(in) % (MAX_NODES + 1);
    hpvm_status_t status = hpvm_rt_graph_add_edge(graph, src, dst);
    if (src >= nodes || dst >= nodes || src == dst) {
      expect(status, HPVM_STATUS_INVALID_ARGUMENT, "graph_add_edge out of range or self");
    } else {
      expect(status, HPVM_STATUS_OK, "graph_add_edge");
      edges[src][dst] = 1;
    }
  }
  /* Cyclic iff a topological peel leaves nodes behind. */
  uint32_t indegree[MAX_NODES] = {0}, removed = 0;
  bool gone[MAX_NODES] = {false};
  for (uint32_t s = 0; s < nodes; ++s)
    for (uint32_t d = 0; d < nodes; ++d)
      indegree[d] += edges[s][d];
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t n = 0; n < nodes; ++n)
      if (!gone[n] && indegree[n] == 0) {
        gone[n] = progress = true;
        removed++;
        for (uint32_t d = 0; d < nodes; ++d)
          indegree[d] -= edges[n][d];
      }
  }
  hpvm_status_t status = hpvm_rt_graph_run(graph);
  hpvm_status_code_t code = hpvm_status_code(status);
  if (removed < nodes) {
    expect(status, HPVM_STATUS_INVALID_ARGUMENT, "graph_run of a cyclic graph");
  } else {
    bool any_failure = false;
    for (uint32_t n = 0; n < nodes; ++n)
      any_failure |= state.fail_mask >> n & 1;
    /* CUDA versions: the dynamic policy runs the CPU version when CUDA is missing; other
     * policies may report UNAVAILABLE.  Either way: a node runs at most once, after its
     * predecessors finished, and nothing runs after a reported failure's dependants. */
    if (code != HPVM_STATUS_OK && code != HPVM_STATUS_ABORTED && code != HPVM_STATUS_UNAVAILABLE)
      fail("graph_run returned %s (%s)", hpvm_status_code_name(code), hpvm_status_message(status));
    if (code == HPVM_STATUS_ABORTED && !any_failure)
      fail("graph_run reported a node failure though none failed");
    consume(status);
    for (uint32_t s = 0; s < nodes; ++s)
      for (uint32_t d = 0; d < nodes; ++d)
        if (edges[s][d] && state.started[d] && (!state.finished[s] || state.finished[s] > state.started[d]))
          fail("node %u started before its predecessor %u finished", d, s);
  }
  hpvm_rt_graph_destroy(graph);
}

static hpvm_status_t launch_root(void *args) {
  int64_t extents[1] = {*(int64_t *)args};
  count_t count = {0, 0};
  hpvm_status_t status = hpvm_rt_parallel_for(1, extents, count_body, &count);
  if (!status && atomic_load(&count.instances) != extents[0])
    return hpvm_status_create(HPVM_STATUS_INTERNAL, "lost instances");
  return status;
}

static void op_launch(reader_t *in) {
  int64_t extent = take_u8(in) % 64;
  hpvm_rt_launch_t *launch = NULL;
  expect(hpvm_rt_launch(launch_root, &extent, &launch), HPVM_STATUS_OK, "launch");
  expect(hpvm_rt_wait(launch), HPVM_STATUS_OK, "wait");
  expect(hpvm_rt_launch(NULL, &extent, &launch), HPVM_STATUS_INVALID_ARGUMENT, "launch(NULL)");
}

/* The policy in force (the runtime starts with dynamic: HPVM_POLICY is not set). */
static hpvm_rt_policy_kind_t current_policy = HPVM_RT_POLICY_DYNAMIC;

static void op_policy(reader_t *in) {
  uint32_t kind = take_u8(in) % 4;
  expect(hpvm_rt_policy_set((hpvm_rt_policy_kind_t)kind),
         kind <= HPVM_RT_POLICY_DYNAMIC ? HPVM_STATUS_OK : HPVM_STATUS_INVALID_ARGUMENT,
         "policy_set");
  if (kind <= HPVM_RT_POLICY_DYNAMIC)
    current_policy = (hpvm_rt_policy_kind_t)kind;
  char name[8];
  snprintf(name, sizeof(name), "n%u", take_u8(in) % MAX_NODES);
  uint32_t device = take_u8(in) % 4;
  /* Only static-node has per-node assignments; the others say so (UNIMPLEMENTED). */
  expect(hpvm_rt_policy_assign(name, (hpvm_rt_device_kind_t)device),
         device >= HPVM_RT_DEVICE_KIND_COUNT           ? HPVM_STATUS_INVALID_ARGUMENT
         : current_policy == HPVM_RT_POLICY_STATIC_NODE ? HPVM_STATUS_OK
                                                       : HPVM_STATUS_UNIMPLEMENTED,
         "policy_assign");
}

static void op_device_get(reader_t *in) {
  uint32_t kind = take_u8(in) % 4;
  hpvm_rt_device_t *device = NULL;
  hpvm_status_t status = hpvm_rt_device_get((hpvm_rt_device_kind_t)kind, &device);
  /* CUDA and OpenCL are pointed at missing libraries (LLVMFuzzerInitialize). */
  expect(status,
         kind == HPVM_RT_DEVICE_CPU                ? HPVM_STATUS_OK
         : kind < HPVM_RT_DEVICE_KIND_COUNT ? HPVM_STATUS_UNAVAILABLE
                                            : HPVM_STATUS_INVALID_ARGUMENT,
         "device_get");
}

/*===--- pipelines ---------------------------------------------------------===*/

enum { MAX_STAGES = 5 };

typedef struct stage_context_t {
  int64_t fail_item; /* -1: never */
} stage_context_t;

/* Every output item is the sum of the inputs' first 4 bytes (items are 4 or 8 bytes). */
static hpvm_status_t stage_body(void *context, hpvm_rt_device_t *device, int64_t item,
                                const void *const *in, void *const *out) {
  (void)device;
  stage_context_t *stage = context;
  if (item == stage->fail_item)
    return hpvm_status_create(HPVM_STATUS_ABORTED, "stage fails at item %lld on purpose",
                              (long long)item);
  (void)in;
  (void)out;
  return NULL;
}

typedef struct pipe_model_t {
  uint32_t stages;
  uint32_t inputs[MAX_STAGES], outputs[MAX_STAGES];
  uint8_t edge[MAX_STAGES][MAX_STAGES];
} pipe_model_t;

static bool reaches(const pipe_model_t *model, uint32_t from, uint32_t to) {
  if (from == to)
    return true;
  for (uint32_t next = 0; next < model->stages; ++next)
    if (model->edge[from][next] && reaches(model, next, to))
      return true;
  return false;
}

static void op_pipeline(reader_t *in) {
  size_t item_sizes[3] = {4, 8, 0};
  size_t input_size = item_sizes[take_u8(in) % 2];
  size_t output_size = item_sizes[take_u8(in) % 3];
  hpvm_rt_pipeline_t *pipeline = NULL;
  expect(hpvm_rt_pipeline_create(input_size, output_size, take_u8(in) % 40, &pipeline),
         HPVM_STATUS_OK, "pipeline_create");
  pipe_model_t model;
  memset(&model, 0, sizeof(model));
  stage_context_t contexts[MAX_STAGES];
  model.stages = take_u8(in) % (MAX_STAGES + 1);
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, stage_body};
  for (uint32_t s = 0; s < model.stages; ++s) {
    uint8_t shape = take_u8(in);
    model.inputs[s] = 1 + (shape & 1);
    model.outputs[s] = 1 + (shape >> 1 & 1);
    contexts[s].fail_item = shape & 0xf0 ? -1 : (int64_t)(shape >> 2 & 3);
    size_t in_sizes[2] = {item_sizes[shape >> 4 & 1], item_sizes[shape >> 5 & 1]};
    size_t out_sizes[2] = {item_sizes[shape >> 6 & 1], item_sizes[shape >> 7 & 1]};
    char name[8];
    snprintf(name, sizeof(name), "s%u", s);
    uint32_t index = UINT32_MAX;
    expect(hpvm_rt_pipeline_add_stage(pipeline, name, &version, 1, &contexts[s], model.inputs[s],
                                      in_sizes, model.outputs[s], out_sizes, &index),
           HPVM_STATUS_OK, "pipeline_add_stage");
  }
  uint32_t connects = take_u8(in) % 12;
  for (uint32_t c = 0; c < connects; ++c) {
    uint8_t a = take_u8(in), b = take_u8(in);
    uint32_t src = a % (MAX_STAGES + 1), dst = b % (MAX_STAGES + 1);
    if (src == MAX_STAGES)
      src = HPVM_RT_PIPELINE_HOST;
    if (dst == MAX_STAGES)
      dst = HPVM_RT_PIPELINE_HOST;
    uint32_t src_port = a >> 6 & 1, dst_port = b >> 6 & 1;
    hpvm_status_t status = hpvm_rt_pipeline_connect(pipeline, src, src_port, dst, dst_port);
    bool stages = src != HPVM_RT_PIPELINE_HOST && dst != HPVM_RT_PIPELINE_HOST &&
                  src < model.stages && dst < model.stages;
    if (!status) {
      if (stages) {
        if (reaches(&model, dst, src))
          fail("connect s%u -> s%u was accepted but closes a cycle", src, dst);
        model.edge[src][dst] = 1;
      }
    } else {
      bool cycle = strstr(hpvm_status_message(status), "cycle") != NULL;
      if (cycle && !(stages && reaches(&model, dst, src)))
        fail("connect s%u -> s%u was refused as a cycle but is none: %s", src, dst,
             hpvm_status_message(status));
      if (hpvm_status_code(status) != HPVM_STATUS_INVALID_ARGUMENT)
        fail("connect returned %s (%s)", hpvm_status_code_name(hpvm_status_code(status)),
             hpvm_status_message(status));
      consume(status);
    }
  }
  hpvm_rt_stream_t *stream = NULL;
  hpvm_status_t status = hpvm_rt_stream_launch(pipeline, &stream);
  if (status) {
    if (hpvm_status_code(status) != HPVM_STATUS_INVALID_ARGUMENT)
      fail("stream_launch returned %s (%s)", hpvm_status_code_name(hpvm_status_code(status)),
           hpvm_status_message(status));
    consume(status);
    hpvm_rt_pipeline_destroy(pipeline);
    return;
  }
  /* Launched: push at most 16 items (the minimum ring capacity), so that even a host that
   * pops nothing cannot block; then drain.  Refused cycles mean this cannot hang. */
  uint8_t item[8] = {0};
  uint32_t pushes = take_u8(in) % 17;
  uint8_t mode = take_u8(in) % 4;
  for (uint32_t i = 0; i < pushes; ++i) {
    hpvm_status_code_t code = consume(hpvm_rt_stream_push(stream, item));
    if (code != HPVM_STATUS_OK && code != HPVM_STATUS_ABORTED && code != HPVM_STATUS_CANCELLED)
      fail("push returned %s", hpvm_status_code_name(code));
  }
  if (mode == 0)
    hpvm_rt_stream_cancel(stream);
  hpvm_rt_stream_close_input(stream);
  expect(hpvm_rt_stream_push(stream, item), HPVM_STATUS_FAILED_PRECONDITION, "push after close");
  if (mode != 3) {
    uint8_t out[8];
    uint32_t popped = 0;
    for (;;) {
      hpvm_status_t pop = hpvm_rt_stream_pop(stream, out);
      hpvm_status_code_t code = hpvm_status_code(pop);
      consume(pop);
      if (code == HPVM_STATUS_OK) {
        if (++popped > pushes)
          fail("popped %u items after %u pushes", popped, pushes);
        continue;
      }
      if (!output_size && code != HPVM_STATUS_FAILED_PRECONDITION)
        fail("pop without a host output returned %s", hpvm_status_code_name(code));
      if (output_size && code != HPVM_STATUS_OUT_OF_RANGE && code != HPVM_STATUS_ABORTED &&
          code != HPVM_STATUS_CANCELLED)
        fail("pop returned %s", hpvm_status_code_name(code));
      if (output_size && code == HPVM_STATUS_OUT_OF_RANGE && mode != 0 && popped != pushes)
        fail("end of stream after %u of %u items without an error", popped, pushes);
      break;
    }
  }
  hpvm_status_code_t code = consume(hpvm_rt_stream_wait(stream));
  if (code != HPVM_STATUS_OK && code != HPVM_STATUS_ABORTED)
    fail("stream_wait returned %s", hpvm_status_code_name(code));
  hpvm_rt_pipeline_destroy(pipeline);
}

/*===--- driver ------------------------------------------------------------===*/

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* Deterministic, cheap and leak-free devices: no driver is loaded in process. */
  setenv("HPVM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  setenv("HPVM_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
  setenv("HPVM_NUM_THREADS", "3", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader_t in = {data, size, 0};
  model_t model;
  memset(&model, 0, sizeof(model));
  expect(hpvm_rt_init(), HPVM_STATUS_OK, "init");
  current_policy = HPVM_RT_POLICY_DYNAMIC;
  expect(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &model.cpu), HPVM_STATUS_OK, "device_get(cpu)");
  for (int ops = 0; in.at < in.size && ops < 256; ++ops) {
    switch (take_u8(&in) % 16) {
    case 0: op_alloc(&in, &model); break;
    case 1: op_free(&in, &model); break;
    case 2: op_copy(&in, &model, true); break;
    case 3: op_copy(&in, &model, false); break;
    case 4: op_track(&in, &model); break;
    case 5: op_untrack(&in, &model); break;
    case 6: op_request(&in, &model, false); break;
    case 7: op_request(&in, &model, true); break;
    case 8: op_parallel_for(&in); break;
    case 9: op_graph(&in); break;
    case 10: op_launch(&in); break;
    case 11: op_pipeline(&in); break;
    case 12: op_policy(&in); break;
    case 13: op_device_get(&in); break;
    case 14: op_alloc(&in, &model); break;
    default: {
      /* Shut down with buffers and tracked objects still live: the runtime frees the device
       * copies and forgotten buffers; the model starts over. */
      hpvm_rt_shutdown();
      for (int i = 0; i < MAX_BUFFERS; ++i)
        free(model.buffers[i].shadow);
      memset(&model, 0, sizeof(model));
      current_policy = HPVM_RT_POLICY_DYNAMIC;
      expect(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &model.cpu), HPVM_STATUS_OK, "device_get");
      break;
    }
    }
  }
  for (int i = 0; i < MAX_BUFFERS; ++i)
    if (model.buffers[i].handle)
      expect(hpvm_rt_device_free(model.cpu, model.buffers[i].handle), HPVM_STATUS_OK,
             "device_free at the end");
  for (uint32_t i = 0; i < model.tracked_count; ++i)
    expect(hpvm_rt_untrack(arena + model.tracked[i].offset), HPVM_STATUS_OK, "untrack at the end");
  for (int i = 0; i < MAX_BUFFERS; ++i)
    free(model.buffers[i].shadow);
  /* Everything the input made is released, so LeakSanitizer sees whatever the runtime kept. */
  hpvm_rt_shutdown();
  return 0;
}
