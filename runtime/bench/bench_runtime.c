/* bench_runtime.c - parallel-for launch overhead vs OpenMP, and 2-stage streaming throughput vs
 * a mutex + condition-variable queue, measured in one process; prints medians and ratios. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hpvm/hpvm_rt.h"
#ifdef HPVM_BENCH_HAVE_OPENMP
#include "omp_baseline.h"
#endif

#define RUNS 7

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts `values` and returns their median. */
static double median(double *values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* After median(): the spread, so that noisy machines show up as such. */
static void print_range(const char *label, const double *sorted, int count, double scale,
                        const char *unit) {
  printf("    %-24s runs: min %.2f  max %.2f %s\n", label, sorted[0] * scale,
         sorted[count - 1] * scale, unit);
}

static void check(hpvm_status_t status) { hpvm_rt_check_at(status, "bench"); }

/* Lets the other library's idle threads stop spinning before we measure. */
static void settle(void) { usleep(50 * 1000); }

/*===--- parallel-for launch overhead ---------------------------------------===*/

static void empty_body(void *context, const hpvm_rt_instance_range_t *range) {
  (void)context;
  for (int64_t i = range->begin[0]; i < range->end[0]; ++i)
    __asm__ __volatile__("" : : "r"(i));
}

static double time_hpvm_launches(int launches, int64_t n) {
  double start = now_seconds();
  for (int i = 0; i < launches; ++i)
    check(hpvm_rt_parallel_for(1, &n, empty_body, NULL));
  return (now_seconds() - start) / launches;
}

#ifdef HPVM_BENCH_HAVE_OPENMP
static double time_omp_launches(int launches, int64_t n) {
  double start = now_seconds();
  for (int i = 0; i < launches; ++i)
    hpvm_bench_omp_parallel_for(n);
  return (now_seconds() - start) / launches;
}
#endif

static void bench_parallel_for(void) {
  const int64_t n = 1024;
  const int launches = 20000;
  double hpvm[RUNS];
#ifdef HPVM_BENCH_HAVE_OPENMP
  double omp[RUNS];
  time_omp_launches(launches / 10, n); /* warm up both pools */
#endif
  time_hpvm_launches(launches / 10, n);
  /* Interleaved so that both see the same machine state. */
  for (int run = 0; run < RUNS; ++run) {
#ifdef HPVM_BENCH_HAVE_OPENMP
    settle();
    omp[run] = time_omp_launches(launches, n);
#endif
    settle();
    hpvm[run] = time_hpvm_launches(launches, n);
  }
  double hpvm_median = median(hpvm, RUNS);
  printf("parallel-for, empty 1-D grid of %lld, %u threads, median of %d runs x %d launches:\n",
         (long long)n, hpvm_rt_thread_count(), RUNS, launches);
  printf("  hpvm_rt_parallel_for      : %8.0f ns/launch\n", hpvm_median * 1e9);
  print_range("hpvm", hpvm, RUNS, 1e9, "ns");
#ifdef HPVM_BENCH_HAVE_OPENMP
  double omp_median = median(omp, RUNS);
  printf("  omp parallel for (libgomp): %8.0f ns/launch  (%d threads)\n", omp_median * 1e9,
         hpvm_bench_omp_threads());
  print_range("omp", omp, RUNS, 1e9, "ns");
  printf("  ratio hpvm/omp            : %8.2f  (goal <= 1.50)\n", hpvm_median / omp_median);
#else
  printf("  (OpenMP baseline not built: no OpenMP for this compiler)\n");
#endif
}

/*===--- streaming throughput -------------------------------------------===*/

static hpvm_status_t copy_stage(void *context, hpvm_rt_device_t *device, int64_t item,
                                const void *const *in, void *const *out) {
  (void)device;
  (void)item;
  memcpy(out[0], in[0], *(const size_t *)context);
  return NULL;
}

typedef struct feeder_t {
  hpvm_rt_stream_t *stream;
  size_t size;
  uint64_t count;
} feeder_t;

static void *feed_stream(void *arg) {
  feeder_t *feeder = arg;
  unsigned char *item = calloc(1, feeder->size);
  for (uint64_t i = 0; i < feeder->count; ++i) {
    memcpy(item, &i, sizeof(i) < feeder->size ? sizeof(i) : feeder->size);
    check(hpvm_rt_stream_push(feeder->stream, item));
  }
  hpvm_rt_stream_close_input(feeder->stream);
  free(item);
  return NULL;
}

/* host pusher thread -> stage 1 -> stage 2 -> host popper (this thread); items/s. */
static double hpvm_stream_rate(size_t size, uint64_t count) {
  hpvm_rt_pipeline_t *pipeline;
  check(hpvm_rt_pipeline_create(size, size, 64, &pipeline));
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, copy_stage};
  static size_t item_size;
  item_size = size;
  uint32_t first, second;
  check(hpvm_rt_pipeline_add_stage(pipeline, "first", &version, 1, &item_size, 1, &size, 1, &size,
                                   &first));
  check(hpvm_rt_pipeline_add_stage(pipeline, "second", &version, 1, &item_size, 1, &size, 1,
                                   &size, &second));
  check(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, first, 0));
  check(hpvm_rt_pipeline_connect(pipeline, first, 0, second, 0));
  check(hpvm_rt_pipeline_connect(pipeline, second, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream;
  unsigned char *item = malloc(size);
  double start = now_seconds();
  check(hpvm_rt_stream_launch(pipeline, &stream));
  feeder_t feeder = {stream, size, count};
  pthread_t thread;
  pthread_create(&thread, NULL, feed_stream, &feeder);
  for (uint64_t i = 0; i < count; ++i) {
    check(hpvm_rt_stream_pop(stream, item));
    uint64_t value = 0;
    memcpy(&value, item, sizeof(value) < size ? sizeof(value) : size);
    if (size >= 8 && value != i) {
      fprintf(stderr, "stream out of order\n");
      exit(1);
    }
  }
  pthread_join(thread, NULL);
  check(hpvm_rt_stream_wait(stream));
  double elapsed = now_seconds() - start;
  hpvm_rt_pipeline_destroy(pipeline);
  free(item);
  return (double)count / elapsed;
}

/* The baseline: a bounded queue with one mutex and two condition variables, the textbook
 * design (and what the original HPVM runtime approximated with capacity 1). */
typedef struct locked_queue_t {
  pthread_mutex_t mutex;
  pthread_cond_t not_full, not_empty;
  unsigned char *slots;
  size_t size;
  uint64_t capacity, head, tail;
  int closed;
} locked_queue_t;

static void queue_init(locked_queue_t *queue, size_t size, uint64_t capacity) {
  pthread_mutex_init(&queue->mutex, NULL);
  pthread_cond_init(&queue->not_full, NULL);
  pthread_cond_init(&queue->not_empty, NULL);
  queue->slots = malloc(size * capacity);
  queue->size = size;
  queue->capacity = capacity;
  queue->head = queue->tail = 0;
  queue->closed = 0;
}

static void queue_destroy(locked_queue_t *queue) {
  pthread_mutex_destroy(&queue->mutex);
  pthread_cond_destroy(&queue->not_full);
  pthread_cond_destroy(&queue->not_empty);
  free(queue->slots);
}

static void queue_push(locked_queue_t *queue, const void *item) {
  pthread_mutex_lock(&queue->mutex);
  while (queue->head - queue->tail == queue->capacity)
    pthread_cond_wait(&queue->not_full, &queue->mutex);
  memcpy(queue->slots + (queue->head % queue->capacity) * queue->size, item, queue->size);
  queue->head++;
  pthread_cond_signal(&queue->not_empty);
  pthread_mutex_unlock(&queue->mutex);
}

static int queue_pop(locked_queue_t *queue, void *item) {
  pthread_mutex_lock(&queue->mutex);
  while (queue->head == queue->tail && !queue->closed)
    pthread_cond_wait(&queue->not_empty, &queue->mutex);
  if (queue->head == queue->tail) {
    pthread_mutex_unlock(&queue->mutex);
    return 0;
  }
  memcpy(item, queue->slots + (queue->tail % queue->capacity) * queue->size, queue->size);
  queue->tail++;
  pthread_cond_signal(&queue->not_full);
  pthread_mutex_unlock(&queue->mutex);
  return 1;
}

static void queue_close(locked_queue_t *queue) {
  pthread_mutex_lock(&queue->mutex);
  queue->closed = 1;
  pthread_cond_broadcast(&queue->not_empty);
  pthread_mutex_unlock(&queue->mutex);
}

typedef struct locked_stage_t {
  locked_queue_t *in, *out;
  uint64_t count; /* used by the feeder */
} locked_stage_t;

static void *locked_stage_main(void *arg) {
  locked_stage_t *stage = arg;
  size_t size = stage->in->size;
  unsigned char *in = malloc(size), *out = malloc(size);
  while (queue_pop(stage->in, in)) {
    memcpy(out, in, size); /* the same work as copy_stage */
    queue_push(stage->out, out);
  }
  queue_close(stage->out);
  free(in);
  free(out);
  return NULL;
}

static void *locked_feed(void *arg) {
  locked_stage_t *feeder = arg;
  unsigned char *item = calloc(1, feeder->out->size);
  for (uint64_t i = 0; i < feeder->count; ++i) {
    memcpy(item, &i, sizeof(i) < feeder->out->size ? sizeof(i) : feeder->out->size);
    queue_push(feeder->out, item);
  }
  queue_close(feeder->out);
  free(item);
  return NULL;
}

static double locked_stream_rate(size_t size, uint64_t count) {
  locked_queue_t queues[3];
  for (int i = 0; i < 3; ++i)
    queue_init(&queues[i], size, 64);
  unsigned char *item = malloc(size);
  double start = now_seconds();
  locked_stage_t feeder = {NULL, &queues[0], count};
  locked_stage_t stages[2] = {{&queues[0], &queues[1], 0}, {&queues[1], &queues[2], 0}};
  pthread_t threads[3];
  pthread_create(&threads[0], NULL, locked_stage_main, &stages[0]);
  pthread_create(&threads[1], NULL, locked_stage_main, &stages[1]);
  pthread_create(&threads[2], NULL, locked_feed, &feeder);
  for (uint64_t i = 0; i < count; ++i) {
    if (!queue_pop(&queues[2], item)) {
      fprintf(stderr, "baseline lost items\n");
      exit(1);
    }
  }
  for (int i = 0; i < 3; ++i)
    pthread_join(threads[i], NULL);
  double elapsed = now_seconds() - start;
  for (int i = 0; i < 3; ++i)
    queue_destroy(&queues[i]);
  free(item);
  return (double)count / elapsed;
}

static void bench_stream(size_t size, uint64_t count) {
  double hpvm[RUNS], locked[RUNS];
  for (int run = 0; run < RUNS; ++run) {
    settle();
    locked[run] = locked_stream_rate(size, count);
    settle();
    hpvm[run] = hpvm_stream_rate(size, count);
  }
  double hpvm_median = median(hpvm, RUNS), locked_median = median(locked, RUNS);
  printf("streaming, %zu-byte items, 2 stages (pusher -> 2 stages -> popper), capacity 64, "
         "median of %d runs x %llu items:\n",
         size, RUNS, (unsigned long long)count);
  printf("  hpvm stream                : %8.2f M items/s (%.2f GB/s)\n", hpvm_median / 1e6,
         hpvm_median * (double)size / 1e9);
  print_range("hpvm", hpvm, RUNS, 1e-6, "M items/s");
  printf("  mutex+condvar queue        : %8.2f M items/s\n", locked_median / 1e6);
  print_range("mutex+condvar", locked, RUNS, 1e-6, "M items/s");
  printf("  ratio hpvm/mutex           : %8.2f\n", hpvm_median / locked_median);
}

int main(int argc, char **argv) {
  /* Optional argument: run only "parallel-for", "stream8" or "stream4k". */
  const char *only = argc > 1 ? argv[1] : NULL;
  check(hpvm_rt_init());
  if (!only || strcmp(only, "parallel-for") == 0)
    bench_parallel_for();
  if (!only || strcmp(only, "stream8") == 0)
    bench_stream(8, 2000000);
  if (!only || strcmp(only, "stream4k") == 0)
    bench_stream(4096, 200000);
  hpvm_rt_shutdown();
  return 0;
}
