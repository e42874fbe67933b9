/* pool_test.c - parallel-for over odd 1-3-D grids (element by element), nesting, concurrency,
 * small grids on the caller, callers bound to a busy-thread count, waiters that help. */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "base/status.h"
#include "sched/pool.h"
#include "test_util.h"

typedef struct grid_check_t {
  _Atomic uint8_t *hits;
  int64_t extent[3];
  uint32_t rank;
  uint32_t max_worker;
  _Atomic int bad_range;
} grid_check_t;

static void count_body(void *context, const hpvm_rt_instance_range_t *range) {
  grid_check_t *check = context;
  if (range->rank != check->rank || range->worker_index > check->max_worker)
    atomic_store(&check->bad_range, 1);
  for (int d = 0; d < 3; ++d)
    if (range->extent[d] != check->extent[d] || range->begin[d] < 0 ||
        range->begin[d] >= range->end[d] || range->end[d] > range->extent[d])
      atomic_store(&check->bad_range, 1);
  for (int64_t z = range->begin[2]; z < range->end[2]; ++z)
    for (int64_t y = range->begin[1]; y < range->end[1]; ++y)
      for (int64_t x = range->begin[0]; x < range->end[0]; ++x)
        atomic_fetch_add_explicit(
            &check->hits[(z * check->extent[1] + y) * check->extent[0] + x], 1,
            memory_order_relaxed);
}

static void check_grid(hpvm_sched_pool_t *pool, uint32_t rank, int64_t x, int64_t y, int64_t z) {
  grid_check_t check;
  memset(&check, 0, sizeof(check));
  check.rank = rank;
  check.extent[0] = x;
  check.extent[1] = rank > 1 ? y : 1;
  check.extent[2] = rank > 2 ? z : 1;
  check.max_worker = hpvm_sched_pool_worker_count(pool);
  int64_t total = check.extent[0] * check.extent[1] * check.extent[2];
  check.hits = calloc((size_t)(total ? total : 1), 1);
  CHECK(check.hits);
  int64_t extents[3] = {x, y, z};
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, rank, extents, count_body, &check, NULL));
  CHECK_EQ_INT(atomic_load(&check.bad_range), 0);
  for (int64_t i = 0; i < total; ++i)
    if (atomic_load(&check.hits[i]) != 1) {
      fprintf(stderr, "grid %lldx%lldx%lld rank %u: instance %lld ran %d times\n", (long long)x,
              (long long)y, (long long)z, rank, (long long)i, atomic_load(&check.hits[i]));
      exit(1);
    }
  free(check.hits);
}

/*===--- nesting ------------------------------------------------------------===*/

typedef struct nested_t {
  hpvm_sched_pool_t *pool;
  _Atomic int64_t inner_total;
  int depth;
} nested_t;

static void inner_body(void *context, const hpvm_rt_instance_range_t *range) {
  nested_t *nested = context;
  atomic_fetch_add(&nested->inner_total, range->end[0] - range->begin[0]);
}

static void middle_body(void *context, const hpvm_rt_instance_range_t *range) {
  nested_t *nested = context;
  int64_t instances = (range->end[0] - range->begin[0]) * (range->end[1] - range->begin[1]);
  for (int64_t i = 0; i < instances; ++i) {
    int64_t extent = 333;
    CHECK_OK(hpvm_sched_pool_parallel_for(nested->pool, 1, &extent, inner_body, nested, NULL));
  }
}

static void outer_body(void *context, const hpvm_rt_instance_range_t *range) {
  nested_t *nested = context;
  for (int64_t i = range->begin[0]; i < range->end[0]; ++i) {
    int64_t extents[2] = {3, 5};
    CHECK_OK(hpvm_sched_pool_parallel_for(nested->pool, 2, extents, middle_body, nested, NULL));
  }
}

static void test_nested(hpvm_sched_pool_t *pool) {
  nested_t nested = {pool, 0, 0};
  int64_t extent = 17;
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &extent, outer_body, &nested, NULL));
  /* 17 outer x (3*5) middle x 333 inner instances. */
  CHECK_EQ_INT(atomic_load(&nested.inner_total), 17 * 15 * 333);
}

/*===--- several outside threads at once --------------------------------===*/

static void *external_caller(void *arg) {
  hpvm_sched_pool_t *pool = arg;
  for (int i = 0; i < 200; ++i)
    check_grid(pool, 1, 1 + (i * 37) % 2000, 1, 1);
  return NULL;
}

static void test_concurrent_callers(hpvm_sched_pool_t *pool) {
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i)
    CHECK(pthread_create(&threads[i], NULL, external_caller, pool) == 0);
  for (int i = 0; i < 4; ++i)
    pthread_join(threads[i], NULL);
}

/*===--- tasks --------------------------------------------------------------===*/

typedef struct counted_task_t {
  hpvm_sched_task_t task;
  _Atomic int *counter;
} counted_task_t;

static void counted_run(hpvm_sched_task_t *task) {
  atomic_fetch_add(((counted_task_t *)task)->counter, 1);
}

static void test_tasks(hpvm_sched_pool_t *pool) {
  _Atomic int counter = 0;
  counted_task_t tasks[100];
  for (int i = 0; i < 100; ++i) {
    tasks[i].task.run = counted_run;
    tasks[i].counter = &counter;
    hpvm_sched_pool_submit(pool, &tasks[i].task);
  }
  while (atomic_load(&counter) < 100)
    if (!hpvm_sched_pool_run_one(pool))
      sched_yield();
  CHECK_EQ_INT(atomic_load(&counter), 100);
}

static void noop_body(void *context, const hpvm_rt_instance_range_t *range) {
  (void)context;
  (void)range;
}

static void test_invalid(hpvm_sched_pool_t *pool) {
  int64_t extents[3] = {4, 4, 4};
  CHECK_CODE(hpvm_sched_pool_parallel_for(pool, 0, extents, noop_body, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_sched_pool_parallel_for(pool, 4, extents, noop_body, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_sched_pool_parallel_for(pool, 1, extents, NULL, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  int64_t negative[2] = {4, -1};
  CHECK_CODE(hpvm_sched_pool_parallel_for(pool, 2, negative, noop_body, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  int64_t huge[3] = {INT64_MAX / 2, 4, 1};
  CHECK_CODE(hpvm_sched_pool_parallel_for(pool, 2, huge, noop_body, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  int64_t empty[3] = {5, 0, 7};
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 3, empty, noop_body, NULL, NULL));
}

/*===--- small grids: cheap ones stay on the caller, costly ones spread --------===*/

typedef struct adaptive_t {
  _Atomic int64_t instances;
  _Atomic int off_caller; /* some range ran on another participant than the caller (0) */
} adaptive_t;

static void cheap_body(void *context, const hpvm_rt_instance_range_t *range) {
  adaptive_t *state = context;
  if (range->worker_index != 0)
    atomic_store(&state->off_caller, 1);
  atomic_fetch_add(&state->instances, range->end[0] - range->begin[0]);
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The pool probes a small grid on the caller with its first 8 instances (pool.c's
 * HPVM_POOL_PROBE_FIRST_BATCH) before it hands the rest out. */
#define PROBED_INSTANCES 8

/* The probed instances take 1 ms each; the others wait (at most 2 s) until some instance has
 * run on another participant, which happens only if the pool hands the rest out.  (Waiting
 * in a probed instance would only wait out the 2 s: nobody else runs yet.) */
static void costly_body(void *context, const hpvm_rt_instance_range_t *range) {
  adaptive_t *state = context;
  if (range->worker_index != 0)
    atomic_store(&state->off_caller, 1);
  for (int64_t x = range->begin[0]; x < range->end[0]; ++x) {
    double start = seconds_now();
    if (x < PROBED_INSTANCES)
      while (seconds_now() - start < 1e-3)
        ;
    else
      while (!atomic_load(&state->off_caller) && seconds_now() - start < 2.0)
        sched_yield();
    atomic_fetch_add(&state->instances, 1);
  }
}

typedef struct rendezvous_t {
  _Atomic int arrived;
  _Atomic int timed_out;
} rendezvous_t;

/* Each instance waits (at most 2 s) until every instance of the grid has started. */
static void rendezvous_body(void *context, const hpvm_rt_instance_range_t *range) {
  rendezvous_t *state = context;
  for (int64_t x = range->begin[0]; x < range->end[0]; ++x) {
    atomic_fetch_add(&state->arrived, 1);
    double start = seconds_now();
    while (atomic_load(&state->arrived) < range->extent[0])
      if (seconds_now() - start > 2.0) {
        atomic_store(&state->timed_out, 1);
        break;
      }
  }
}

static void test_small_grids(hpvm_sched_pool_t *pool) {
  /* 256 trivial instances cost far less than waking a worker: all on the caller.  The probe
   * times them, so a run the machine preempts (or a sanitizer slows) may look costly and
   * hand out: most runs, not every one, must stay on the caller. */
  int on_caller = 0;
  for (int i = 0; i < 100; ++i) {
    adaptive_t cheap = {0, 0};
    int64_t extent = 256;
    CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &extent, cheap_body, &cheap, NULL));
    CHECK_EQ_INT(atomic_load(&cheap.instances), 256);
    on_caller += atomic_load(&cheap.off_caller) == 0;
  }
  CHECK(on_caller >= 80);
  if (hpvm_sched_pool_worker_count(pool) == 0)
    return;
  /* 64 instances, the first 8 of 1 ms: the probe sees the cost and the workers share the rest. */
  adaptive_t costly = {0, 0};
  int64_t extent = 64;
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &extent, costly_body, &costly, NULL));
  CHECK_EQ_INT(atomic_load(&costly.instances), 64);
  CHECK_EQ_INT(atomic_load(&costly.off_caller), 1);
  /* Two instances that wait for each other: a probe running one alone first would leave the
   * other unstarted, so grids this small are never probed. */
  rendezvous_t meet = {0, 0};
  int64_t pair = 2;
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &pair, rendezvous_body, &meet, NULL));
  CHECK_EQ_INT(atomic_load(&meet.timed_out), 0);
}

/* A caller bound to a count of busy threads (a stream's running stage bodies) runs its grids
 * alone while the count fills the pool's participants, and shares them again below that. */
static void test_caller_load(hpvm_sched_pool_t *pool) {
  uint32_t workers = hpvm_sched_pool_worker_count(pool);
  if (workers == 0)
    return;
  _Atomic uint32_t running = workers + 1;
  hpvm_sched_pool_bind_caller_load(&running);
  /* Too large to be probed: unbound, the workers would get most of it. */
  adaptive_t alone = {0, 0};
  int64_t extent = 100000;
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &extent, cheap_body, &alone, NULL));
  CHECK_EQ_INT(atomic_load(&alone.instances), 100000);
  CHECK_EQ_INT(atomic_load(&alone.off_caller), 0);
  atomic_store(&running, workers);
  adaptive_t shared = {0, 0};
  int64_t costly = 64;
  CHECK_OK(hpvm_sched_pool_parallel_for(pool, 1, &costly, costly_body, &shared, NULL));
  CHECK_EQ_INT(atomic_load(&shared.instances), 64);
  CHECK_EQ_INT(atomic_load(&shared.off_caller), 1);
  hpvm_sched_pool_bind_caller_load(NULL);
}

/*===--- errors raised inside a body --------------------------------------===*/

/* Compiled code reports an error with hpvm_rt_check_at, on whichever thread runs the chunk:
 * it neither ends the process (a worker has no caller's guard) nor unwinds the caller past a
 * job the workers still run. */
typedef struct failing_t {
  int64_t fail_at; /* the instance whose chunk raises */
  _Atomic int64_t ran;
} failing_t;

static void failing_body(void *context, const hpvm_rt_instance_range_t *range) {
  failing_t *f = context;
  for (int64_t x = range->begin[0]; x < range->end[0]; ++x) {
    atomic_fetch_add(&f->ran, 1);
    if (x == f->fail_at)
      hpvm_rt_check_at(HPVM_STATUS(OUT_OF_RANGE, "instance %lld refused", (long long)x),
                       "failing_body");
  }
}

typedef struct parallel_call_t {
  hpvm_sched_pool_t *pool;
  int64_t extent;
  failing_t *failing;
  hpvm_status_t returned;
} parallel_call_t;

static void call_parallel_for(void **args) {
  parallel_call_t *call = args[0];
  call->returned = hpvm_sched_pool_parallel_for(call->pool, 1, &call->extent, failing_body,
                                                call->failing, NULL);
}

/* The error reaches the caller's guard, whichever thread raised it: returned by the
 * parallel-for (a job the workers shared) or raised through it (one only the caller ran). */
static void test_body_errors(hpvm_sched_pool_t *pool) {
  int64_t extents[] = {1, 2, 37, 4096, 1000003};
  for (size_t i = 0; i < sizeof extents / sizeof extents[0]; ++i)
    for (int64_t at = 0; at < extents[i]; at += extents[i] / 3 + 1) {
      failing_t f = {at, 0};
      parallel_call_t call = {pool, extents[i], &f, NULL};
      void *args[1] = {&call};
      hpvm_status_t raised = hpvm_status_guarded_call(call_parallel_for, args);
      hpvm_status_t status = raised ? raised : call.returned;
      CHECK(status != NULL);
      CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_OUT_OF_RANGE);
      CHECK(strstr(hpvm_status_message(status), "refused") != NULL);
      hpvm_status_free(status);
      CHECK(atomic_load(&f.ran) >= 1 && atomic_load(&f.ran) <= extents[i]);
    }
  /* The pool still works afterwards. */
  check_grid(pool, 1, 1000, 1, 1);
}

/* A thread outside the pool that waits on a worker's work (a host thread in hpvm_rt_wait)
 * runs chunks of the grids the worker starts: each instance waits (10 s at most) until both
 * the waiter and a worker have run one, so a worker alone would time out. More instances than
 * the pool probes on its caller before sharing a grid. */
enum { HELPED_INSTANCES = 20000 };
typedef struct helped_t {
  hpvm_sched_task_t task;
  hpvm_sched_pool_t *pool;
  pthread_t waiter;
  _Atomic int started, done, by_waiter, by_worker, timed_out;
  _Atomic uint8_t hits[HELPED_INSTANCES];
} helped_t;

static void helped_body(void *context, const hpvm_rt_instance_range_t *range) {
  helped_t *h = context;
  atomic_fetch_add(pthread_equal(pthread_self(), h->waiter) ? &h->by_waiter : &h->by_worker, 1);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (atomic_load(&h->by_waiter) == 0 || atomic_load(&h->by_worker) == 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      atomic_store(&h->timed_out, 1);
      break;
    }
    sched_yield();
  }
  for (int64_t x = range->begin[0]; x < range->end[0]; ++x)
    atomic_fetch_add(&h->hits[x], 1);
}

static void helped_run(hpvm_sched_task_t *task) {
  helped_t *h = (helped_t *)task;
  atomic_store(&h->started, 1);
  int64_t extent[1] = {HELPED_INSTANCES};
  CHECK_OK(hpvm_sched_pool_parallel_for(h->pool, 1, extent, helped_body, h, NULL));
  atomic_store(&h->done, 1);
  hpvm_sched_pool_notify(h->pool);
}

static void test_waiter_helps(hpvm_sched_pool_t *pool) {
  if (hpvm_sched_pool_worker_count(pool) == 0)
    return;
  helped_t *h = calloc(1, sizeof(*h));
  h->task.run = helped_run;
  h->pool = pool;
  h->waiter = pthread_self();
  hpvm_sched_pool_submit(pool, &h->task);
  while (!atomic_load(&h->started)) /* a worker takes the task (owning its grid) */
    sched_yield();
  for (;;) {
    uint32_t seen = hpvm_sched_pool_epoch(pool);
    if (atomic_load(&h->done))
      break;
    if (!hpvm_sched_pool_help(pool))
      hpvm_sched_pool_idle(pool, seen);
  }
  CHECK(!atomic_load(&h->timed_out));
  CHECK(atomic_load(&h->by_waiter) > 0 && atomic_load(&h->by_worker) > 0);
  for (int i = 0; i < HELPED_INSTANCES; ++i)
    CHECK_EQ_INT(atomic_load(&h->hits[i]), 1);
  free(h);
}

/* ... but never in a grid another outside thread owns (participant 0 of it is that thread). */
typedef struct outside_t {
  hpvm_sched_pool_t *pool;
  pthread_t waiter;
  _Atomic int done, by_waiter;
} outside_t;

static void outside_body(void *context, const hpvm_rt_instance_range_t *range) {
  outside_t *o = context;
  if (pthread_equal(pthread_self(), o->waiter))
    atomic_fetch_add(&o->by_waiter, 1);
  for (int64_t x = range->begin[0]; x < range->end[0]; ++x)
    for (volatile int spin = 0; spin < 200; ++spin) {
    }
}

static void *outside_caller(void *arg) {
  outside_t *o = arg;
  int64_t extent[1] = {HELPED_INSTANCES};
  CHECK_OK(hpvm_sched_pool_parallel_for(o->pool, 1, extent, outside_body, o, NULL));
  atomic_store(&o->done, 1);
  hpvm_sched_pool_notify(o->pool);
  return NULL;
}

static void test_waiter_skips_outside_grids(hpvm_sched_pool_t *pool) {
  if (hpvm_sched_pool_worker_count(pool) == 0)
    return;
  outside_t o = {pool, pthread_self(), 0, 0};
  pthread_t other;
  CHECK(pthread_create(&other, NULL, outside_caller, &o) == 0);
  for (;;) {
    uint32_t seen = hpvm_sched_pool_epoch(pool);
    if (atomic_load(&o.done))
      break;
    if (!hpvm_sched_pool_help(pool))
      hpvm_sched_pool_idle(pool, seen);
  }
  pthread_join(other, NULL);
  CHECK_EQ_INT(atomic_load(&o.by_waiter), 0);
}

static void run_all(uint32_t workers) {
  test_allocator_t state = {0};
  hpvm_sched_pool_t *pool;
  CHECK_OK(hpvm_sched_pool_create(test_allocator_make(&state), workers, &pool));
  check_grid(pool, 1, 1, 1, 1);
  check_grid(pool, 1, 7, 1, 1);
  check_grid(pool, 1, 1000003, 1, 1);
  check_grid(pool, 3, 31, 17, 5);
  check_grid(pool, 2, 1, 1000, 1);
  check_grid(pool, 2, 1000, 3, 1);
  check_grid(pool, 3, 2, 1, 3);
  check_grid(pool, 3, 1, 1, 1);
  /* Back-to-back small launches stress slot reuse and the worker hand-off. */
  for (int i = 0; i < (int)test_scaled(3000); ++i)
    check_grid(pool, 1, 1024, 1, 1);
  test_nested(pool);
  test_small_grids(pool);
  test_caller_load(pool);
  test_concurrent_callers(pool);
  test_tasks(pool);
  test_waiter_helps(pool);
  test_waiter_skips_outside_grids(pool);
  test_invalid(pool);
  test_body_errors(pool);
  hpvm_sched_pool_destroy(pool);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

int main(void) {
  run_all(0); /* everything on the caller */
  run_all(1);
  run_all(3); /* more threads than this machine's cores: preemption mid-chunk */
  /* Pool creation failing half-way must not leak. */
  for (int64_t fail = 1; fail <= 6; ++fail) {
    test_allocator_t state = {0};
    atomic_store(&state.fail_at, fail);
    hpvm_sched_pool_t *pool = NULL;
    hpvm_status_t status = hpvm_sched_pool_create(test_allocator_make(&state), 2, &pool);
    if (status) {
      CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_RESOURCE_EXHAUSTED);
      hpvm_status_free(status);
      CHECK(pool == NULL);
    } else {
      hpvm_sched_pool_destroy(pool);
    }
    CHECK_EQ_INT(atomic_load(&state.live), 0);
  }
  printf("pool_test: OK\n");
  return 0;
}
