/* stream_stress_test.c - 5-stage pipeline moving 1,000,000 items of 8 B-4 KiB, checked for
 * loss, duplication, reordering and corruption (HPVM_STRESS_SCALE divides the count). */
#include <pthread.h>

#include "runtime.h"
#include "test_util.h"

#define STAGES 5
#define MAX_PAYLOAD 4096
#define MIN_PAYLOAD 8

/* One slot holds the largest item; an item uses `size` payload bytes of it and stages touch
 * only those, so the traffic is that of random-size items. */
typedef struct item_t {
  uint64_t sequence;
  uint32_t size;
  uint32_t hops;
  uint64_t payload[MAX_PAYLOAD / 8];
} item_t;

static uint32_t item_size(uint64_t sequence) {
  uint64_t state = sequence * 0x9E3779B97F4A7C15ULL + 1;
  return MIN_PAYLOAD + (uint32_t)(test_random(&state) % (MAX_PAYLOAD - MIN_PAYLOAD + 1));
}

static void fill_payload(uint64_t *words, uint64_t sequence, uint32_t size) {
  uint64_t state = sequence ^ 0xD1B54A32D192ED03ULL;
  for (uint32_t w = 0; w < (size + 7) / 8; ++w)
    words[w] = test_random(&state);
}

/* Stage k checks the hop count and xors the payload with a stage-specific key, so the host can
 * tell that every stage saw every item exactly once and in order. */
static uint64_t stage_key(uint32_t stage) { return 0x0101010101010101ULL * (stage + 1); }

typedef struct stage_state_t {
  uint32_t index;
  uint64_t expected_sequence;
} stage_state_t;

static hpvm_status_t stage_body(void *context, hpvm_rt_device_t *device, int64_t data_item,
                                const void *const *in, void *const *out) {
  (void)device;
  stage_state_t *state = context;
  const item_t *source = in[0];
  item_t *target = out[0];
  if (source->hops != state->index || source->sequence != state->expected_sequence ||
      (int64_t)source->sequence != data_item)
    return hpvm_status_create(HPVM_STATUS_DATA_LOSS,
                              "stage %u got sequence %llu (hops %u), expected %llu", state->index,
                              (unsigned long long)source->sequence, source->hops,
                              (unsigned long long)state->expected_sequence);
  state->expected_sequence++;
  target->sequence = source->sequence;
  target->size = source->size;
  target->hops = source->hops + 1;
  uint64_t key = stage_key(state->index);
  for (uint32_t w = 0; w < (source->size + 7) / 8; ++w)
    target->payload[w] = source->payload[w] ^ key;
  return NULL;
}

typedef struct producer_t {
  hpvm_rt_stream_t *stream;
  uint64_t count;
} producer_t;

static void *producer_main(void *arg) {
  producer_t *producer = arg;
  item_t *item = malloc(sizeof(item_t));
  for (uint64_t i = 0; i < producer->count; ++i) {
    item->sequence = i;
    item->size = item_size(i);
    item->hops = 0;
    fill_payload(item->payload, i, item->size);
    CHECK_OK(hpvm_rt_stream_push(producer->stream, item));
  }
  hpvm_rt_stream_close_input(producer->stream);
  free(item);
  return NULL;
}

int main(void) {
  uint64_t count = test_scaled(1000000);
  test_allocator_t state = {0};
  hpvm_runtime_options_t options = {0};
  options.allocator = test_allocator_make(&state);
  options.only_given_devices = true;
  hpvm_runtime_t *runtime;
  CHECK_OK(hpvm_runtime_create(&options, &runtime));
  hpvm_rt_pipeline_t *pipeline;
  CHECK_OK(hpvm_runtime_pipeline_create(runtime, sizeof(item_t), sizeof(item_t), 32, &pipeline));
  stage_state_t stages[STAGES];
  size_t size = sizeof(item_t);
  uint32_t previous = HPVM_RT_PIPELINE_HOST;
  for (uint32_t k = 0; k < STAGES; ++k) {
    stages[k].index = k;
    stages[k].expected_sequence = 0;
    hpvm_rt_stage_version_t version = {HPVM_RT_DEVICE_CPU, stage_body};
    uint32_t id;
    CHECK_OK(hpvm_rt_pipeline_add_stage(pipeline, "stage", &version, 1, &stages[k], 1, &size, 1,
                                        &size, &id));
    CHECK_OK(hpvm_rt_pipeline_connect(pipeline, previous, 0, id, 0));
    previous = id;
  }
  CHECK_OK(hpvm_rt_pipeline_connect(pipeline, previous, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_stream_t *stream;
  CHECK_OK(hpvm_runtime_stream_launch(runtime, pipeline, &stream));

  producer_t producer = {stream, count};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, producer_main, &producer) == 0);
  item_t *item = malloc(sizeof(item_t));
  uint64_t *expected = malloc(MAX_PAYLOAD);
  uint64_t mask = 0;
  for (uint32_t k = 0; k < STAGES; ++k)
    mask ^= stage_key(k);
  uint64_t received = 0, bytes = 0;
  for (;;) {
    hpvm_status_t status = hpvm_rt_stream_pop(stream, item);
    if (hpvm_status_code(status) == HPVM_STATUS_OUT_OF_RANGE) {
      hpvm_status_free(status);
      break;
    }
    CHECK_OK(status);
    CHECK_EQ_INT(item->sequence, received); /* nothing lost, duplicated or reordered */
    CHECK_EQ_INT(item->hops, STAGES);
    CHECK_EQ_INT(item->size, item_size(received));
    fill_payload(expected, received, item->size);
    for (uint32_t w = 0; w < (item->size + 7) / 8; ++w)
      if (item->payload[w] != (expected[w] ^ mask)) {
        fprintf(stderr, "item %llu word %u corrupted\n", (unsigned long long)received, w);
        return 1;
      }
    bytes += item->size;
    ++received;
  }
  pthread_join(thread, NULL);
  CHECK_EQ_INT(received, count);
  CHECK_OK(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  CHECK_OK(hpvm_runtime_destroy(runtime));
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  free(item);
  free(expected);
  printf("stream_stress_test: OK (%llu items, %llu payload bytes, %d stages)\n",
         (unsigned long long)received, (unsigned long long)bytes, STAGES);
  return 0;
}
