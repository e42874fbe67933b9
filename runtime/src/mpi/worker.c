/* A worker rank (worker.h): builds the pipelines rank 0 sends, pushes the items dealt to it
 * into them and sends back each result with the buffers the graph wrote, in push order. */
#define _GNU_SOURCE
#include "mpi/worker.h"

#include "mpi/link.h"
#include "mpi/plan.h"
#include "mpi/protocol.h"
#include "mpi/real.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  uint64_t sequence;
  hpvm_mpi_local_item_t local;
} pending_t;

typedef struct worker_stream {
  uint32_t id, credits;
  hpvm_mpi_layout_t layout;
  hpvm_mpi_plan_t plan;
  hpvm_rt_stream_t *stream;
  /* The items pushed and not yet sent back, oldest first. */
  pthread_mutex_t lock;
  pending_t *pending;
  size_t head, count, capacity;
  /* With host outputs: the thread popping them. Without: items go back in batches. */
  pthread_t popper;
  int popping;
  struct worker_stream *next;
} worker_stream_t;

static worker_stream_t *streams;
static volatile int heartbeat_stop;

static void send_header(int tag, uint32_t stream, uint64_t sequence, hpvm_status_t status) {
  hpvm_mpi_bytes_t bytes = {0};
  hpvm_mpi_item_header_t header = {stream, (uint32_t)hpvm_status_code(status), sequence};
  hpvm_mpi_bytes_append(&bytes, &header, sizeof header);
  if (status)
    hpvm_mpi_bytes_append(&bytes, hpvm_status_message(status),
                          strlen(hpvm_status_message(status)));
  hpvm_mpi_send(0, tag, bytes.data, bytes.size);
  free(bytes.data);
}

static pending_t take_oldest(worker_stream_t *s) {
  pthread_mutex_lock(&s->lock);
  pending_t oldest = s->pending[s->head];
  s->head = (s->head + 1) % s->capacity;
  s->count--;
  pthread_mutex_unlock(&s->lock);
  return oldest;
}

static void add_pending(worker_stream_t *s, uint64_t sequence, hpvm_mpi_local_item_t local) {
  pthread_mutex_lock(&s->lock);
  if (s->count == s->capacity) {
    size_t capacity = s->capacity ? s->capacity * 2 : 16;
    pending_t *grown = malloc(sizeof *grown * capacity);
    if (!grown)
      abort();
    for (size_t i = 0; i < s->count; ++i)
      grown[i] = s->pending[(s->head + i) % s->capacity];
    free(s->pending);
    s->pending = grown;
    s->head = 0;
    s->capacity = capacity;
  }
  s->pending[(s->head + s->count++) % s->capacity] = (pending_t){sequence, local};
  pthread_mutex_unlock(&s->lock);
}

/* Sends the result of the oldest pending item, `output` its popped output (NULL: none). */
static void send_result(worker_stream_t *s, const void *output) {
  pending_t item = take_oldest(s);
  hpvm_mpi_bytes_t bytes = {0};
  hpvm_mpi_item_header_t header = {s->id, HPVM_STATUS_OK, item.sequence};
  hpvm_mpi_bytes_append(&bytes, &header, sizeof header);
  hpvm_status_t status = hpvm_mpi_pack_result(&s->layout, &item.local, output, &bytes);
  if (status) {
    send_header(HPVM_MPI_TAG_RESULT, s->id, item.sequence, status);
    hpvm_status_free(status);
  } else {
    hpvm_mpi_send(0, HPVM_MPI_TAG_RESULT, bytes.data, bytes.size);
  }
  free(bytes.data);
  hpvm_mpi_local_item_free(&item.local);
}

static void *pop_results(void *argument) {
  worker_stream_t *s = argument;
  char *output = malloc(s->plan.output_size ? s->plan.output_size : 1);
  if (!output)
    abort();
  for (;;) {
    hpvm_status_t status = __real_hpvm_rt_stream_pop(s->stream, output);
    if (status) {
      /* A stage's error goes to rank 0 at once (its pops fail); the end of the stream (and
       * the error again) with the stream's end. */
      if (hpvm_status_code(status) != HPVM_STATUS_OUT_OF_RANGE)
        send_header(HPVM_MPI_TAG_DONE, s->id, HPVM_MPI_DONE_EARLY, status);
      hpvm_status_free(status);
      break;
    }
    send_result(s, output);
  }
  free(output);
  return NULL;
}

static hpvm_status_t start_stream(worker_stream_t *s) {
  hpvm_rt_pipeline_t *pipeline = NULL;
  hpvm_status_t status = hpvm_mpi_plan_build(&s->plan, &pipeline);
  if (!status)
    status = __real_hpvm_rt_stream_launch(pipeline, &s->stream);
  __real_hpvm_rt_pipeline_destroy(pipeline);
  if (!status && s->plan.output_size) {
    s->popping = pthread_create(&s->popper, NULL, pop_results, s) == 0;
    if (!s->popping)
      status = hpvm_status_create(HPVM_STATUS_RESOURCE_EXHAUSTED, "no thread for results");
  }
  return status;
}

/* Ends the stream's current run: waits for its items and, without host outputs, sends back
 * the buffers of every item pushed. */
static hpvm_status_t end_stream(worker_stream_t *s) {
  if (!s->stream)
    return NULL;
  __real_hpvm_rt_stream_close_input(s->stream);
  if (s->popping)
    pthread_join(s->popper, NULL);
  s->popping = 0;
  hpvm_status_t status = __real_hpvm_rt_stream_wait(s->stream);
  s->stream = NULL;
  while (!status && s->count)
    send_result(s, NULL);
  return status;
}

static worker_stream_t *find_stream(uint32_t id) {
  for (worker_stream_t *s = streams; s; s = s->next)
    if (s->id == id)
      return s;
  return NULL;
}

static void on_launch(const hpvm_mpi_message_t *m) {
  hpvm_mpi_launch_header_t header;
  if (m->size < sizeof header)
    hpvm_mpi_fail(0, "a short LAUNCH message (%zu bytes)", m->size);
  memcpy(&header, m->data, sizeof header);
  size_t at = sizeof header + header.layout_length;
  worker_stream_t *s = calloc(1, sizeof *s);
  char *text = malloc(header.layout_length + 1);
  if (!s || !text || at > m->size)
    hpvm_mpi_fail(0, "a bad LAUNCH message (%zu bytes)", m->size);
  memcpy(text, m->data + sizeof header, header.layout_length);
  text[header.layout_length] = '\0';
  s->id = header.stream;
  s->credits = header.credits ? header.credits : 1;
  pthread_mutex_init(&s->lock, NULL);
  hpvm_status_t status = hpvm_mpi_layout_parse(text, &s->layout);
  free(text);
  if (!status && !hpvm_mpi_plan_decode(m->data + at, m->size - at, &s->plan))
    status = hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT, "a bad pipeline from rank 0");
  if (!status)
    status = start_stream(s);
  if (status)
    hpvm_mpi_fail(hpvm_mpi_world.rank, "starting stream %u failed: %s", s->id,
                  hpvm_status_message(status));
  s->next = streams;
  streams = s;
}

/* HPVM_MPI_FAULT=RANK:ITEM[:stop] (tests): rank RANK dies (SIGKILL), or hangs (SIGSTOP),
 * when it receives an item numbered ITEM or later. */
static void maybe_fail(uint64_t sequence) {
  const char *fault = getenv("HPVM_MPI_FAULT");
  int rank = -1;
  unsigned long long item = 0;
  char how[8] = "";
  if (fault && sscanf(fault, "%d:%llu:%7s", &rank, &item, how) >= 2 &&
      rank == hpvm_mpi_world.rank && sequence >= item)
    raise(strcmp(how, "stop") == 0 ? SIGSTOP : SIGKILL);
}

static void on_item(const hpvm_mpi_message_t *m) {
  hpvm_mpi_item_header_t header;
  if (m->size < sizeof header)
    hpvm_mpi_fail(0, "a short ITEM message (%zu bytes)", m->size);
  memcpy(&header, m->data, sizeof header);
  maybe_fail(header.sequence);
  worker_stream_t *s = find_stream(header.stream);
  hpvm_mpi_local_item_t local;
  if (!s || !hpvm_mpi_unpack_item(&s->layout, m->data + sizeof header,
                                  m->size - sizeof header, &local))
    hpvm_mpi_fail(0, "a bad ITEM message (stream %u, item %llu)", header.stream,
                  (unsigned long long)header.sequence);
  hpvm_status_t status = NULL;
  if (!s->stream)
    status = start_stream(s);
  add_pending(s, header.sequence, local);
  if (!status)
    status = __real_hpvm_rt_stream_push(s->stream, local.item);
  /* Without host outputs the items go back in batches: when the items held here reach the
   * credits rank 0 gives, every stream without outputs ends its run. */
  size_t held = 0;
  for (worker_stream_t *t = streams; t; t = t->next)
    held += t->count;
  for (worker_stream_t *t = streams; !status && held >= s->credits && t; t = t->next)
    if (!t->plan.output_size && t->count)
      status = end_stream(t);
  if (status) {
    send_header(HPVM_MPI_TAG_DONE, s->id, HPVM_MPI_DONE_EARLY, status);
    hpvm_status_free(status);
  }
}

static void on_close(const hpvm_mpi_message_t *m) {
  hpvm_mpi_item_header_t header;
  if (m->size < sizeof header)
    hpvm_mpi_fail(0, "a short CLOSE message (%zu bytes)", m->size);
  memcpy(&header, m->data, sizeof header);
  worker_stream_t *s = find_stream(header.stream), **link = &streams;
  if (!s)
    return;
  hpvm_status_t status = end_stream(s);
  send_header(HPVM_MPI_TAG_DONE, s->id, HPVM_MPI_DONE_FINAL, status);
  hpvm_status_free(status);
  while (*link != s)
    link = &(*link)->next;
  *link = s->next;
  while (s->count) {
    pending_t left = take_oldest(s);
    hpvm_mpi_local_item_free(&left.local);
  }
  free(s->pending);
  hpvm_mpi_layout_free(&s->layout);
  hpvm_mpi_plan_free(&s->plan);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

static void *heartbeat(void *unused) {
  (void)unused;
  while (!heartbeat_stop) {
    hpvm_mpi_send(0, HPVM_MPI_TAG_HEARTBEAT, NULL, 0);
    usleep(HPVM_MPI_HEARTBEAT_MS * 1000);
  }
  return NULL;
}

int hpvm_mpi_worker_run(void) {
  pthread_t beat;
  int beating = pthread_create(&beat, NULL, heartbeat, NULL) == 0;
  for (unsigned idle = 0;;) {
    hpvm_mpi_message_t m;
    if (!hpvm_mpi_try_receive(0, &m)) {
      hpvm_mpi_backoff(idle++);
      continue;
    }
    idle = 0;
    int tag = m.tag;
    if (tag == HPVM_MPI_TAG_LAUNCH)
      on_launch(&m);
    else if (tag == HPVM_MPI_TAG_ITEM)
      on_item(&m);
    else if (tag == HPVM_MPI_TAG_CLOSE)
      on_close(&m);
    free(m.data);
    if (tag == HPVM_MPI_TAG_SHUTDOWN)
      break;
  }
  heartbeat_stop = 1;
  if (beating)
    pthread_join(beat, NULL);
  hpvm_mpi_send(0, HPVM_MPI_TAG_BYE, NULL, 0);
  MPI_Finalize();
  return 0;
}
