/* last_use.c - hpvm_rt_buffer_last_use: which receiver of a buffer that fans out to several
 * leaves frees it.
 *
 * A leaf's output that goes along several edges is read by every receiver; where the graph
 * does not order them (a residual block's two branches from one input, an inception module's
 * four), none can free it alone. Each receiver reports here as it returns; the one that
 * completes the count frees the buffer. The counts in progress live in a table by address (a
 * few buffers at a time: one per fanned-out edge set in flight), guarded by one mutex, whose
 * lock and unlock order every receiver's reads before the free. */
#include "hpvm/hpvm_rt.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct count_t {
  const void *buffer;
  int64_t done; /* receivers that reported so far */
} count_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static count_t *counts;
static size_t used, capacity;

/* Records one more receiver of `buffer` done; returns the count so far, or 0 without memory. */
static int64_t count_one(const void *buffer) {
  for (size_t i = 0; i < used; ++i)
    if (counts[i].buffer == buffer)
      return ++counts[i].done;
  if (used == capacity) {
    size_t grown = capacity ? 2 * capacity : 16;
    count_t *more = realloc(counts, grown * sizeof(count_t));
    if (!more)
      return 0;
    counts = more;
    capacity = grown;
  }
  counts[used++] = (count_t){buffer, 1};
  return 1;
}

/* Drops the count of `buffer` (complete). */
static void forget(const void *buffer) {
  for (size_t i = 0; i < used; ++i)
    if (counts[i].buffer == buffer) {
      counts[i] = counts[--used];
      return;
    }
}

int32_t hpvm_rt_buffer_last_use(const void *buffer, int64_t receivers) {
  if (receivers <= 1)
    return 1;
  pthread_mutex_lock(&lock);
  int64_t done = count_one(buffer);
  int last = done >= receivers;
  if (last)
    forget(buffer);
  pthread_mutex_unlock(&lock);
  return last;
}
