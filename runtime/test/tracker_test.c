/* tracker_test.c - memory tracker: copies only when stale, in/out/inout, errors, many threads,
 * objects shared by several threads. */
#include <pthread.h>

#include "mem/tracker.h"
#include "test_device.h"
#include "test_util.h"

static void test_validity(hpvm_allocator_t allocator) {
  test_device_t *gpu = test_device_create(allocator, HPVM_RT_DEVICE_CUDA);
  hpvm_mem_tracker_t *tracker;
  CHECK_OK(hpvm_mem_tracker_create(allocator, &tracker));
  float data[64];
  for (int i = 0; i < 64; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 1);

  uint64_t handle = 0, again = 0;
  size_t offset = 99;
  /* in: copy once, then the device copy stays valid. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, &offset));
  CHECK_EQ_INT(offset, 0);
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 1);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &again, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 1);
  CHECK(again == handle);
  /* Host read: host is still valid, no copy back. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_host), 0);
  /* The device writes (inout): host becomes stale. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_INOUT, &handle, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 1);
  float *device_copy = (float *)(uintptr_t)handle;
  for (int i = 0; i < 64; ++i)
    device_copy[i] *= 2.0f;
  /* Interior pointer + size: copies the object back once. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, &data[10], 4 * sizeof(float), NULL, HPVM_RT_ACCESS_IN,
                                    NULL, &offset));
  CHECK_EQ_INT(offset, 10 * sizeof(float));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_host), 1);
  for (int i = 0; i < 64; ++i)
    CHECK(data[i] == 2.0f * (float)i);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_host), 1);
  /* The host writes (out): the device copy becomes stale without any copy now... */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_OUT, NULL, NULL));
  data[0] = 1000.0f;
  /* ...and is refreshed on the next device read. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 2);
  CHECK(((float *)(uintptr_t)handle)[0] == 1000.0f);
  /* out on the device: no copy in, host stale afterwards. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_OUT, &handle, NULL));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 2);
  ((float *)(uintptr_t)handle)[5] = -5.0f;
  /* untrack brings the newest data home and frees the device copy. */
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, data));
  CHECK(data[5] == -5.0f);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 0);

  /* discard drops a newer device copy: no copy back, the device copy freed. */
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_OUT, &handle, NULL));
  ((float *)(uintptr_t)handle)[5] = 55.0f;
  int copies_home = atomic_load(&gpu->copies_to_host);
  CHECK_OK(hpvm_mem_tracker_discard(tracker, data));
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_host), copies_home);
  CHECK(data[5] == -5.0f);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 0);
  CHECK_CODE(hpvm_mem_tracker_discard(tracker, data), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_mem_tracker_discard(tracker, NULL), HPVM_STATUS_INVALID_ARGUMENT);

  /* Errors are statuses, never crashes. */
  CHECK_CODE(hpvm_mem_tracker_untrack(tracker, data), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL),
             HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_mem_tracker_track(tracker, NULL, 4), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_mem_tracker_track(tracker, data, 0), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, 32 * sizeof(float)));
  CHECK_CODE(hpvm_mem_tracker_track(tracker, data, 8), HPVM_STATUS_ALREADY_EXISTS);
  CHECK_CODE(hpvm_mem_tracker_track(tracker, &data[31], 8), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_mem_tracker_track(tracker, &data[32], 32 * sizeof(float))); /* adjacent is fine */
  char block[64];
  CHECK_OK(hpvm_mem_tracker_track(tracker, block + 16, 16));
  CHECK_CODE(hpvm_mem_tracker_track(tracker, block + 8, 16), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, block + 16));
  CHECK_CODE(hpvm_mem_tracker_request(tracker, &data[30], 3 * sizeof(float), NULL,
                                      HPVM_RT_ACCESS_IN, NULL, NULL),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_CODE(hpvm_mem_tracker_request(tracker, data, 0, NULL, (hpvm_rt_access_t)0, NULL, NULL),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_mem_tracker_untrack(tracker, &data[1]), HPVM_STATUS_NOT_FOUND);
  /* A device failure during a copy is reported and the object stays usable. */
  atomic_store(&gpu->fail_at, atomic_load(&gpu->calls) + 2); /* alloc ok, copy fails */
  CHECK_CODE(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL),
             HPVM_STATUS_UNAVAILABLE);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL));
  CHECK(((float *)(uintptr_t)handle)[0] == data[0]);
  /* Destroy frees what is still tracked. */
  CHECK_OK(hpvm_mem_tracker_destroy(tracker));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  hpvm_device_destroy(&gpu->base);
}

/*===--- many threads -------------------------------------------------------===*/

#define THREADS 8
#define OBJECTS_PER_THREAD 16
#define SHARED_OBJECTS 4

typedef struct concurrent_t {
  hpvm_mem_tracker_t *tracker;
  test_device_t *gpu;
  int index;
  int64_t *shared[SHARED_OBJECTS];
  _Atomic int64_t *shared_sums;
} concurrent_t;

static void *concurrent_worker(void *arg) {
  concurrent_t *work = arg;
  uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(work->index + 1);
  int64_t *own[OBJECTS_PER_THREAD];
  for (int round = 0; round < (int)test_scaled(200); ++round) {
    /* Private objects: track, write on the device, read back, untrack. */
    for (int i = 0; i < OBJECTS_PER_THREAD; ++i) {
      size_t count = 1 + test_random(&seed) % 64;
      own[i] = malloc(count * sizeof(int64_t) + sizeof(int64_t));
      own[i][0] = (int64_t)count;
      for (size_t k = 1; k <= count; ++k)
        own[i][k] = (int64_t)k;
      CHECK_OK(hpvm_mem_tracker_track(work->tracker, own[i], (count + 1) * sizeof(int64_t)));
    }
    for (int i = 0; i < OBJECTS_PER_THREAD; ++i) {
      uint64_t handle;
      CHECK_OK(hpvm_mem_tracker_request(work->tracker, own[i], 0, &work->gpu->base,
                                        HPVM_RT_ACCESS_INOUT, &handle, NULL));
      int64_t *copy = (int64_t *)(uintptr_t)handle;
      for (int64_t k = 1; k <= copy[0]; ++k)
        copy[k] += work->index;
    }
    for (int i = 0; i < OBJECTS_PER_THREAD; ++i) {
      if (i % 2)
        CHECK_OK(hpvm_mem_tracker_request(work->tracker, &own[i][1], 0, NULL, HPVM_RT_ACCESS_IN,
                                          NULL, NULL));
      CHECK_OK(hpvm_mem_tracker_untrack(work->tracker, own[i]));
      for (int64_t k = 1; k <= own[i][0]; ++k)
        CHECK_EQ_INT(own[i][k], k + work->index);
      free(own[i]);
    }
    /* Shared objects: concurrent readers on host and device (in only: data never changes). */
    for (int s = 0; s < SHARED_OBJECTS; ++s) {
      uint64_t handle;
      hpvm_rt_device_t *where = (test_random(&seed) & 1) ? &work->gpu->base : NULL;
      CHECK_OK(hpvm_mem_tracker_request(work->tracker, work->shared[s], 0, where,
                                        HPVM_RT_ACCESS_IN, &handle, NULL));
      int64_t *view = (int64_t *)(uintptr_t)handle;
      int64_t sum = 0;
      for (int k = 0; k < 100; ++k)
        sum += view[k];
      atomic_fetch_add(&work->shared_sums[s], sum);
    }
    /* Lookups of untracked pointers from many threads: statuses, not crashes. */
    int64_t local;
    CHECK_CODE(hpvm_mem_tracker_request(work->tracker, &local, 0, NULL, HPVM_RT_ACCESS_IN, NULL, NULL),
               HPVM_STATUS_NOT_FOUND);
  }
  return NULL;
}

static void test_concurrent(hpvm_allocator_t allocator) {
  test_device_t *gpu = test_device_create(allocator, HPVM_RT_DEVICE_CUDA);
  gpu->base.max_inflight = UINT32_MAX;
  hpvm_mem_tracker_t *tracker;
  CHECK_OK(hpvm_mem_tracker_create(allocator, &tracker));
  int64_t *shared[SHARED_OBJECTS];
  _Atomic int64_t sums[SHARED_OBJECTS];
  for (int s = 0; s < SHARED_OBJECTS; ++s) {
    shared[s] = malloc(100 * sizeof(int64_t));
    for (int k = 0; k < 100; ++k)
      shared[s][k] = s + k;
    atomic_init(&sums[s], 0);
    CHECK_OK(hpvm_mem_tracker_track(tracker, shared[s], 100 * sizeof(int64_t)));
  }
  pthread_t threads[THREADS];
  concurrent_t work[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    work[t].tracker = tracker;
    work[t].gpu = gpu;
    work[t].index = t;
    memcpy(work[t].shared, shared, sizeof(shared));
    work[t].shared_sums = sums;
    CHECK(pthread_create(&threads[t], NULL, concurrent_worker, &work[t]) == 0);
  }
  for (int t = 0; t < THREADS; ++t)
    pthread_join(threads[t], NULL);
  int64_t rounds = (int64_t)test_scaled(200);
  for (int s = 0; s < SHARED_OBJECTS; ++s)
    CHECK_EQ_INT(atomic_load(&sums[s]), THREADS * rounds * (100 * s + 4950));
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), SHARED_OBJECTS);
  for (int s = 0; s < SHARED_OBJECTS; ++s) {
    CHECK_OK(hpvm_mem_tracker_untrack(tracker, shared[s]));
    free(shared[s]);
  }
  CHECK_OK(hpvm_mem_tracker_destroy(tracker));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  hpvm_device_destroy(&gpu->base);
}

/*===--- objects shared by several threads -----------------------------------===*/

typedef struct track_call_t {
  hpvm_mem_tracker_t *tracker;
  void *ptr;
  size_t size;
  bool untrack;
  hpvm_status_code_t code;
} track_call_t;

static void *track_on_thread(void *arg) {
  track_call_t *call = arg;
  hpvm_status_t status = call->untrack ? hpvm_mem_tracker_untrack(call->tracker, call->ptr)
                                       : hpvm_mem_tracker_track(call->tracker, call->ptr, call->size);
  call->code = hpvm_status_code(status);
  hpvm_status_free(status);
  return NULL;
}

/* Tracks (or untracks) `ptr` on a thread of its own and returns the status code. */
static hpvm_status_code_t other_thread(hpvm_mem_tracker_t *tracker, void *ptr, size_t size,
                                       bool untrack) {
  track_call_t call = {tracker, ptr, size, untrack, HPVM_STATUS_OK};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, track_on_thread, &call) == 0);
  pthread_join(thread, NULL);
  return call.code;
}

static void test_shared(hpvm_allocator_t allocator) {
  test_device_t *gpu = test_device_create(allocator, HPVM_RT_DEVICE_CUDA);
  hpvm_mem_tracker_t *tracker;
  CHECK_OK(hpvm_mem_tracker_create(allocator, &tracker));
  float data[64];
  for (int i = 0; i < 64; ++i)
    data[i] = (float)i;
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  /* One thread holds an object once: the same array twice in one call stays an error. */
  hpvm_status_t twice = hpvm_mem_tracker_track(tracker, data, sizeof(data));
  CHECK(hpvm_status_code(twice) == HPVM_STATUS_ALREADY_EXISTS);
  CHECK(strstr(hpvm_status_message(twice), "by this thread") != NULL);
  hpvm_status_free(twice);
  /* Another thread shares the same range; another size or an overlap is refused. */
  CHECK_EQ_INT(other_thread(tracker, data, sizeof(data), false), HPVM_STATUS_OK);
  CHECK_EQ_INT(other_thread(tracker, data, sizeof(data), false), HPVM_STATUS_OK);
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 1);
  CHECK_EQ_INT(other_thread(tracker, data, 16, false), HPVM_STATUS_ALREADY_EXISTS);
  CHECK_EQ_INT(other_thread(tracker, &data[1], 16, false), HPVM_STATUS_INVALID_ARGUMENT);
  /* Readers share one device copy, made once. */
  uint64_t handle, again;
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL));
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &again, NULL));
  CHECK(handle == again);
  CHECK_EQ_INT(atomic_load(&gpu->copies_to_device), 1);
  /* Writes on a device while shared are refused; the host's memory is the program's. */
  CHECK_CODE(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_OUT, &handle, NULL),
             HPVM_STATUS_FAILED_PRECONDITION);
  CHECK_CODE(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_INOUT, &handle, NULL),
             HPVM_STATUS_FAILED_PRECONDITION);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, NULL, HPVM_RT_ACCESS_INOUT, NULL, NULL));
  /* Untracks drop holds (a thread that holds none drops another's); the device copy lives
   * until the last one. */
  CHECK_EQ_INT(other_thread(tracker, data, 0, true), HPVM_STATUS_OK);
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, data));
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 1);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 1);
  /* One holder left: it may write on the device again. */
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_INOUT, &handle, NULL));
  ((float *)(uintptr_t)handle)[3] = 33.0f;
  /* A second holder joins; the first one's untrack brings the data home and leaves the
   * device copy to the second. */
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  CHECK_EQ_INT(other_thread(tracker, data, 0, true), HPVM_STATUS_OK);
  CHECK(data[3] == 33.0f);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 1);
  CHECK_OK(hpvm_mem_tracker_untrack(tracker, data));
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 0);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  CHECK_CODE(hpvm_mem_tracker_untrack(tracker, data), HPVM_STATUS_NOT_FOUND);
  /* Discard by one of two holders drops its hold only. */
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  CHECK_EQ_INT(other_thread(tracker, data, sizeof(data), false), HPVM_STATUS_OK);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL));
  CHECK_OK(hpvm_mem_tracker_discard(tracker, data));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 1);
  CHECK_OK(hpvm_mem_tracker_discard(tracker, data));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 0);
  /* Destroy with shared objects still held frees everything. */
  CHECK_OK(hpvm_mem_tracker_track(tracker, data, sizeof(data)));
  CHECK_EQ_INT(other_thread(tracker, data, sizeof(data), false), HPVM_STATUS_OK);
  CHECK_OK(hpvm_mem_tracker_request(tracker, data, 0, &gpu->base, HPVM_RT_ACCESS_IN, &handle, NULL));
  CHECK_OK(hpvm_mem_tracker_destroy(tracker));
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  hpvm_device_destroy(&gpu->base);
}

/* 8 threads x 200 launches of one "graph" sharing a read-only input: each launch tracks the
 * input and its own output, reads the input on the device or the host, writes its output on
 * the device, brings it home and untracks both (what a compiled launch and wait do). */
#define LAUNCH_THREADS 8
#define LAUNCH_ELEMENTS 256

typedef struct launcher_t {
  hpvm_mem_tracker_t *tracker;
  test_device_t *gpu;
  const int64_t *input;
  int index;
  int wrong;
} launcher_t;

static void *launcher(void *arg) {
  launcher_t *work = arg;
  int64_t output[LAUNCH_ELEMENTS];
  uint64_t seed = 0x51ED270B27D1E6EDULL * (uint64_t)(work->index + 1);
  for (int launch = 0; launch < 200; ++launch) {
    CHECK_OK(hpvm_mem_tracker_track(work->tracker, (void *)work->input,
                                    LAUNCH_ELEMENTS * sizeof(int64_t)));
    CHECK_OK(hpvm_mem_tracker_track(work->tracker, output, sizeof(output)));
    uint64_t in_handle, out_handle;
    hpvm_rt_device_t *where = (test_random(&seed) & 1) ? &work->gpu->base : NULL;
    CHECK_OK(hpvm_mem_tracker_request(work->tracker, (void *)work->input, 0, where,
                                      HPVM_RT_ACCESS_IN, &in_handle, NULL));
    CHECK_OK(hpvm_mem_tracker_request(work->tracker, output, 0, &work->gpu->base,
                                      HPVM_RT_ACCESS_OUT, &out_handle, NULL));
    const int64_t *in = (const int64_t *)(uintptr_t)in_handle;
    int64_t *out = (int64_t *)(uintptr_t)out_handle;
    for (int i = 0; i < LAUNCH_ELEMENTS; ++i)
      out[i] = in[i] * 2 + work->index;
    CHECK_OK(hpvm_mem_tracker_request(work->tracker, output, 0, NULL, HPVM_RT_ACCESS_INOUT, NULL,
                                      NULL));
    CHECK_OK(hpvm_mem_tracker_untrack(work->tracker, output));
    CHECK_OK(hpvm_mem_tracker_untrack(work->tracker, (void *)work->input));
    for (int i = 0; i < LAUNCH_ELEMENTS; ++i)
      work->wrong += output[i] != work->input[i] * 2 + work->index;
  }
  return NULL;
}

static void test_shared_launches(hpvm_allocator_t allocator) {
  test_device_t *gpu = test_device_create(allocator, HPVM_RT_DEVICE_CUDA);
  gpu->base.max_inflight = UINT32_MAX;
  hpvm_mem_tracker_t *tracker;
  CHECK_OK(hpvm_mem_tracker_create(allocator, &tracker));
  int64_t *input = malloc(LAUNCH_ELEMENTS * sizeof(int64_t));
  for (int i = 0; i < LAUNCH_ELEMENTS; ++i)
    input[i] = 3 * i - 100;
  pthread_t threads[LAUNCH_THREADS];
  launcher_t work[LAUNCH_THREADS];
  for (int t = 0; t < LAUNCH_THREADS; ++t) {
    work[t] = (launcher_t){tracker, gpu, input, t, 0};
    CHECK(pthread_create(&threads[t], NULL, launcher, &work[t]) == 0);
  }
  for (int t = 0; t < LAUNCH_THREADS; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(work[t].wrong, 0);
  }
  CHECK_EQ_INT(hpvm_mem_tracker_count(tracker), 0);
  CHECK_EQ_INT(atomic_load(&gpu->live_buffers), 0);
  CHECK_OK(hpvm_mem_tracker_destroy(tracker));
  free(input);
  hpvm_device_destroy(&gpu->base);
}

int main(void) {
  test_allocator_t state = {0};
  hpvm_allocator_t allocator = test_allocator_make(&state);
  test_validity(allocator);
  test_concurrent(allocator);
  test_shared(allocator);
  test_shared_launches(allocator);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  printf("tracker_test: OK\n");
  return 0;
}
