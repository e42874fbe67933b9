/* ring.c - lock-free SPSC ring with spin-then-sleep blocking on two condition variables. */
#define _GNU_SOURCE
#include "stream/ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "base/platform.h"

enum {
  STATE_CLOSED = 1u << 0,
  STATE_ABANDONED = 1u << 1,
  STATE_CANCELLED = 1u << 2,
};

enum {
  WAITING_PRODUCER = 1u << 0,
  WAITING_CONSUMER = 1u << 1,
};

/* A blocked side first polls with pause (the other side is usually a few hundred ns behind),
 * then yields a few times (when stages outnumber cores the core should go to the thread that
 * will make progress), then sleeps on a condition variable.  Long spins were measured to be
 * much slower on an oversubscribed 2-core machine: the spinner holds the core its partner
 * needs (docs/Performance-runtime.md). */
#define RING_SPIN_PAUSES 8
#define RING_SPIN_YIELDS 16

/* One step of the poll phase; false once it is time to sleep. */
static bool ring_poll_step(uint32_t spins) {
  if (spins < RING_SPIN_PAUSES)
    hpvm_platform_cpu_relax();
  else if (spins < RING_SPIN_PAUSES + RING_SPIN_YIELDS)
    sched_yield();
  else
    return false;
  return true;
}

struct hpvm_stream_ring_t {
  hpvm_allocator_t allocator;
  size_t element_size;
  size_t stride; /* element size rounded up for alignment of in-place access */
  uint64_t mask;
  char *slots;
  char *scratch; /* where pushes to an abandoned ring go */

  /* Producer-owned line.  `head` is what the consumer may see; `local_head` runs ahead of it
   * while pushes are deferred (published in batches, see end_push_deferred). */
  _Alignas(64) _Atomic uint64_t head;
  uint64_t local_head;
  uint64_t cached_tail;
  bool pushing_to_scratch;

  /* Consumer-owned line, the mirror image. */
  _Alignas(64) _Atomic uint64_t tail;
  uint64_t local_tail;
  uint64_t cached_head;

  /* Cold, shared. */
  _Alignas(64) _Atomic uint32_t state;
  _Atomic uint32_t waiting;
  pthread_mutex_t mutex;
  pthread_cond_t not_full;
  pthread_cond_t not_empty;
};

hpvm_status_t hpvm_stream_ring_create(hpvm_allocator_t allocator, size_t element_size,
                                      uint32_t capacity, hpvm_stream_ring_t **out_ring) {
  *out_ring = NULL;
  if (capacity > (1u << 30))
    return HPVM_STATUS(INVALID_ARGUMENT, "ring capacity %u exceeds 2^30", capacity);
  uint64_t rounded = 2;
  while (rounded < capacity)
    rounded <<= 1;
  size_t stride = element_size ? element_size : 1;
  if (!hpvm_size_add(stride, 15, &stride))
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "ring element of %zu bytes is too large", element_size);
  stride &= ~(size_t)15;
  size_t bytes;
  if (!hpvm_size_mul(stride, (size_t)rounded, &bytes))
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "ring of %llu x %zu bytes overflows size_t",
                       (unsigned long long)rounded, element_size);
  hpvm_stream_ring_t *ring;
  /* Cache-line aligned members: aligned memory (beyond malloc's). */
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_aligned(allocator, 1, sizeof(*ring),
                                                     _Alignof(hpvm_stream_ring_t), (void **)&ring));
  hpvm_status_t status = hpvm_allocator_malloc(allocator, bytes, (void **)&ring->slots);
  if (!status)
    status = hpvm_allocator_malloc(allocator, stride, (void **)&ring->scratch);
  if (status) {
    hpvm_allocator_free(allocator, ring->slots);
    hpvm_allocator_free_aligned(allocator, ring);
    return status;
  }
  ring->allocator = allocator;
  ring->element_size = element_size;
  ring->stride = stride;
  ring->mask = rounded - 1;
  pthread_mutex_init(&ring->mutex, NULL);
  pthread_cond_init(&ring->not_full, NULL);
  pthread_cond_init(&ring->not_empty, NULL);
  *out_ring = ring;
  return NULL;
}

void hpvm_stream_ring_destroy(hpvm_stream_ring_t *ring) {
  if (!ring)
    return;
  pthread_mutex_destroy(&ring->mutex);
  pthread_cond_destroy(&ring->not_full);
  pthread_cond_destroy(&ring->not_empty);
  hpvm_allocator_free(ring->allocator, ring->slots);
  hpvm_allocator_free(ring->allocator, ring->scratch);
  hpvm_allocator_free_aligned(ring->allocator, ring);
}

size_t hpvm_stream_ring_element_size(const hpvm_stream_ring_t *ring) { return ring->element_size; }
uint32_t hpvm_stream_ring_capacity(const hpvm_stream_ring_t *ring) {
  return (uint32_t)(ring->mask + 1);
}

/* Wakes the other side if it announced that it sleeps.  The caller published its index with
 * a seq_cst store and we read `waiting` with a seq_cst load; the sleeper sets its flag with a
 * seq_cst RMW and then re-reads the index (seq_cst).  In the single total order of these four
 * operations one side always sees the other, so no wake-up is lost (a Dekker handshake). On
 * x86 the seq_cst store is one xchg, cheaper than a separate mfence. */
static void wake(hpvm_stream_ring_t *ring, uint32_t who, pthread_cond_t *cond) {
  if (atomic_load(&ring->waiting) & who) {
    pthread_mutex_lock(&ring->mutex);
    pthread_cond_broadcast(cond);
    pthread_mutex_unlock(&ring->mutex);
  }
}

/* Deferred operations are published at least every RING_BATCH items, so a consumer never
 * waits for more than a batch it could already process. */
#define RING_BATCH 16

static void publish_head(hpvm_stream_ring_t *ring) {
  atomic_store(&ring->head, ring->local_head);
  wake(ring, WAITING_CONSUMER, &ring->not_empty);
}

static void publish_tail(hpvm_stream_ring_t *ring) {
  atomic_store(&ring->tail, ring->local_tail);
  wake(ring, WAITING_PRODUCER, &ring->not_full);
}

void hpvm_stream_ring_flush_push(hpvm_stream_ring_t *ring) {
  if (ring->local_head != atomic_load_explicit(&ring->head, memory_order_relaxed))
    publish_head(ring);
}

void hpvm_stream_ring_flush_pop(hpvm_stream_ring_t *ring) {
  if (ring->local_tail != atomic_load_explicit(&ring->tail, memory_order_relaxed))
    publish_tail(ring);
}

static inline bool has_space(hpvm_stream_ring_t *ring, uint64_t head) {
  if (head - ring->cached_tail <= ring->mask)
    return true;
  ring->cached_tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
  return head - ring->cached_tail <= ring->mask;
}

hpvm_stream_result_t hpvm_stream_ring_begin_push(hpvm_stream_ring_t *ring, void **out_slot) {
  uint64_t head = ring->local_head;
  uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
  for (uint32_t spins = 0; state == 0 && !has_space(ring, head); ++spins) {
    /* The consumer may be waiting for items we have not published: never wait on them. */
    if (spins == 0)
      hpvm_stream_ring_flush_push(ring);
    if (!ring_poll_step(spins)) {
      pthread_mutex_lock(&ring->mutex);
      atomic_fetch_or(&ring->waiting, WAITING_PRODUCER);
      for (;;) {
        state = atomic_load(&ring->state);
        ring->cached_tail = atomic_load(&ring->tail);
        if (state || head - ring->cached_tail <= ring->mask)
          break;
        pthread_cond_wait(&ring->not_full, &ring->mutex);
      }
      atomic_fetch_and(&ring->waiting, ~(uint32_t)WAITING_PRODUCER);
      pthread_mutex_unlock(&ring->mutex);
      break;
    }
    state = atomic_load_explicit(&ring->state, memory_order_acquire);
  }
  if (state & STATE_CANCELLED)
    return HPVM_STREAM_CANCELLED;
  if (state & STATE_CLOSED)
    return HPVM_STREAM_CLOSED;
  if (state & STATE_ABANDONED) {
    ring->pushing_to_scratch = true;
    *out_slot = ring->scratch;
    return HPVM_STREAM_OK;
  }
  ring->pushing_to_scratch = false;
  *out_slot = ring->slots + (head & ring->mask) * ring->stride;
  return HPVM_STREAM_OK;
}

void hpvm_stream_ring_end_push(hpvm_stream_ring_t *ring) {
  if (ring->pushing_to_scratch)
    return;
  ring->local_head++;
  publish_head(ring);
}

void hpvm_stream_ring_end_push_deferred(hpvm_stream_ring_t *ring) {
  if (ring->pushing_to_scratch)
    return;
  ring->local_head++;
  if (ring->local_head - atomic_load_explicit(&ring->head, memory_order_relaxed) >= RING_BATCH)
    publish_head(ring);
}

hpvm_stream_result_t hpvm_stream_ring_push(hpvm_stream_ring_t *ring, const void *item) {
  void *slot;
  hpvm_stream_result_t result = hpvm_stream_ring_begin_push(ring, &slot);
  if (result != HPVM_STREAM_OK)
    return result;
  if (ring->element_size)
    memcpy(slot, item, ring->element_size);
  hpvm_stream_ring_end_push(ring);
  return HPVM_STREAM_OK;
}

static inline bool has_item(hpvm_stream_ring_t *ring, uint64_t tail) {
  if (ring->cached_head != tail)
    return true;
  ring->cached_head = atomic_load_explicit(&ring->head, memory_order_acquire);
  return ring->cached_head != tail;
}

hpvm_stream_result_t hpvm_stream_ring_begin_pop(hpvm_stream_ring_t *ring, const void **out_slot) {
  uint64_t tail = ring->local_tail;
  for (uint32_t spins = 0;; ++spins) {
    uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    if (state & STATE_CANCELLED)
      return HPVM_STREAM_CANCELLED;
    if (has_item(ring, tail))
      break;
    if (state & STATE_CLOSED) {
      /* CLOSED was set after the last push; re-read head now that we saw it. */
      if (has_item(ring, tail))
        break;
      return HPVM_STREAM_CLOSED;
    }
    /* The producer may be waiting for space we freed but did not publish. */
    if (spins == 0)
      hpvm_stream_ring_flush_pop(ring);
    if (!ring_poll_step(spins)) {
      pthread_mutex_lock(&ring->mutex);
      atomic_fetch_or(&ring->waiting, WAITING_CONSUMER);
      while (atomic_load(&ring->state) == 0 && atomic_load(&ring->head) == tail)
        pthread_cond_wait(&ring->not_empty, &ring->mutex);
      atomic_fetch_and(&ring->waiting, ~(uint32_t)WAITING_CONSUMER);
      pthread_mutex_unlock(&ring->mutex);
    }
  }
  *out_slot = ring->slots + (tail & ring->mask) * ring->stride;
  return HPVM_STREAM_OK;
}

void hpvm_stream_ring_end_pop(hpvm_stream_ring_t *ring) {
  ring->local_tail++;
  publish_tail(ring);
}

void hpvm_stream_ring_end_pop_deferred(hpvm_stream_ring_t *ring) {
  ring->local_tail++;
  if (ring->local_tail - atomic_load_explicit(&ring->tail, memory_order_relaxed) >= RING_BATCH)
    publish_tail(ring);
}

bool hpvm_stream_ring_can_pop(hpvm_stream_ring_t *ring) {
  return atomic_load_explicit(&ring->state, memory_order_acquire) != 0 ||
         has_item(ring, ring->local_tail);
}

bool hpvm_stream_ring_can_push(hpvm_stream_ring_t *ring) {
  return atomic_load_explicit(&ring->state, memory_order_acquire) != 0 ||
         has_space(ring, ring->local_head);
}

bool hpvm_stream_ring_consumer_sleeps(hpvm_stream_ring_t *ring) {
  return (atomic_load_explicit(&ring->waiting, memory_order_relaxed) & WAITING_CONSUMER) != 0;
}

hpvm_stream_result_t hpvm_stream_ring_peek_pop(const hpvm_stream_ring_t *ring) {
  /* State first: CLOSED is set after the last push, so an empty ring seen after it is final. */
  uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
  if (state & STATE_CANCELLED)
    return HPVM_STREAM_CANCELLED;
  if (atomic_load_explicit(&ring->head, memory_order_acquire) !=
      atomic_load_explicit(&ring->tail, memory_order_relaxed))
    return HPVM_STREAM_OK;
  return state & STATE_CLOSED ? HPVM_STREAM_CLOSED : HPVM_STREAM_WOULD_BLOCK;
}

hpvm_stream_result_t hpvm_stream_ring_peek_push(const hpvm_stream_ring_t *ring) {
  uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
  if (state & STATE_CANCELLED)
    return HPVM_STREAM_CANCELLED;
  if (state & STATE_CLOSED)
    return HPVM_STREAM_CLOSED;
  if (state & STATE_ABANDONED)
    return HPVM_STREAM_OK;
  uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
  return head - tail <= ring->mask ? HPVM_STREAM_OK : HPVM_STREAM_WOULD_BLOCK;
}

hpvm_stream_result_t hpvm_stream_ring_poll_pop(hpvm_stream_ring_t *ring) {
  uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
  if (state & STATE_CANCELLED)
    return HPVM_STREAM_CANCELLED;
  if (has_item(ring, ring->local_tail))
    return HPVM_STREAM_OK;
  if (!(state & STATE_CLOSED))
    return HPVM_STREAM_WOULD_BLOCK;
  /* CLOSED was set after the last push; re-read head now that we saw it. */
  return has_item(ring, ring->local_tail) ? HPVM_STREAM_OK : HPVM_STREAM_CLOSED;
}

hpvm_stream_result_t hpvm_stream_ring_poll_push(hpvm_stream_ring_t *ring) {
  uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
  if (state & STATE_CANCELLED)
    return HPVM_STREAM_CANCELLED;
  if (state & STATE_CLOSED)
    return HPVM_STREAM_CLOSED;
  if (state & STATE_ABANDONED)
    return HPVM_STREAM_OK;
  return has_space(ring, ring->local_head) ? HPVM_STREAM_OK : HPVM_STREAM_WOULD_BLOCK;
}

hpvm_stream_result_t hpvm_stream_ring_pop(hpvm_stream_ring_t *ring, void *out_item) {
  const void *slot;
  hpvm_stream_result_t result = hpvm_stream_ring_begin_pop(ring, &slot);
  if (result != HPVM_STREAM_OK)
    return result;
  if (ring->element_size)
    memcpy(out_item, slot, ring->element_size);
  hpvm_stream_ring_end_pop(ring);
  return HPVM_STREAM_OK;
}

static void set_state(hpvm_stream_ring_t *ring, uint32_t flag) {
  atomic_fetch_or(&ring->state, flag);
  /* Broadcast under the mutex: a side between its state check and cond_wait holds it. */
  pthread_mutex_lock(&ring->mutex);
  pthread_cond_broadcast(&ring->not_full);
  pthread_cond_broadcast(&ring->not_empty);
  pthread_mutex_unlock(&ring->mutex);
}

void hpvm_stream_ring_close(hpvm_stream_ring_t *ring) {
  hpvm_stream_ring_flush_push(ring); /* close is a producer call: its deferred items count */
  set_state(ring, STATE_CLOSED);
}
void hpvm_stream_ring_abandon(hpvm_stream_ring_t *ring) { set_state(ring, STATE_ABANDONED); }
void hpvm_stream_ring_cancel(hpvm_stream_ring_t *ring) { set_state(ring, STATE_CANCELLED); }
