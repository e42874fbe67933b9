/* ring_test.c - the SPSC ring: order, no loss or duplication, close, abandon, cancel, sizes. */
#include <pthread.h>

#include "stream/ring.h"
#include "test_util.h"

typedef struct transfer_t {
  hpvm_stream_ring_t *ring;
  uint64_t count;
  size_t size;
  bool deferred; /* batched publication, as pipeline stages use it */
} transfer_t;

/* Item i is `size` bytes whose content is a function of i, so any loss, duplication,
 * reordering or tearing shows up in the consumer's check. */
static void fill(unsigned char *item, size_t size, uint64_t index) {
  for (size_t b = 0; b < size; ++b)
    item[b] = (unsigned char)(index * 31 + b * 7 + 1);
}

static void *producer(void *arg) {
  transfer_t *transfer = arg;
  unsigned char item[4096];
  for (uint64_t i = 0; i < transfer->count; ++i) {
    fill(item, transfer->size, i);
    if (transfer->deferred) {
      void *slot;
      CHECK_EQ_INT(hpvm_stream_ring_begin_push(transfer->ring, &slot), HPVM_STREAM_OK);
      memcpy(slot, item, transfer->size);
      hpvm_stream_ring_end_push_deferred(transfer->ring);
    } else {
      CHECK_EQ_INT(hpvm_stream_ring_push(transfer->ring, item), HPVM_STREAM_OK);
    }
  }
  hpvm_stream_ring_close(transfer->ring);
  return NULL;
}

static void run_transfer(size_t size, uint32_t capacity, uint64_t count, bool deferred) {
  hpvm_stream_ring_t *ring;
  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), size, capacity, &ring));
  transfer_t transfer = {ring, count, size, deferred};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, producer, &transfer) == 0);
  unsigned char item[4096], expected[4096];
  uint64_t received = 0;
  for (;;) {
    hpvm_stream_result_t result;
    if (deferred) {
      /* Deferred pops: the producer only sees the space after a batch or our next wait. */
      const void *slot;
      result = hpvm_stream_ring_begin_pop(ring, &slot);
      if (result == HPVM_STREAM_OK) {
        memcpy(item, slot, size);
        hpvm_stream_ring_end_pop_deferred(ring);
      }
    } else {
      result = hpvm_stream_ring_pop(ring, item);
    }
    if (result == HPVM_STREAM_CLOSED)
      break;
    CHECK_EQ_INT(result, HPVM_STREAM_OK);
    fill(expected, size, received);
    CHECK(memcmp(item, expected, size) == 0);
    ++received;
  }
  CHECK_EQ_INT(received, count);
  /* End of stream is sticky. */
  CHECK_EQ_INT(hpvm_stream_ring_pop(ring, item), HPVM_STREAM_CLOSED);
  pthread_join(thread, NULL);
  hpvm_stream_ring_destroy(ring);
}

static void *blocked_pop(void *arg) {
  unsigned char item[8];
  return (void *)(uintptr_t)hpvm_stream_ring_pop(arg, item);
}

static void *blocked_push(void *arg) {
  unsigned char item[8] = {0};
  return (void *)(uintptr_t)hpvm_stream_ring_push(arg, item);
}

static void test_cancel_wakes_everyone(void) {
  hpvm_stream_ring_t *empty, *full;
  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), 8, 2, &empty));
  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), 8, 2, &full));
  CHECK_EQ_INT(hpvm_stream_ring_capacity(full), 2);
  unsigned char item[8] = {0};
  CHECK_EQ_INT(hpvm_stream_ring_push(full, item), HPVM_STREAM_OK);
  CHECK_EQ_INT(hpvm_stream_ring_push(full, item), HPVM_STREAM_OK);
  pthread_t popper, pusher;
  CHECK(pthread_create(&popper, NULL, blocked_pop, empty) == 0);
  CHECK(pthread_create(&pusher, NULL, blocked_push, full) == 0);
  /* Whether or not they are asleep yet, cancel must make both return. */
  hpvm_stream_ring_cancel(empty);
  hpvm_stream_ring_cancel(full);
  void *pop_result, *push_result;
  pthread_join(popper, &pop_result);
  pthread_join(pusher, &push_result);
  CHECK_EQ_INT((uintptr_t)pop_result, HPVM_STREAM_CANCELLED);
  CHECK_EQ_INT((uintptr_t)push_result, HPVM_STREAM_CANCELLED);
  hpvm_stream_ring_destroy(empty);
  hpvm_stream_ring_destroy(full);
}

static void test_close_and_abandon(void) {
  hpvm_stream_ring_t *ring;
  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), 4, 16, &ring));
  CHECK_EQ_INT(hpvm_stream_ring_capacity(ring), 16);
  uint32_t value = 5, out = 0;
  CHECK_EQ_INT(hpvm_stream_ring_push(ring, &value), HPVM_STREAM_OK);
  hpvm_stream_ring_close(ring);
  CHECK_EQ_INT(hpvm_stream_ring_push(ring, &value), HPVM_STREAM_CLOSED);
  CHECK_EQ_INT(hpvm_stream_ring_pop(ring, &out), HPVM_STREAM_OK); /* items before close survive */
  CHECK_EQ_INT(out, 5);
  CHECK_EQ_INT(hpvm_stream_ring_pop(ring, &out), HPVM_STREAM_CLOSED);
  hpvm_stream_ring_destroy(ring);

  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), 4, 2, &ring));
  hpvm_stream_ring_abandon(ring);
  for (int i = 0; i < 100; ++i) /* never blocks although capacity is 2 */
    CHECK_EQ_INT(hpvm_stream_ring_push(ring, &value), HPVM_STREAM_OK);
  hpvm_stream_ring_destroy(ring);
}

static void test_sizes(void) {
  hpvm_stream_ring_t *ring;
  CHECK_CODE(hpvm_stream_ring_create(hpvm_allocator_system(), SIZE_MAX - 4, 16, &ring),
             HPVM_STATUS_RESOURCE_EXHAUSTED);
  CHECK_CODE(hpvm_stream_ring_create(hpvm_allocator_system(), 8, (1u << 30) + 1, &ring),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_stream_ring_create(hpvm_allocator_system(), 0, 3, &ring));
  CHECK_EQ_INT(hpvm_stream_ring_capacity(ring), 4);
  CHECK_EQ_INT(hpvm_stream_ring_push(ring, NULL), HPVM_STREAM_OK); /* zero-size items count */
  CHECK_EQ_INT(hpvm_stream_ring_pop(ring, NULL), HPVM_STREAM_OK);
  hpvm_stream_ring_destroy(ring);
}

int main(void) {
  uint64_t count = test_scaled(200000);
  run_transfer(8, 16, count, false);
  run_transfer(1, 2, count / 4, false);      /* capacity 2: constant blocking on both sides */
  run_transfer(13, 64, count / 4, false);    /* odd element size */
  run_transfer(4096, 16, count / 20, false); /* page-size items */
  run_transfer(0, 16, count / 4, false);
  /* Batched publication must never make a side wait for work the other side holds back:
   * capacity 2 is far below the batch size, so every wait depends on the flush-before-wait. */
  run_transfer(8, 2, count / 4, true);
  run_transfer(8, 64, count, true);
  run_transfer(100, 16, count / 4, true);
  test_cancel_wakes_everyone();
  test_close_and_abandon();
  test_sizes();
  printf("ring_test: OK\n");
  return 0;
}
