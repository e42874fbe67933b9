/* Rank 0 (docs/Distributed.md): the program's streaming calls, taken with -Wl,--wrap. The
 * pipeline the program describes is recorded; its launch sends it to the workers; each push
 * packs the item with its buffers and sends it to a worker with credit (round-robin among
 * them, so a slow rank, whose credits stay used, gets fewer); results come back with the
 * buffers the graph wrote, which are copied into the program's buffers, and pops return them
 * in push order, exactly once. Without mpirun, or with one rank, every call goes to the
 * runtime unchanged. */
#define _GNU_SOURCE
#include "mpi/link.h"
#include "mpi/plan.h"
#include "mpi/protocol.h"
#include "mpi/real.h"
#include "mpi/worker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compiler's call before each streaming launch (the __wrap_ functions: real.h). */
void hpvm_rt_mpi_describe_items(const char *layout);

enum { SLOT_EMPTY, SLOT_SENT, SLOT_DONE, SLOT_POPPED };

typedef struct {
  int state, worker, failed;
  char *item, *output;
} slot_t;

typedef struct host_stream {
  uint32_t id;
  hpvm_mpi_layout_t layout;
  hpvm_mpi_bytes_t launch; /* the LAUNCH message */
  /* Items [base, next_push) have slots (index: sequence & (capacity - 1)). */
  uint64_t base, next_push, next_pop;
  slot_t *slots;
  size_t capacity;
  int *launched;
  uint64_t *dealt; /* items per worker */
  int closed, cancelled, launched_count, done_count;
  hpvm_status_t error;
  struct host_stream *next;
} host_stream_t;

typedef struct recorded {
  const hpvm_rt_pipeline_t *pipeline;
  hpvm_mpi_plan_t plan;
  const char *layout;
  struct recorded *next;
} recorded_t;

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static int distributing, credits = 16, next_worker;
static uint32_t next_stream_id = 1;
static double timeout = 5.0, *last_seen;
static int *in_flight, byes;
static host_stream_t *host_streams;
static recorded_t *recordings;
static __thread const char *pending_layout;

void hpvm_rt_mpi_describe_items(const char *layout) { pending_layout = layout; }

static recorded_t *find_recording(const hpvm_rt_pipeline_t *pipeline) {
  for (recorded_t *r = recordings; r; r = r->next)
    if (r->pipeline == pipeline)
      return r;
  return NULL;
}

static host_stream_t *find_stream(const hpvm_rt_stream_t *stream) {
  for (host_stream_t *s = host_streams; s; s = s->next)
    if ((const void *)s == (const void *)stream)
      return s;
  return NULL;
}

static host_stream_t *find_stream_id(uint32_t id) {
  for (host_stream_t *s = host_streams; s; s = s->next)
    if (s->id == id)
      return s;
  return NULL;
}

static slot_t *slot_of(host_stream_t *s, uint64_t sequence) {
  return &s->slots[sequence & (s->capacity - 1)];
}

static void record_error(host_stream_t *s, int rank, uint32_t code, const char *text,
                         size_t length) {
  if (!s->error)
    s->error = hpvm_status_create((hpvm_status_code_t)code, "MPI rank %d: %.*s", rank,
                                  (int)length, text);
}

/* Frees the slots at the front that are finished with: popped, or done without outputs. */
static void retire(host_stream_t *s) {
  while (s->base < s->next_push) {
    slot_t *slot = slot_of(s, s->base);
    if (!(slot->state == SLOT_POPPED || (slot->state == SLOT_DONE && !s->layout.out_size) ||
          (slot->state == SLOT_DONE && s->cancelled)))
      break;
    free(slot->output);
    *slot = (slot_t){SLOT_EMPTY, 0, 0, NULL, NULL};
    s->base++;
  }
}

static void on_result(const hpvm_mpi_message_t *m) {
  hpvm_mpi_item_header_t header;
  memcpy(&header, m->data, sizeof header);
  host_stream_t *s = find_stream_id(header.stream);
  if (!s || header.sequence < s->base || header.sequence >= s->next_push)
    return;
  slot_t *slot = slot_of(s, header.sequence);
  if (slot->state != SLOT_SENT || slot->worker != m->source)
    return; /* never twice */
  const char *payload = m->data + sizeof header;
  size_t size = m->size - sizeof header;
  if (header.code != HPVM_STATUS_OK) {
    slot->failed = 1;
    record_error(s, m->source, header.code, payload, size);
  } else {
    slot->output = s->layout.out_size ? malloc(s->layout.out_size) : NULL;
    if (!hpvm_mpi_unpack_result(&s->layout, slot->item, payload, size, slot->output))
      hpvm_mpi_fail(m->source, "a malformed result for item %llu",
                    (unsigned long long)header.sequence);
  }
  free(slot->item);
  slot->item = NULL;
  slot->state = SLOT_DONE;
  in_flight[m->source]--;
  retire(s);
}

static void on_message(const hpvm_mpi_message_t *m) {
  last_seen[m->source] = hpvm_mpi_now();
  if (m->tag == HPVM_MPI_TAG_BYE) {
    byes++;
    return;
  }
  if (m->tag != HPVM_MPI_TAG_RESULT && m->tag != HPVM_MPI_TAG_DONE)
    return;
  if (m->size < sizeof(hpvm_mpi_item_header_t))
    hpvm_mpi_fail(m->source, "a short message (tag %d, %zu bytes)", m->tag, m->size);
  if (m->tag == HPVM_MPI_TAG_RESULT)
    return on_result(m);
  hpvm_mpi_item_header_t header;
  memcpy(&header, m->data, sizeof header);
  host_stream_t *s = find_stream_id(header.stream);
  if (!s)
    return;
  if (header.code != HPVM_STATUS_OK)
    record_error(s, m->source, header.code, m->data + sizeof header,
                 m->size - sizeof header);
  if (header.sequence == HPVM_MPI_DONE_FINAL)
    s->done_count++;
}

/* A worker silent for longer than the timeout while it holds items: the program ends with
 * the rank and its items named (they are not dealt again). */
static void check_silence(void) {
  double now = hpvm_mpi_now();
  for (int w = 1; w < hpvm_mpi_world.size; ++w) {
    if (!in_flight[w] || now - last_seen[w] <= timeout)
      continue;
    char items[256] = "";
    size_t used = 0;
    for (host_stream_t *s = host_streams; s; s = s->next)
      for (uint64_t q = s->base; q < s->next_push && used + 24 < sizeof items; ++q)
        if (slot_of(s, q)->state == SLOT_SENT && slot_of(s, q)->worker == w)
          used += (size_t)snprintf(items + used, sizeof items - used, "%s%llu",
                                   used ? ", " : "", (unsigned long long)q);
    hpvm_mpi_fail(w, "no answer for %.1f s with %d item(s) in flight (item %s); the "
                  "program stops: items of a lost rank are not dealt again",
                  now - last_seen[w], in_flight[w], items);
  }
}

/* One round of progress (with the lock held): handles waiting messages, else waits a
 * little without the lock. */
static void progress(unsigned *idle) {
  static double last_check;
  double now = hpvm_mpi_now();
  if (now - last_check > 0.25) {
    check_silence();
    last_check = now;
  }
  hpvm_mpi_message_t m;
  if (hpvm_mpi_try_receive(MPI_ANY_SOURCE, &m)) {
    on_message(&m);
    free(m.data);
    *idle = 0;
    return;
  }
  ++*idle;
  pthread_mutex_unlock(&host_lock);
  hpvm_mpi_backoff(*idle);
  pthread_mutex_lock(&host_lock);
}

/*===--- The pipeline, recorded -------------------------------------------------------===*/

hpvm_status_t __wrap_hpvm_rt_pipeline_create(size_t input_size, size_t output_size,
                                             uint32_t capacity, hpvm_rt_pipeline_t **out) {
  hpvm_status_t status = __real_hpvm_rt_pipeline_create(input_size, output_size, capacity, out);
  const char *layout = pending_layout;
  pending_layout = NULL;
  if (status || !distributing || !layout)
    return status;
  recorded_t *r = calloc(1, sizeof *r);
  if (!r)
    abort();
  r->pipeline = *out;
  r->layout = layout;
  r->plan.input_size = input_size;
  r->plan.output_size = output_size;
  r->plan.capacity = capacity;
  pthread_mutex_lock(&host_lock);
  r->next = recordings;
  recordings = r;
  pthread_mutex_unlock(&host_lock);
  return NULL;
}

hpvm_status_t __wrap_hpvm_rt_pipeline_add_stage(
    hpvm_rt_pipeline_t *pipeline, const char *name, const hpvm_rt_stage_version_t *versions,
    uint32_t version_count, void *context, uint32_t input_count, const size_t *input_sizes,
    uint32_t output_count, const size_t *output_sizes, uint32_t *out_stage) {
  hpvm_status_t status = __real_hpvm_rt_pipeline_add_stage(
      pipeline, name, versions, version_count, context, input_count, input_sizes,
      output_count, output_sizes, out_stage);
  pthread_mutex_lock(&host_lock);
  recorded_t *r = status ? NULL : find_recording(pipeline);
  if (r)
    hpvm_mpi_plan_add_stage(&r->plan, versions, version_count, context, input_count,
                            input_sizes, output_count, output_sizes);
  pthread_mutex_unlock(&host_lock);
  return status;
}

hpvm_status_t __wrap_hpvm_rt_pipeline_connect(hpvm_rt_pipeline_t *pipeline, uint32_t src,
                                              uint32_t src_port, uint32_t dst,
                                              uint32_t dst_port) {
  hpvm_status_t status = __real_hpvm_rt_pipeline_connect(pipeline, src, src_port, dst,
                                                         dst_port);
  pthread_mutex_lock(&host_lock);
  recorded_t *r = status ? NULL : find_recording(pipeline);
  if (r)
    hpvm_mpi_plan_connect(&r->plan, src, src_port, dst, dst_port);
  pthread_mutex_unlock(&host_lock);
  return status;
}

void __wrap_hpvm_rt_pipeline_destroy(hpvm_rt_pipeline_t *pipeline) {
  pthread_mutex_lock(&host_lock);
  for (recorded_t **link = &recordings; *link; link = &(*link)->next)
    if ((*link)->pipeline == pipeline) {
      recorded_t *r = *link;
      *link = r->next;
      hpvm_mpi_plan_free(&r->plan);
      free(r);
      break;
    }
  pthread_mutex_unlock(&host_lock);
  __real_hpvm_rt_pipeline_destroy(pipeline);
}

/*===--- Streams ----------------------------------------------------------------------===*/

/* The stream of recording `r`, dealt to the workers; its LAUNCH message is sent to each
 * worker before its first item. */
static hpvm_status_t start_distributed(recorded_t *r, hpvm_rt_stream_t **out) {
  if (r->plan.refusal)
    return hpvm_status_create(HPVM_STATUS_FAILED_PRECONDITION,
                              "MPI layer: this stream cannot be distributed: %s",
                              r->plan.refusal);
  host_stream_t *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  hpvm_status_t status = hpvm_mpi_layout_parse(r->layout, &s->layout);
  if (!status && (s->layout.in_size != r->plan.input_size ||
                  s->layout.out_size != r->plan.output_size))
    status = hpvm_status_create(
        HPVM_STATUS_INTERNAL,
        "MPI layer: the item layout '%s' gives items of %zu and %zu bytes; the pipeline's "
        "are %llu and %llu bytes", r->layout, s->layout.in_size, s->layout.out_size,
        (unsigned long long)r->plan.input_size, (unsigned long long)r->plan.output_size);
  if (status) {
    free(s);
    return status;
  }
  s->id = next_stream_id++;
  hpvm_mpi_launch_header_t header = {s->id, (uint32_t)credits, (uint32_t)strlen(r->layout), 0};
  hpvm_mpi_bytes_append(&s->launch, &header, sizeof header);
  hpvm_mpi_bytes_append(&s->launch, r->layout, header.layout_length);
  hpvm_mpi_plan_encode(&r->plan, &s->launch);
  s->capacity = 64;
  s->slots = calloc(s->capacity, sizeof *s->slots);
  s->launched = calloc((size_t)hpvm_mpi_world.size, sizeof *s->launched);
  s->dealt = calloc((size_t)hpvm_mpi_world.size, sizeof *s->dealt);
  if (!s->slots || !s->launched || !s->dealt)
    abort();
  s->next = host_streams;
  host_streams = s;
  *out = (hpvm_rt_stream_t *)(void *)s;
  return NULL;
}

hpvm_status_t __wrap_hpvm_rt_stream_launch(const hpvm_rt_pipeline_t *pipeline,
                                           hpvm_rt_stream_t **out_stream) {
  if (!distributing)
    return __real_hpvm_rt_stream_launch(pipeline, out_stream);
  pthread_mutex_lock(&host_lock);
  recorded_t *r = find_recording(pipeline);
  hpvm_status_t status = r && out_stream ? start_distributed(r, out_stream) : NULL;
  pthread_mutex_unlock(&host_lock);
  if (!r || !out_stream)
    return __real_hpvm_rt_stream_launch(pipeline, out_stream);
  return status;
}

/* A worker with credit (round-robin among them), after waiting for results if none has. */
static int choose_worker(void) {
  int workers = hpvm_mpi_world.size - 1;
  for (unsigned idle = 0;;) {
    for (int i = 0; i < workers; ++i) {
      int w = 1 + (next_worker + i) % workers;
      if (in_flight[w] < credits) {
        next_worker = (next_worker + i + 1) % workers;
        return w;
      }
    }
    progress(&idle);
  }
}

/* Makes room for one more slot. */
static void grow_slots(host_stream_t *s) {
  if (s->next_push - s->base < s->capacity)
    return;
  slot_t *grown = calloc(s->capacity * 2, sizeof *grown);
  if (!grown)
    abort();
  for (uint64_t q = s->base; q < s->next_push; ++q)
    grown[q & (s->capacity * 2 - 1)] = *slot_of(s, q);
  free(s->slots);
  s->slots = grown;
  s->capacity *= 2;
}

static hpvm_status_t copy_error(const host_stream_t *s) {
  return hpvm_status_create(hpvm_status_code(s->error), "%s", hpvm_status_message(s->error));
}

static hpvm_status_t push_item(host_stream_t *s, const void *item) {
  if (s->closed)
    return hpvm_status_create(HPVM_STATUS_FAILED_PRECONDITION, "push after close_input");
  if (s->error)
    return copy_error(s);
  int w = choose_worker();
  if (!s->launched[w]) {
    hpvm_mpi_send(w, HPVM_MPI_TAG_LAUNCH, s->launch.data, s->launch.size);
    s->launched[w] = 1;
    s->launched_count++;
  }
  grow_slots(s);
  uint64_t sequence = s->next_push++;
  slot_t *slot = slot_of(s, sequence);
  *slot = (slot_t){SLOT_SENT, w, 0, malloc(s->layout.in_size), NULL};
  if (!slot->item)
    abort();
  memcpy(slot->item, item, s->layout.in_size);
  hpvm_mpi_bytes_t bytes = {0};
  hpvm_mpi_item_header_t header = {s->id, 0, sequence};
  hpvm_mpi_bytes_append(&bytes, &header, sizeof header);
  hpvm_mpi_pack_item(&s->layout, item, &bytes);
  in_flight[w]++;
  s->dealt[w]++;
  hpvm_mpi_send(w, HPVM_MPI_TAG_ITEM, bytes.data, bytes.size);
  free(bytes.data);
  return NULL;
}

hpvm_status_t __wrap_hpvm_rt_stream_push(hpvm_rt_stream_t *stream, const void *item) {
  if (!distributing)
    return __real_hpvm_rt_stream_push(stream, item);
  pthread_mutex_lock(&host_lock);
  host_stream_t *s = find_stream(stream);
  hpvm_status_t status = s ? push_item(s, item) : NULL;
  pthread_mutex_unlock(&host_lock);
  return s ? status : __real_hpvm_rt_stream_push(stream, item);
}

static hpvm_status_t pop_item(host_stream_t *s, void *out_item) {
  if (!s->layout.out_size)
    return hpvm_status_create(HPVM_STATUS_FAILED_PRECONDITION,
                              "pop on a stream without host output");
  for (unsigned idle = 0;;) {
    if (s->cancelled)
      return hpvm_status_create(HPVM_STATUS_CANCELLED, "the stream was cancelled");
    slot_t *slot = s->next_pop < s->next_push ? slot_of(s, s->next_pop) : NULL;
    if (slot && slot->state == SLOT_DONE) {
      if (slot->failed)
        return copy_error(s);
      memcpy(out_item, slot->output, s->layout.out_size);
      slot->state = SLOT_POPPED;
      s->next_pop++;
      retire(s);
      return NULL;
    }
    if (!slot && s->closed)
      return hpvm_status_create(HPVM_STATUS_OUT_OF_RANGE, "end of stream");
    if (s->error)
      return copy_error(s);
    progress(&idle);
  }
}

hpvm_status_t __wrap_hpvm_rt_stream_pop(hpvm_rt_stream_t *stream, void *out_item) {
  if (!distributing)
    return __real_hpvm_rt_stream_pop(stream, out_item);
  pthread_mutex_lock(&host_lock);
  host_stream_t *s = find_stream(stream);
  hpvm_status_t status = s ? pop_item(s, out_item) : NULL;
  pthread_mutex_unlock(&host_lock);
  return s ? status : __real_hpvm_rt_stream_pop(stream, out_item);
}

static void close_stream(host_stream_t *s) {
  if (s->closed)
    return;
  s->closed = 1;
  hpvm_mpi_item_header_t header = {s->id, 0, 0};
  for (int w = 1; w < hpvm_mpi_world.size; ++w)
    if (s->launched[w])
      hpvm_mpi_send(w, HPVM_MPI_TAG_CLOSE, &header, sizeof header);
}

void __wrap_hpvm_rt_stream_close_input(hpvm_rt_stream_t *stream) {
  if (!distributing)
    return __real_hpvm_rt_stream_close_input(stream);
  pthread_mutex_lock(&host_lock);
  host_stream_t *s = find_stream(stream);
  if (s)
    close_stream(s);
  pthread_mutex_unlock(&host_lock);
  if (!s)
    __real_hpvm_rt_stream_close_input(stream);
}

void __wrap_hpvm_rt_stream_cancel(hpvm_rt_stream_t *stream) {
  if (!distributing)
    return __real_hpvm_rt_stream_cancel(stream);
  pthread_mutex_lock(&host_lock);
  host_stream_t *s = find_stream(stream);
  if (s) {
    s->cancelled = 1;
    close_stream(s);
  }
  pthread_mutex_unlock(&host_lock);
  if (!s)
    __real_hpvm_rt_stream_cancel(stream);
}

/* Whether every item came back and every worker ended the stream. */
static int drained(const host_stream_t *s) {
  if (s->done_count < s->launched_count)
    return 0;
  for (uint64_t q = s->base; q < s->next_push; ++q)
    if (s->slots[q & (s->capacity - 1)].state == SLOT_SENT)
      return 0;
  return 1;
}

static hpvm_status_t wait_stream(host_stream_t *s) {
  close_stream(s);
  for (unsigned idle = 0; !drained(s);)
    progress(&idle);
  for (host_stream_t **link = &host_streams; *link; link = &(*link)->next)
    if (*link == s) {
      *link = s->next;
      break;
    }
  for (uint64_t q = s->base; q < s->next_push; ++q) {
    free(slot_of(s, q)->item);
    free(slot_of(s, q)->output);
  }
  hpvm_status_t status = s->error;
  if (getenv("HPVM_MPI_STATS")) {
    fprintf(stderr, "hpvm: MPI stream %u: %llu items:", s->id,
            (unsigned long long)s->next_push);
    for (int w = 1; w < hpvm_mpi_world.size; ++w)
      fprintf(stderr, " rank %d %llu%s", w, (unsigned long long)s->dealt[w],
              w + 1 < hpvm_mpi_world.size ? "," : "\n");
  }
  free(s->dealt);
  free(s->slots);
  free(s->launched);
  free(s->launch.data);
  hpvm_mpi_layout_free(&s->layout);
  free(s);
  return status;
}

hpvm_status_t __wrap_hpvm_rt_stream_wait(hpvm_rt_stream_t *stream) {
  if (!distributing)
    return __real_hpvm_rt_stream_wait(stream);
  pthread_mutex_lock(&host_lock);
  host_stream_t *s = find_stream(stream);
  hpvm_status_t status = s ? wait_stream(s) : NULL;
  pthread_mutex_unlock(&host_lock);
  return s ? status : __real_hpvm_rt_stream_wait(stream);
}

/*===--- Start and end ----------------------------------------------------------------===*/

/* At exit of rank 0: every worker told to end, and its goodbye awaited. */
static void end_world(void) {
  pthread_mutex_lock(&host_lock);
  if (hpvm_mpi_world.size > 1) {
    for (int w = 1; w < hpvm_mpi_world.size; ++w)
      hpvm_mpi_send(w, HPVM_MPI_TAG_SHUTDOWN, NULL, 0);
    for (int w = 1; w < hpvm_mpi_world.size; ++w)
      in_flight[w]++; /* silence now counts */
    for (unsigned idle = 0; byes < hpvm_mpi_world.size - 1;)
      progress(&idle);
  }
  pthread_mutex_unlock(&host_lock);
  MPI_Finalize();
}

static int positive_env(const char *name, int fallback, int low, int high) {
  const char *text = getenv(name);
  int value = text ? atoi(text) : fallback;
  return value < low ? low : value > high ? high : value;
}

/* Before main: under mpirun, ranks other than 0 serve rank 0 and end without running main. */
__attribute__((constructor)) static void start_mpi_layer(void) {
  if (!hpvm_mpi_start_world())
    return;
  if (hpvm_mpi_world.rank > 0)
    exit(hpvm_mpi_worker_run());
  atexit(end_world);
  if (hpvm_mpi_world.size < 2)
    return;
  credits = positive_env("HPVM_MPI_CREDITS", 16, 1, 16);
  timeout = positive_env("HPVM_MPI_TIMEOUT_MS", 5000, 100, 3600000) / 1000.0;
  last_seen = calloc((size_t)hpvm_mpi_world.size, sizeof *last_seen);
  in_flight = calloc((size_t)hpvm_mpi_world.size, sizeof *in_flight);
  if (!last_seen || !in_flight)
    abort();
  for (int w = 0; w < hpvm_mpi_world.size; ++w)
    last_seen[w] = hpvm_mpi_now();
  distributing = 1;
}
