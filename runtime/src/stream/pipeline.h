/* pipeline.h - streaming graphs: stages connected by bounded rings, fired by stream workers. */
#ifndef HPVM_STREAM_PIPELINE_H
#define HPVM_STREAM_PIPELINE_H

#include "base/allocator.h"
#include "sched/runner.h"

/* The minimum and default ring capacity: a host can push this many items before popping. */
#define HPVM_STREAM_MIN_CAPACITY 16u
#define HPVM_STREAM_DEFAULT_CAPACITY 64u

/* Creates a pipeline description (see hpvm_rt_pipeline_create); capacity 0 means
 * `default_capacity`. */
hpvm_status_t hpvm_stream_pipeline_create(hpvm_allocator_t allocator, size_t input_size,
                                          size_t output_size, uint32_t capacity,
                                          uint32_t default_capacity,
                                          hpvm_rt_pipeline_t **out_pipeline);
/* Starts the stream (see hpvm_rt_stream_launch) with min(stages, thread_count) workers that
 * fire whichever stage is ready; `runner` must outlive the stream. */
hpvm_status_t hpvm_stream_launch(const hpvm_rt_pipeline_t *pipeline, hpvm_sched_runner_t runner,
                                 uint32_t thread_count, hpvm_rt_stream_t **out_stream);

#endif /* HPVM_STREAM_PIPELINE_H */
