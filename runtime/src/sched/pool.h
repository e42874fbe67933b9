/* pool.h - the persistent worker pool: task queue and work-stealing parallel-for. */
#ifndef HPVM_SCHED_POOL_H
#define HPVM_SCHED_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/allocator.h"

typedef struct hpvm_sched_pool_t hpvm_sched_pool_t;

/* An intrusive unit of work.  The pool never allocates for a task: the owner embeds it in
 * its own object and must keep it alive until `run` has been called. */
typedef struct hpvm_sched_task_t {
  void (*run)(struct hpvm_sched_task_t *task);
  struct hpvm_sched_task_t *next; /* owned by the pool while queued */
} hpvm_sched_task_t;

/* Creates a pool with `worker_count` threads (0 is allowed: every task then runs on threads
 * that wait or help).  RESOURCE_EXHAUSTED when threads or memory cannot be had;
 * INVALID_ARGUMENT when HPVM_SPIN_US (microseconds idle workers spin before sleeping, 0 to
 * 1000000; default 100) is set to anything else. */
hpvm_status_t hpvm_sched_pool_create(hpvm_allocator_t allocator, uint32_t worker_count,
                                     hpvm_sched_pool_t **out_pool);
/* Runs the queued tasks to completion, joins the workers, frees the pool. */
void hpvm_sched_pool_destroy(hpvm_sched_pool_t *pool);

uint32_t hpvm_sched_pool_worker_count(const hpvm_sched_pool_t *pool);

/* Queues `task` (FIFO) and wakes a worker.  Never fails, never blocks on work. */
void hpvm_sched_pool_submit(hpvm_sched_pool_t *pool, hpvm_sched_task_t *task);
/* Pops and runs one queued task on the calling thread; false if the queue was empty.
 * This is how waiting threads help instead of idling. */
bool hpvm_sched_pool_run_one(hpvm_sched_pool_t *pool);

/* What a thread waiting on the pool's work (a host thread in hpvm_rt_wait, any thread in
 * hpvm_rt_graph_run) does instead of sleeping: it runs a queued task and, outside the pool,
 * chunks of the parallel-fors that workers started, as the participant the outside caller is
 * (a worker's grid had every participant but the waiting host thread: one thread of compute
 * with HPVM_NUM_THREADS=2). One outside thread helps with parallel-fors at a time. Returns
 * whether it ran anything. */
bool hpvm_sched_pool_help(hpvm_sched_pool_t *pool);
/* The pool's count of work publications, and a wait until it moves past `seen` (spinning as
 * the workers do, then asleep); hpvm_sched_pool_notify moves it (and wakes the sleepers) for
 * anything else a helping waiter waits on, such as the end of a launch. */
uint32_t hpvm_sched_pool_epoch(hpvm_sched_pool_t *pool);
void hpvm_sched_pool_idle(hpvm_sched_pool_t *pool, uint32_t seen);
void hpvm_sched_pool_notify(hpvm_sched_pool_t *pool);

/* Options of one parallel-for; zero-initialised means defaults. */
typedef struct hpvm_sched_parallel_for_options_t {
  int64_t grain; /* minimum instances per chunk (default 1) */
} hpvm_sched_parallel_for_options_t;

/* Makes the calling thread's parallel-fors run on this thread alone while `*running` (a count
 * of busy threads that this thread is one of, such as a stream's running stage bodies) is at
 * least the pool's participant count: those threads already use every core, and waking the
 * workers would only take cores from them.  NULL unbinds. */
void hpvm_sched_pool_bind_caller_load(const _Atomic uint32_t *running);

/* See hpvm_rt_parallel_for.  `options` may be NULL. */
hpvm_status_t hpvm_sched_pool_parallel_for(hpvm_sched_pool_t *pool, uint32_t rank,
                                           const int64_t *extents, hpvm_rt_parallel_for_fn_t body,
                                           void *context,
                                           const hpvm_sched_parallel_for_options_t *options);

#endif /* HPVM_SCHED_POOL_H */
