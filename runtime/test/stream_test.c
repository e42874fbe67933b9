/* stream_test.c - streaming pipelines: order, fan-out/join, early stop, cancel, errors, policy. */
#include <pthread.h>

#include "runtime.h"
#include "test_device.h"
#include "test_util.h"

/* A stream has min(stages, threads) workers: 1 fires every stage on one thread, 8 gives each
 * of a 4-stage pipeline its own. */
static hpvm_runtime_t *make_runtime_threads(test_allocator_t *state, test_device_t **out_gpu,
                                            uint32_t threads) {
  hpvm_runtime_options_t options = {0};
  options.allocator = test_allocator_make(state);
  options.thread_count = threads;
  options.only_given_devices = true;
  if (out_gpu) {
    *out_gpu = test_device_create(options.allocator, HPVM_RT_DEVICE_CUDA);
    options.devices[HPVM_RT_DEVICE_CUDA] = &(*out_gpu)->base;
  }
  hpvm_runtime_t *runtime;
  CHECK_OK(hpvm_runtime_create(&options, &runtime));
  return runtime;
}

static hpvm_runtime_t *make_runtime(test_allocator_t *state, test_device_t **out_gpu) {
  return make_runtime_threads(state, out_gpu, 2);
}

/*===--- stage bodies -------------------------------------------------------===*/

static hpvm_status_t double_it(void *context, hpvm_rt_device_t *device, int64_t item,
                               const void *const *in, void *const *out) {
  (void)context;
  (void)device;
  (void)item;
  *(int64_t *)out[0] = 2 * *(const int64_t *)in[0];
  return NULL;
}

static hpvm_status_t add_one(void *context, hpvm_rt_device_t *device, int64_t item,
                             const void *const *in, void *const *out) {
  (void)device;
  (void)item;
  if (context)
    atomic_fetch_add((_Atomic int64_t *)context, 1);
  *(int64_t *)out[0] = *(const int64_t *)in[0] + 1;
  return NULL;
}

static hpvm_status_t sum_two(void *context, hpvm_rt_device_t *device, int64_t item,
                             const void *const *in, void *const *out) {
  (void)context;
  (void)device;
  (void)item;
  *(int64_t *)out[0] = *(const int64_t *)in[0] + *(const int64_t *)in[1];
  return NULL;
}

static const size_t word[2] = {sizeof(int64_t), sizeof(int64_t)};

/* host -> double -> add_one -> host */
static hpvm_rt_pipeline_t *two_stage(hpvm_runtime_t *runtime, uint32_t capacity,
                                     _Atomic int64_t *counter) {
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 8, capacity, &pipeline));
  hpvm_rt_stage_version_t first = {HPVM_RT_DEVICE_CPU, double_it};
  hpvm_rt_stage_version_t second = {HPVM_RT_DEVICE_CPU, add_one};
  uint32_t a, b;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "double", &first, 1, NULL, 1, word, 1, word, &a));
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "add_one", &second, 1, counter, 1, word, 1, word, &b));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, a, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, a, 0, b, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, b, 0, HPVM_RT_PIPELINE_HOST, 0));
  return pipeline;
}

typedef struct pusher_t {
  hpvm_rt_stream_t *stream;
  int64_t first, count, stride;
  bool until_error;
  hpvm_status_code_t final_code;
} pusher_t;

static void *pusher_main(void *arg) {
  pusher_t *pusher = arg;
  for (int64_t i = 0; pusher->until_error || i < pusher->count; ++i) {
    int64_t value = pusher->first + i * pusher->stride;
    hpvm_status_t status = hpvm_rt_stream_push(pusher->stream, &value);
    if (status) {
      pusher->final_code = hpvm_status_code(status);
      hpvm_status_free(status);
      return NULL;
    }
  }
  return NULL;
}

static void test_order(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  hpvm_rt_pipeline_t *pipeline = two_stage(runtime, 0, NULL);
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  hpvm_rt_pipeline_destroy(pipeline); /* the stream keeps what it needs */
  /* The default capacity lets a host push 16 items before it pops any. */
  for (int64_t i = 0; i < 16; ++i)
    CHECK_OK(hpvm_rt_stream_push(stream, &i));
  for (int64_t i = 0; i < 16; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, 2 * i + 1);
  }
  int64_t count = (int64_t)test_scaled(100000);
  pusher_t pusher = {stream, 16, count, 1, false, HPVM_STATUS_OK};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, pusher_main, &pusher) == 0);
  for (int64_t i = 16; i < 16 + count; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, 2 * i + 1);
  }
  pthread_join(thread, NULL);
  hpvm_rt_stream_close_input(stream);
  int64_t out;
  CHECK_CODE(hpvm_rt_stream_pop(stream, &out), HPVM_STATUS_OUT_OF_RANGE);
  CHECK_CODE(hpvm_rt_stream_push(stream, &out), HPVM_STATUS_FAILED_PRECONDITION);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

/* host -> a; a fans out to b and c; d joins b and c -> host.  d = 2x+1 + 2x+1. */
static void test_fan_out_join(uint32_t threads) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime_threads(&state, NULL, threads);
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 8, 16, &pipeline));
  hpvm_rt_stage_version_t dbl = {HPVM_RT_DEVICE_CPU, double_it};
  hpvm_rt_stage_version_t inc = {HPVM_RT_DEVICE_CPU, add_one};
  hpvm_rt_stage_version_t sum = {HPVM_RT_DEVICE_CPU, sum_two};
  uint32_t a, b, c, d;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "a", &dbl, 1, NULL, 1, word, 1, word, &a));
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "b", &inc, 1, NULL, 1, word, 1, word, &b));
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "c", &inc, 1, NULL, 1, word, 1, word, &c));
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "d", &sum, 1, NULL, 2, word, 1, word, &d));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, a, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, a, 0, b, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, a, 0, c, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, b, 0, d, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, c, 0, d, 1));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, d, 0, HPVM_RT_PIPELINE_HOST, 0));
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, a, 0, d, 1), HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, a, 0, b, 0), HPVM_STATUS_FAILED_PRECONDITION);
  int64_t count = (int64_t)test_scaled(20000);
  pusher_t pusher = {stream, 0, count, 3, false, HPVM_STATUS_OK};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, pusher_main, &pusher) == 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, 2 * (2 * (3 * i) + 1));
  }
  pthread_join(thread, NULL);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

/* The host pushes 100 items, pops 3 and waits: every pushed item is still processed. */
static void test_early_stop(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  _Atomic int64_t processed = 0;
  hpvm_rt_pipeline_t *pipeline = two_stage(runtime, 128, &processed);
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  for (int64_t i = 0; i < 100; ++i)
    CHECK_OK(hpvm_rt_stream_push(stream, &i));
  for (int64_t i = 0; i < 3; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, 2 * i + 1);
  }
  CHECK_OK(hpvm_rt_stream_wait(stream));
  CHECK_EQ_INT(atomic_load(&processed), 100);
  /* A stream that never saw an item ends cleanly too. */
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

/* The host floods the stream and never pops: cancel must free the blocked pusher. */
static void test_cancel(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  hpvm_rt_pipeline_t *pipeline = two_stage(runtime, 16, NULL);
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  pusher_t pusher = {stream, 0, 0, 1, true, HPVM_STATUS_OK};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, pusher_main, &pusher) == 0);
  for (int64_t i = 0; i < 5; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, 2 * i + 1);
  }
  hpvm_rt_stream_cancel(stream);
  pthread_join(thread, NULL);
  CHECK_EQ_INT(pusher.final_code, HPVM_STATUS_CANCELLED);
  int64_t out;
  CHECK_CODE(hpvm_rt_stream_pop(stream, &out), HPVM_STATUS_CANCELLED);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

static hpvm_status_t fail_at_ten(void *context, hpvm_rt_device_t *device, int64_t item,
                                 const void *const *in, void *const *out) {
  (void)context;
  (void)device;
  if (item == 10)
    return hpvm_status_create(HPVM_STATUS_DATA_LOSS, "bad item");
  *(int64_t *)out[0] = *(const int64_t *)in[0];
  return NULL;
}

static void test_stage_error(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 8, 16, &pipeline));
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, fail_at_ten};
  uint32_t s;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "fragile", &version, 1, NULL, 1, word, 1, word, &s));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, s, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, s, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  pusher_t pusher = {stream, 0, 0, 1, true, HPVM_STATUS_OK};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, pusher_main, &pusher) == 0);
  int64_t popped = 0;
  hpvm_status_t status;
  int64_t out;
  while (!(status = hpvm_rt_stream_pop(stream, &out)))
    CHECK_EQ_INT(out, popped++);
  CHECK_EQ_INT(popped, 10);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_DATA_LOSS);
  CHECK(strstr(hpvm_status_message(status), "stage 'fragile' item 10") != NULL);
  hpvm_status_free(status);
  pthread_join(thread, NULL);
  CHECK_EQ_INT(pusher.final_code, HPVM_STATUS_DATA_LOSS);
  CHECK_CODE(hpvm_rt_stream_wait(stream), HPVM_STATUS_DATA_LOSS);
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

static void test_validation(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 4, 0, &pipeline));
  hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, double_it};
  uint32_t s, t;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "s", &version, 1, NULL, 1, word, 1, word, &s));
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, s, 0, HPVM_RT_PIPELINE_HOST, 0),
             HPVM_STATUS_INVALID_ARGUMENT); /* 8-byte items into a 4-byte output */
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, s, 1, s, 0), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, 7, 0, s, 0), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 1, s, 0),
             HPVM_STATUS_INVALID_ARGUMENT);
  hpvm_rt_stream_t *stream;
  CHECK_CODE(hpvm_runtime_stream_launch(runtime, pipeline, &stream), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, s, 0));
  CHECK_CODE(hpvm_runtime_stream_launch(runtime, pipeline, &stream),
             HPVM_STATUS_INVALID_ARGUMENT); /* host output not connected */
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "t", &version, 1, NULL, 0, NULL, 1, word, &t));
  hpvm_rt_pipeline_destroy(pipeline);

  /* No host output: pop is refused, wait still ends the stream. */
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 0, 0, &pipeline));
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "sink", &version, 1, NULL, 1, word, 1, word, &s));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, s, 0));
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  int64_t value = 1;
  CHECK_OK(hpvm_rt_stream_push(stream, &value));
  CHECK_CODE(hpvm_rt_stream_pop(stream, &value), HPVM_STATUS_FAILED_PRECONDITION);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  CHECK_CODE(hpvm_rt_pipeline_add_stage(pipeline, "late", &version, 1, NULL, 1, word, 1, word, &t),
             HPVM_STATUS_FAILED_PRECONDITION);
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

/*===--- policy per data item -----------------------------------------------===*/

static hpvm_status_t tag_device(void *context, hpvm_rt_device_t *device, int64_t item,
                                const void *const *in, void *const *out) {
  (void)context;
  (void)item;
  *(int64_t *)out[0] = *(const int64_t *)in[0] * 10 + (int64_t)device->kind;
  return NULL;
}

static void test_item_policy(void) {
  test_allocator_t state = {0};
  test_device_t *gpu;
  hpvm_runtime_t *runtime = make_runtime(&state, &gpu);
  CHECK_OK(hpvm_runtime_policy_set(runtime, HPVM_RT_POLICY_STATIC_ITEM));
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, 8, 8, 16, &pipeline));
  hpvm_rt_stage_version_t versions[2] = {{HPVM_RT_DEVICE_CPU, tag_device},
                                         {HPVM_RT_DEVICE_CUDA, tag_device}};
  uint32_t s;
  CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "split", versions, 2, NULL, 1, word, 1, word, &s));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, s, 0));
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, s, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  for (int64_t i = 0; i < 10; ++i) {
    CHECK_OK(hpvm_rt_stream_push(stream, &i));
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    CHECK_EQ_INT(out, i * 10 + (i % 2 ? HPVM_RT_DEVICE_CUDA : HPVM_RT_DEVICE_CPU));
  }
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

/* Several host threads push at once: each thread's items stay in order. */
static void test_many_pushers(void) {
  test_allocator_t state = {0};
  hpvm_runtime_t *runtime = make_runtime(&state, NULL);
  hpvm_rt_pipeline_t *pipeline = two_stage(runtime, 32, NULL);
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));
  enum { PUSHERS = 4 };
  int64_t per = (int64_t)test_scaled(5000);
  pusher_t pushers[PUSHERS];
  pthread_t threads[PUSHERS];
  for (int p = 0; p < PUSHERS; ++p) {
    /* Values of pusher p are p, p+4, p+8, ...: the pusher is value % 4. */
    pusher_t init = {stream, p, per, PUSHERS, false, HPVM_STATUS_OK};
    pushers[p] = init;
    CHECK(pthread_create(&threads[p], NULL, pusher_main, &pushers[p]) == 0);
  }
  int64_t next[PUSHERS] = {0, 1, 2, 3};
  for (int64_t i = 0; i < per * PUSHERS; ++i) {
    int64_t out;
    CHECK_OK(hpvm_rt_stream_pop(stream, &out));
    int64_t value = (out - 1) / 2;
    int p = (int)(value % PUSHERS);
    CHECK_EQ_INT(value, next[p]);
    next[p] += PUSHERS;
  }
  for (int p = 0; p < PUSHERS; ++p)
    pthread_join(threads[p], NULL);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

int main(void) {
  test_order();
  test_fan_out_join(1);
  test_fan_out_join(2);
  test_fan_out_join(8);
  test_early_stop();
  test_cancel();
  test_stage_error();
  test_validation();
  test_item_policy();
  test_many_pushers();
  printf("stream_test: OK\n");
  return 0;
}
