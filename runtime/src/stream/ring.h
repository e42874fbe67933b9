/* ring.h - bounded single-producer/single-consumer ring of fixed-size items, blocking. */
#ifndef HPVM_STREAM_RING_H
#define HPVM_STREAM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/allocator.h"

typedef struct hpvm_stream_ring_t hpvm_stream_ring_t;

typedef enum hpvm_stream_result_e {
  HPVM_STREAM_OK = 0,
  HPVM_STREAM_CLOSED = 1,    /* pop: end of stream; push: the ring was closed */
  HPVM_STREAM_CANCELLED = 2, /* the ring was cancelled; items in it are dropped */
  HPVM_STREAM_WOULD_BLOCK = 3, /* peek only: the call would wait */
} hpvm_stream_result_t;

/* A ring of `capacity` items (rounded up to a power of two, at least 2) of `element_size`
 * bytes (any size, 0 allowed).  One thread produces and one consumes at a time; the
 * pipeline guarantees this and serialises host threads with its own locks. */
hpvm_status_t hpvm_stream_ring_create(hpvm_allocator_t allocator, size_t element_size,
                                      uint32_t capacity, hpvm_stream_ring_t **out_ring);
void hpvm_stream_ring_destroy(hpvm_stream_ring_t *ring);

size_t hpvm_stream_ring_element_size(const hpvm_stream_ring_t *ring);
uint32_t hpvm_stream_ring_capacity(const hpvm_stream_ring_t *ring);

/* Producer: reserve the next slot (blocks while full), fill it, commit.  If the consumer
 * abandoned the ring the slot is a scratch buffer and commit drops the item. */
hpvm_stream_result_t hpvm_stream_ring_begin_push(hpvm_stream_ring_t *ring, void **out_slot);
void hpvm_stream_ring_end_push(hpvm_stream_ring_t *ring);
/* Batched variants for threads that own both ends of their work (pipeline stages): the item
 * becomes visible at the latest after RING_BATCH (16) more, at the next flush, or before this
 * side waits on this ring.  A caller that may wait elsewhere (another ring, user code that
 * blocks) must flush first: the other side may be waiting for these items. */
void hpvm_stream_ring_end_push_deferred(hpvm_stream_ring_t *ring);
void hpvm_stream_ring_flush_push(hpvm_stream_ring_t *ring);
/* Copying push: begin + memcpy + end. */
hpvm_stream_result_t hpvm_stream_ring_push(hpvm_stream_ring_t *ring, const void *item);

/* Consumer: wait for the oldest item (blocks while empty), read it in place, release it.
 * CLOSED only once every item pushed before close has been popped. */
hpvm_stream_result_t hpvm_stream_ring_begin_pop(hpvm_stream_ring_t *ring, const void **out_slot);
void hpvm_stream_ring_end_pop(hpvm_stream_ring_t *ring);
hpvm_stream_result_t hpvm_stream_ring_pop(hpvm_stream_ring_t *ring, void *out_item);
void hpvm_stream_ring_end_pop_deferred(hpvm_stream_ring_t *ring);
void hpvm_stream_ring_flush_pop(hpvm_stream_ring_t *ring);

/* Whether begin_pop / begin_push would return without waiting (an item / space is there, or
 * the ring left the open state), and whether the consumer is asleep.  Producer and consumer
 * calls respectively; used to flush deferred work before blocking. */
bool hpvm_stream_ring_can_pop(hpvm_stream_ring_t *ring);
bool hpvm_stream_ring_can_push(hpvm_stream_ring_t *ring);
bool hpvm_stream_ring_consumer_sleeps(hpvm_stream_ring_t *ring);

/* Any thread, a snapshot of what is published: what begin_pop / begin_push would return now,
 * or WOULD_BLOCK.  Exact for the side that calls them while it defers nothing (it may only
 * turn from WOULD_BLOCK to something else behind its back); a hint for everyone else. */
hpvm_stream_result_t hpvm_stream_ring_peek_pop(const hpvm_stream_ring_t *ring);
hpvm_stream_result_t hpvm_stream_ring_peek_push(const hpvm_stream_ring_t *ring);
/* The same for the consumer / producer itself, deferred work included: reads the other
 * side's index only when the cached one shows no item / no space. */
hpvm_stream_result_t hpvm_stream_ring_poll_pop(hpvm_stream_ring_t *ring);
hpvm_stream_result_t hpvm_stream_ring_poll_push(hpvm_stream_ring_t *ring);

/* Producer side: no more items.  Wakes a blocked consumer. */
void hpvm_stream_ring_close(hpvm_stream_ring_t *ring);
/* Consumer side: it will pop no more; later pushes succeed and drop their item so that a
 * producer feeding several consumers is never blocked by one that left. */
void hpvm_stream_ring_abandon(hpvm_stream_ring_t *ring);
/* Either side: stop now.  Every blocked and later push/pop returns CANCELLED. */
void hpvm_stream_ring_cancel(hpvm_stream_ring_t *ring);

#endif /* HPVM_STREAM_RING_H */
