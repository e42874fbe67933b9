/* pool.c - persistent workers, a FIFO task queue and a work-stealing parallel-for. */
#define _GNU_SOURCE
#include "sched/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/platform.h"
#include "base/status.h"

/* Concurrent parallel-fors (from different threads or nesting levels) each need a slot; when
 * all are taken a parallel-for simply runs on its caller, which is still correct. */
#define HPVM_POOL_MAX_JOBS 64
/* Chunks per participant: enough to balance uneven bodies, few enough to keep the per-chunk
 * CAS cheap relative to a chunk. */
#define HPVM_POOL_CHUNKS_PER_PARTICIPANT 4
/* Grids of HPVM_POOL_PROBE_MIN_PER_PARTICIPANT per participant to HPVM_POOL_PROBE_MAX_INSTANCES
 * instances are probed first (see hpvm_sched_pool_parallel_for): a grid whose probed cost is
 * below HPVM_POOL_INLINE_NS runs on the calling thread, because waking the workers and joining
 * them (several microseconds) would cost more than the work.  The probe times at most
 * HPVM_POOL_PROBE_INSTANCES instances, first HPVM_POOL_PROBE_FIRST_BATCH of them.  Smaller
 * grids are not probed: that first batch would be too large a share of the work to run alone. */
#define HPVM_POOL_PROBE_MAX_INSTANCES 16384
#define HPVM_POOL_PROBE_MIN_PER_PARTICIPANT 32
#define HPVM_POOL_PROBE_INSTANCES 64
#define HPVM_POOL_PROBE_FIRST_BATCH 8
#define HPVM_POOL_PROBE_EARLY_STOP 4
#define HPVM_POOL_INLINE_NS 20000u
/* How long an idle thread spins before sleeping.  Back-to-back parallel-fors (the common case
 * in compiled loops) then never pay a futex wake-up; a truly idle pool sleeps. */
#define HPVM_POOL_DEFAULT_SPIN_NS 100000u
#define HPVM_POOL_MAX_SPIN_US 1000000u

/* One participant's remaining chunks [begin, end) packed in 64 bits so that the owner and
 * thieves can update it with a single CAS.  Padded: owners hammer their own range. */
typedef struct padded_range_t {
  _Alignas(64) _Atomic uint64_t value;
} padded_range_t;

typedef struct parallel_for_job_t {
  hpvm_rt_parallel_for_fn_t body;
  void *context;
  uint32_t rank;
  int64_t extent[3];
  int64_t tile_size[3];
  uint64_t tiles[3];
  /* Published to the workers (their chunks run under guards of their own); before that, and
   * for grids that never are, only the calling thread runs the body. */
  bool shared;
  /* The first error a body of a shared job raised (hpvm_rt_check_at, on whichever thread ran
   * it), which the parallel-for returns to its caller; the chunks not started after it are
   * skipped. */
  _Atomic(hpvm_status_t) *error;
} parallel_for_job_t;

typedef struct body_call_t {
  const parallel_for_job_t *job;
  const hpvm_rt_instance_range_t *range;
} body_call_t;

static void call_body(void **args) {
  const body_call_t *call = args[0];
  call->job->body(call->job->context, call->range);
}

/* Runs the body on one box. Compiled code reports an error with hpvm_rt_check_at, which
 * returns to the innermost guard of its thread: for a job only this thread runs, the caller's
 * (nothing of the job is left behind); for a shared one, a guard here, since unwinding the
 * caller would leave a job the workers are still running (and a worker has no caller's guard
 * at all). The guard costs a setjmp per box, which the probe of small grids would count. */
static void run_body(const parallel_for_job_t *job, const hpvm_rt_instance_range_t *range) {
  if (!job->shared) {
    job->body(job->context, range);
    return;
  }
  if (atomic_load_explicit(job->error, memory_order_acquire))
    return;
  body_call_t call = {job, range};
  void *args[1] = {&call};
  hpvm_status_t status = hpvm_status_guarded_call(call_body, args);
  hpvm_status_t none = NULL;
  if (status && !atomic_compare_exchange_strong(job->error, &none, status))
    hpvm_status_free(status);
}

/* Everything other threads touch lives here, in pool-owned memory, never on the owner's stack:
 * the owner may return as soon as `users` drops to zero. */
typedef struct job_slot_t {
  _Alignas(64) _Atomic(parallel_for_job_t *) job;
  _Atomic uint32_t users;   /* threads between "read job" and "done with job" */
  _Atomic bool claimed;     /* an owner holds this slot */
  _Atomic int64_t remaining; /* chunks not yet executed */
  _Atomic bool owner_sleeping;
  _Atomic uint32_t owner; /* the owner's participant index (0: a thread outside the pool) */
  pthread_mutex_t mutex;
  pthread_cond_t done;
  padded_range_t *ranges; /* participant_count entries */
} job_slot_t;

/* What a worker thread needs to start; owned by the pool (threads may start late). */
typedef struct worker_start_t {
  struct hpvm_sched_pool_t *pool;
  uint32_t index;
} worker_start_t;

struct hpvm_sched_pool_t {
  hpvm_allocator_t allocator;
  worker_start_t *starts;
  uint32_t worker_count;
  uint32_t participant_count; /* workers + one outside caller */
  uint64_t spin_ns;
  pthread_t *threads;
  uint32_t started_threads;
  job_slot_t slots[HPVM_POOL_MAX_JOBS];
  _Atomic uint32_t slot_limit; /* slots at or past this index were never used */
  _Atomic uint32_t active_jobs;

  pthread_mutex_t queue_mutex;
  hpvm_sched_task_t *queue_head;
  hpvm_sched_task_t *queue_tail;
  _Atomic uint32_t queued;

  _Alignas(64) _Atomic uint32_t epoch; /* bumped on every publication of work */
  _Atomic uint32_t sleepers;
  _Atomic bool stopping;
  _Atomic bool helping; /* an outside thread runs parallel-for chunks as participant 0 */
  pthread_mutex_t sleep_mutex;
  pthread_cond_t wake;
};

/* Which pool (if any) the current thread works for, and its participant index (1..workers);
 * threads outside the pool use index 0. */
static _Thread_local hpvm_sched_pool_t *tls_pool;
static _Thread_local uint32_t tls_index;
static _Thread_local const _Atomic uint32_t *tls_caller_load;

void hpvm_sched_pool_bind_caller_load(const _Atomic uint32_t *running) { tls_caller_load = running; }

static inline uint64_t range_pack(uint32_t begin, uint32_t end) {
  return ((uint64_t)begin << 32) | end;
}
static inline uint32_t range_begin(uint64_t range) { return (uint32_t)(range >> 32); }
static inline uint32_t range_end(uint64_t range) { return (uint32_t)range; }

static void pool_notify(hpvm_sched_pool_t *pool) {
  /* seq_cst pairs with the sleeper's increment-then-check in worker_sleep (Dekker): either
   * we see the sleeper and wake it, or it sees the new epoch and does not sleep. */
  atomic_fetch_add(&pool->epoch, 1);
  if (atomic_load(&pool->sleepers) != 0) {
    pthread_mutex_lock(&pool->sleep_mutex);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->sleep_mutex);
  }
}

/*===------------------------------------------------------------------===*
 * Parallel-for
 *===------------------------------------------------------------------===*/

/* The box of instances of chunk `chunk`. */
static void chunk_range(const parallel_for_job_t *job, uint64_t chunk, uint32_t worker,
                        hpvm_rt_instance_range_t *out) {
  hpvm_rt_instance_range_t range;
  range.rank = job->rank;
  range.worker_index = worker;
  uint64_t rest = chunk;
  for (int d = 0; d < 3; ++d) {
    uint64_t tile = rest % job->tiles[d];
    rest /= job->tiles[d];
    int64_t begin = (int64_t)tile * job->tile_size[d];
    int64_t end = begin + job->tile_size[d];
    range.begin[d] = begin;
    range.end[d] = end < job->extent[d] ? end : job->extent[d];
    range.extent[d] = job->extent[d];
  }
  *out = range;
}

static void execute_chunk(const parallel_for_job_t *job, uint64_t chunk, uint32_t worker) {
  hpvm_rt_instance_range_t range;
  chunk_range(job, chunk, worker, &range);
  run_body(job, &range);
}

/* The probe: runs the first row of chunk 0 in two batches, at most
 * HPVM_POOL_PROBE_INSTANCES of them, and stops as soon as the grid is known to cost more than
 * HPVM_POOL_INLINE_NS at the rate measured so far.  Returns whether the whole grid is cheap
 * (below HPVM_POOL_INLINE_NS); `rest` receives the boxes that make up the rest of chunk 0 (the
 * rest of that row, the rest of its rows, the rest of its planes). */
static bool run_probe(const parallel_for_job_t *job, uint32_t me, int64_t total,
                      hpvm_rt_instance_range_t rest[3], uint32_t *out_rest_count) {
  hpvm_rt_instance_range_t chunk, probe;
  chunk_range(job, 0, me, &chunk);
  probe = chunk;
  probe.end[1] = probe.begin[1] + 1;
  probe.end[2] = probe.begin[2] + 1;
  int64_t last = chunk.end[0] - chunk.begin[0] > HPVM_POOL_PROBE_INSTANCES
                     ? chunk.begin[0] + HPVM_POOL_PROBE_INSTANCES
                     : chunk.end[0];
  /* Two batches: HPVM_POOL_PROBE_FIRST_BATCH instances, after which a clearly costly grid
   * stops the probe, then the rest of the probe in one call (every call and clock read adds
   * to the estimate, which decides near the line). */
  uint64_t start = hpvm_platform_now_ns(), estimate = 0;
  probe.end[0] = chunk.begin[0];
  for (int64_t batch = HPVM_POOL_PROBE_FIRST_BATCH; probe.end[0] < last;
       batch = HPVM_POOL_PROBE_INSTANCES) {
    probe.begin[0] = probe.end[0];
    probe.end[0] = probe.begin[0] + batch < last ? probe.begin[0] + batch : last;
    run_body(job, &probe);
    uint64_t probed = (uint64_t)(probe.end[0] - chunk.begin[0]);
    estimate = (hpvm_platform_now_ns() - start) * (uint64_t)total / probed;
    /* A small batch overestimates (the clock read and the call are in it): stop early only
     * when the grid is clearly costly; decide near the line on the whole probe. */
    if (estimate >= HPVM_POOL_PROBE_EARLY_STOP * (uint64_t)HPVM_POOL_INLINE_NS)
      break;
  }
  bool cheap = estimate < HPVM_POOL_INLINE_NS;
  uint32_t n = 0;
  if (probe.end[0] < chunk.end[0]) { /* the rest of the first row */
    rest[n] = probe;
    rest[n].begin[0] = probe.end[0];
    rest[n].end[0] = chunk.end[0];
    ++n;
  }
  if (probe.end[1] < chunk.end[1]) { /* the other rows of the first plane */
    rest[n] = chunk;
    rest[n].begin[1] = probe.end[1];
    rest[n].end[2] = chunk.begin[2] + 1;
    ++n;
  }
  if (probe.end[2] < chunk.end[2]) { /* the other planes */
    rest[n] = chunk;
    rest[n].begin[2] = probe.end[2];
    ++n;
  }
  *out_rest_count = n;
  return cheap;
}

static void run_boxes(const parallel_for_job_t *job, const hpvm_rt_instance_range_t *boxes,
                      uint32_t count) {
  for (uint32_t i = 0; i < count; ++i)
    run_body(job, &boxes[i]);
}

/* Runs chunks of `job` as participant `me` until no range anywhere has chunks left: first our
 * own range from the front, then half of the largest other range from the back.  Returns the
 * number of chunks executed. */
static int64_t participate(const hpvm_sched_pool_t *pool, job_slot_t *slot,
                           const parallel_for_job_t *job, uint32_t me) {
  padded_range_t *ranges = slot->ranges;
  uint32_t count = pool->participant_count;
  int64_t executed = 0;
  for (;;) {
    uint64_t own = atomic_load_explicit(&ranges[me].value, memory_order_acquire);
    while (range_begin(own) < range_end(own)) {
      uint32_t begin = range_begin(own);
      if (atomic_compare_exchange_weak_explicit(&ranges[me].value, &own,
                                                range_pack(begin + 1, range_end(own)),
                                                memory_order_acq_rel, memory_order_acquire)) {
        execute_chunk(job, begin, me);
        ++executed;
        own = atomic_load_explicit(&ranges[me].value, memory_order_acquire);
      }
    }
    uint32_t victim = count;
    uint64_t victim_range = 0;
    uint32_t victim_size = 0;
    for (uint32_t i = 1; i < count; ++i) {
      uint32_t candidate = (me + i) % count;
      uint64_t range = atomic_load_explicit(&ranges[candidate].value, memory_order_acquire);
      uint32_t size = range_end(range) - range_begin(range);
      if (range_begin(range) < range_end(range) && size > victim_size) {
        victim = candidate;
        victim_range = range;
        victim_size = size;
      }
    }
    if (victim == count)
      return executed;
    uint32_t take = (victim_size + 1) / 2;
    uint32_t split = range_end(victim_range) - take;
    if (atomic_compare_exchange_strong_explicit(
            &ranges[victim].value, &victim_range, range_pack(range_begin(victim_range), split),
            memory_order_acq_rel, memory_order_acquire)) {
      /* Our range is empty, so only we may write it; thieves only CAS non-empty ranges. */
      atomic_store_explicit(&ranges[me].value, range_pack(split, split + take),
                            memory_order_release);
    }
  }
}

static void finish_participation(job_slot_t *slot, int64_t executed) {
  if (executed == 0)
    return;
  int64_t before = atomic_fetch_sub(&slot->remaining, executed);
  if (before == executed && atomic_load(&slot->owner_sleeping)) {
    pthread_mutex_lock(&slot->mutex);
    pthread_cond_signal(&slot->done);
    pthread_mutex_unlock(&slot->mutex);
  }
}

/* A worker, or the helping outside thread (me 0: only jobs a worker owns, whose participant
 * 0 is nobody else), looks for published jobs with chunks left.  Returns true if it executed
 * any. */
static bool try_parallel_for(hpvm_sched_pool_t *pool, uint32_t me) {
  if (atomic_load_explicit(&pool->active_jobs, memory_order_acquire) == 0)
    return false;
  bool worked = false;
  uint32_t limit = atomic_load_explicit(&pool->slot_limit, memory_order_acquire);
  for (uint32_t i = 0; i < limit; ++i) {
    job_slot_t *slot = &pool->slots[i];
    if (!atomic_load_explicit(&slot->job, memory_order_relaxed))
      continue;
    atomic_fetch_add(&slot->users, 1);
    parallel_for_job_t *job = atomic_load(&slot->job);
    if (job && (me != 0 || atomic_load(&slot->owner) != 0)) {
      int64_t executed = participate(pool, slot, job, me);
      finish_participation(slot, executed);
      worked |= executed > 0;
    }
    atomic_fetch_sub(&slot->users, 1);
  }
  return worked;
}

static void wait_job_done(hpvm_sched_pool_t *pool, job_slot_t *slot) {
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    if (atomic_load(&slot->remaining) == 0)
      return;
    hpvm_platform_cpu_relax();
    if ((spins & 63) == 63) {
      uint64_t now = hpvm_platform_now_ns();
      if (!start)
        start = now;
      else if (now - start > pool->spin_ns)
        break;
    }
  }
  pthread_mutex_lock(&slot->mutex);
  atomic_store(&slot->owner_sleeping, true);
  while (atomic_load(&slot->remaining) != 0)
    pthread_cond_wait(&slot->done, &slot->mutex);
  atomic_store(&slot->owner_sleeping, false);
  pthread_mutex_unlock(&slot->mutex);
}

static job_slot_t *claim_slot(hpvm_sched_pool_t *pool) {
  for (uint32_t i = 0; i < HPVM_POOL_MAX_JOBS; ++i) {
    job_slot_t *slot = &pool->slots[i];
    bool expected = false;
    if (atomic_load_explicit(&slot->claimed, memory_order_relaxed))
      continue;
    if (atomic_compare_exchange_strong(&slot->claimed, &expected, true)) {
      uint32_t limit = atomic_load(&pool->slot_limit);
      while (limit < i + 1 && !atomic_compare_exchange_weak(&pool->slot_limit, &limit, i + 1)) {
      }
      return slot;
    }
  }
  return NULL;
}

/* Splits the grid into about `target` boxes, cutting the outermost dimension first so that
 * boxes stay contiguous in memory for row-major data. */
static uint64_t tile_grid(parallel_for_job_t *job, uint64_t target) {
  uint64_t left = target;
  for (int d = 2; d >= 0; --d) {
    int64_t extent = job->extent[d];
    uint64_t tiles = left < (uint64_t)extent ? left : (uint64_t)extent;
    if (tiles == 0)
      tiles = 1;
    int64_t size = (int64_t)(((uint64_t)extent + tiles - 1) / tiles);
    job->tile_size[d] = size;
    job->tiles[d] = ((uint64_t)extent + (uint64_t)size - 1) / (uint64_t)size;
    left = (left + job->tiles[d] - 1) / job->tiles[d];
  }
  return job->tiles[0] * job->tiles[1] * job->tiles[2];
}

hpvm_status_t hpvm_sched_pool_parallel_for(hpvm_sched_pool_t *pool, uint32_t rank,
                                           const int64_t *extents, hpvm_rt_parallel_for_fn_t body,
                                           void *context,
                                           const hpvm_sched_parallel_for_options_t *options) {
  if (rank < 1 || rank > 3)
    return HPVM_STATUS(INVALID_ARGUMENT, "parallel-for rank must be 1..3, got %u", rank);
  if (!extents || !body)
    return HPVM_STATUS(INVALID_ARGUMENT, "parallel-for needs extents and a body");
  parallel_for_job_t job;
  memset(&job, 0, sizeof(job));
  _Atomic(hpvm_status_t) error = NULL;
  job.error = &error;
  job.body = body;
  job.context = context;
  job.rank = rank;
  int64_t total = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    int64_t extent = d < rank ? extents[d] : 1;
    if (extent < 0)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "parallel-for extent %u is negative (%lld); expected a count of "
                         "instances, 0 to 2^63-1 (a Hetero-C++ parallel loop of 2^63 "
                         "iterations or more has the extent -1)",
                         d, (long long)extent);
    job.extent[d] = extent;
    if (__builtin_mul_overflow(total, extent, &total))
      return HPVM_STATUS(INVALID_ARGUMENT, "parallel-for grid has more than 2^63 instances");
  }
  if (total == 0)
    return NULL;

  uint32_t me = tls_pool == pool ? tls_index : 0;
  int64_t grain = options && options->grain > 0 ? options->grain : 1;
  uint64_t target = (uint64_t)pool->participant_count * HPVM_POOL_CHUNKS_PER_PARTICIPANT;
  uint64_t by_grain = (uint64_t)((total + grain - 1) / grain);
  if (by_grain < target)
    target = by_grain;
  if (pool->worker_count == 0)
    target = 1;
  if (tls_caller_load &&
      atomic_load_explicit(tls_caller_load, memory_order_relaxed) >= pool->participant_count)
    target = 1;
  uint64_t chunks = tile_grid(&job, target);

  /* Small grids (a streaming stage's per-item node, a tile's grid) are probed: when the
   * whole grid is cheap it runs here.  Otherwise the workers get chunks 1.. at once, and
   * this thread runs the rest of chunk 0 before it joins them: the probe delays them by the
   * instances it ran, about HPVM_POOL_INLINE_NS or the first batch at most. */
  uint64_t first = 0;
  hpvm_rt_instance_range_t rest[3] = {0};
  uint32_t rest_count = 0;
  if (chunks > 1 && pool->worker_count > 0 && total <= HPVM_POOL_PROBE_MAX_INSTANCES &&
      total >= (int64_t)pool->participant_count * HPVM_POOL_PROBE_MIN_PER_PARTICIPANT) {
    first = 1;
    if (run_probe(&job, me, total, rest, &rest_count)) {
      run_boxes(&job, rest, rest_count);
      for (uint64_t chunk = 1; chunk < chunks; ++chunk)
        execute_chunk(&job, chunk, me);
      return atomic_load(&error);
    }
  }

  job_slot_t *slot = chunks > 1 ? claim_slot(pool) : NULL;
  if (!slot) {
    run_boxes(&job, rest, rest_count);
    for (uint64_t chunk = first; chunk < chunks; ++chunk)
      execute_chunk(&job, chunk, me);
    return atomic_load(&error);
  }

  /* The chunks are shared as if chunk 0 were still to run; the probed chunk 0 is the first
   * of participant 0's share (the caller's, unless a worker calls), which runs it below. */
  uint32_t count = pool->participant_count;
  uint64_t left = chunks - first;
  for (uint32_t p = 0; p < count; ++p) {
    uint32_t begin = (uint32_t)(chunks * p / count);
    uint32_t end = (uint32_t)(chunks * (p + 1) / count);
    if (begin < first)
      begin = (uint32_t)first;
    if (end < begin)
      end = begin;
    atomic_store_explicit(&slot->ranges[p].value, range_pack(begin, end), memory_order_relaxed);
  }
  atomic_store_explicit(&slot->remaining, (int64_t)left, memory_order_relaxed);
  atomic_store_explicit(&slot->owner, me, memory_order_relaxed);
  job.shared = true;
  atomic_store(&slot->job, &job);
  atomic_fetch_add(&pool->active_jobs, 1);
  pool_notify(pool);

  run_boxes(&job, rest, rest_count); /* the rest of the probed chunk */
  finish_participation(slot, participate(pool, slot, &job, me));
  wait_job_done(pool, slot);

  atomic_store(&slot->job, NULL);
  atomic_fetch_sub(&pool->active_jobs, 1);
  /* Workers that read the job pointer before we cleared it may still be inside participate;
   * the job lives on our stack, so wait them out (they have nothing left to run). */
  for (uint32_t spins = 0; atomic_load(&slot->users) != 0; ++spins) {
    if (spins < 1024)
      hpvm_platform_cpu_relax();
    else
      sched_yield();
  }
  atomic_store_explicit(&slot->claimed, false, memory_order_release);
  return atomic_load(&error);
}

/*===------------------------------------------------------------------===*
 * Task queue
 *===------------------------------------------------------------------===*/

void hpvm_sched_pool_submit(hpvm_sched_pool_t *pool, hpvm_sched_task_t *task) {
  task->next = NULL;
  pthread_mutex_lock(&pool->queue_mutex);
  if (pool->queue_tail)
    pool->queue_tail->next = task;
  else
    pool->queue_head = task;
  pool->queue_tail = task;
  atomic_fetch_add(&pool->queued, 1);
  pthread_mutex_unlock(&pool->queue_mutex);
  pool_notify(pool);
}

bool hpvm_sched_pool_run_one(hpvm_sched_pool_t *pool) {
  if (atomic_load_explicit(&pool->queued, memory_order_acquire) == 0)
    return false;
  pthread_mutex_lock(&pool->queue_mutex);
  hpvm_sched_task_t *task = pool->queue_head;
  if (task) {
    pool->queue_head = task->next;
    if (!pool->queue_head)
      pool->queue_tail = NULL;
    atomic_fetch_sub(&pool->queued, 1);
  }
  pthread_mutex_unlock(&pool->queue_mutex);
  if (!task)
    return false;
  task->run(task);
  return true;
}

/*===------------------------------------------------------------------===*
 * Workers
 *===------------------------------------------------------------------===*/

/* Spins until the epoch moves past `seen` (true) or the spin budget is spent (false). */
static bool spin_for_work(hpvm_sched_pool_t *pool, uint32_t seen) {
  uint64_t start = hpvm_platform_now_ns();
  for (uint32_t spins = 1;; ++spins) {
    if (atomic_load_explicit(&pool->epoch, memory_order_acquire) != seen)
      return true;
    hpvm_platform_cpu_relax();
    if ((spins & 255) == 0 && hpvm_platform_now_ns() - start > pool->spin_ns)
      return false;
  }
}

bool hpvm_sched_pool_help(hpvm_sched_pool_t *pool) {
  bool worked = false, expected = false;
  /* A worker takes chunks of grids in its own loop, as its own participant. */
  if (tls_pool != pool && atomic_compare_exchange_strong(&pool->helping, &expected, true)) {
    worked = try_parallel_for(pool, 0);
    atomic_store(&pool->helping, false);
  }
  return worked || hpvm_sched_pool_run_one(pool);
}

uint32_t hpvm_sched_pool_epoch(hpvm_sched_pool_t *pool) { return atomic_load(&pool->epoch); }

void hpvm_sched_pool_notify(hpvm_sched_pool_t *pool) { pool_notify(pool); }

/* Sleeps until the epoch moves past `seen` or the pool stops (the sleepers' side of
 * pool_notify). */
static void sleep_for_work(hpvm_sched_pool_t *pool, uint32_t seen) {
  pthread_mutex_lock(&pool->sleep_mutex);
  atomic_fetch_add(&pool->sleepers, 1);
  while (atomic_load(&pool->epoch) == seen && !atomic_load(&pool->stopping))
    pthread_cond_wait(&pool->wake, &pool->sleep_mutex);
  atomic_fetch_sub(&pool->sleepers, 1);
  pthread_mutex_unlock(&pool->sleep_mutex);
}

void hpvm_sched_pool_idle(hpvm_sched_pool_t *pool, uint32_t seen) {
  if (!spin_for_work(pool, seen))
    sleep_for_work(pool, seen);
}

static void *worker_main(void *arg) {
  worker_start_t start = *(worker_start_t *)arg;
  hpvm_sched_pool_t *pool = start.pool;
  tls_pool = pool;
  tls_index = start.index;
  for (;;) {
    uint32_t seen = atomic_load(&pool->epoch);
    if (try_parallel_for(pool, start.index) || hpvm_sched_pool_run_one(pool))
      continue;
    if (atomic_load(&pool->stopping) && atomic_load(&pool->queued) == 0)
      break;
    hpvm_sched_pool_idle(pool, seen);
  }
  return NULL;
}

uint32_t hpvm_sched_pool_worker_count(const hpvm_sched_pool_t *pool) { return pool->worker_count; }

static void pool_free(hpvm_sched_pool_t *pool) {
  for (uint32_t i = 0; i < HPVM_POOL_MAX_JOBS; ++i) {
    pthread_mutex_destroy(&pool->slots[i].mutex);
    pthread_cond_destroy(&pool->slots[i].done);
    hpvm_allocator_free_aligned(pool->allocator, pool->slots[i].ranges);
  }
  pthread_mutex_destroy(&pool->queue_mutex);
  pthread_mutex_destroy(&pool->sleep_mutex);
  pthread_cond_destroy(&pool->wake);
  hpvm_allocator_free(pool->allocator, pool->threads);
  hpvm_allocator_free(pool->allocator, pool->starts);
  hpvm_allocator_free_aligned(pool->allocator, pool);
}

static void pool_stop(hpvm_sched_pool_t *pool) {
  atomic_store(&pool->stopping, true);
  pool_notify(pool);
  pthread_mutex_lock(&pool->sleep_mutex);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->sleep_mutex);
  for (uint32_t i = 0; i < pool->started_threads; ++i)
    pthread_join(pool->threads[i], NULL);
  /* With no workers (or if they all left), queued tasks still owe their owners a run. */
  while (hpvm_sched_pool_run_one(pool)) {
  }
}

hpvm_status_t hpvm_sched_pool_create(hpvm_allocator_t allocator, uint32_t worker_count,
                                     hpvm_sched_pool_t **out_pool) {
  *out_pool = NULL;
  if (worker_count > 4096)
    return HPVM_STATUS(INVALID_ARGUMENT, "worker count %u exceeds 4096", worker_count);
  /* Up to a second: idle workers spin at full speed on their cores for this long. */
  uint64_t spin_us;
  bool spin_given;
  HPVM_RETURN_IF_ERROR(
      hpvm_platform_env_integer("HPVM_SPIN_US", 0, HPVM_POOL_MAX_SPIN_US, &spin_us, &spin_given));
  hpvm_sched_pool_t *pool;
  /* The pool and the ranges have cache-line aligned members: aligned memory (beyond malloc's). */
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_aligned(allocator, 1, sizeof(*pool),
                                                     _Alignof(hpvm_sched_pool_t), (void **)&pool));
  pool->allocator = allocator;
  pool->worker_count = worker_count;
  pool->participant_count = worker_count + 1;
  pool->spin_ns = spin_given ? spin_us * 1000u : HPVM_POOL_DEFAULT_SPIN_NS;
  pthread_mutex_init(&pool->queue_mutex, NULL);
  pthread_mutex_init(&pool->sleep_mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  for (uint32_t i = 0; i < HPVM_POOL_MAX_JOBS; ++i) {
    pthread_mutex_init(&pool->slots[i].mutex, NULL);
    pthread_cond_init(&pool->slots[i].done, NULL);
  }
  hpvm_status_t status = NULL;
  for (uint32_t i = 0; i < HPVM_POOL_MAX_JOBS && !status; ++i)
    status = hpvm_allocator_calloc_aligned(allocator, pool->participant_count,
                                           sizeof(padded_range_t), _Alignof(padded_range_t),
                                           (void **)&pool->slots[i].ranges);
  if (!status && worker_count)
    status = hpvm_allocator_calloc_array(allocator, worker_count, sizeof(pthread_t),
                                         (void **)&pool->threads);
  if (!status && worker_count)
    status = hpvm_allocator_calloc_array(allocator, worker_count, sizeof(worker_start_t),
                                         (void **)&pool->starts);
  worker_start_t *starts = pool->starts;
  for (uint32_t i = 0; !status && i < worker_count; ++i) {
    starts[i].pool = pool;
    starts[i].index = i + 1;
    int error = pthread_create(&pool->threads[i], NULL, worker_main, &starts[i]);
    if (error)
      status = HPVM_STATUS(RESOURCE_EXHAUSTED, "cannot start worker thread %u: %s", i,
                           strerror(error));
    else
      pool->started_threads++;
  }
  if (status) {
    pool_stop(pool);
    pool_free(pool);
    return status;
  }
  *out_pool = pool;
  return NULL;
}

void hpvm_sched_pool_destroy(hpvm_sched_pool_t *pool) {
  if (!pool)
    return;
  pool_stop(pool);
  pool_free(pool);
}
