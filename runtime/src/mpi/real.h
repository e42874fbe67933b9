/* The runtime's streaming functions that the MPI layer takes: hpvm-cc --distribute=mpi links
 * with -Wl,--wrap=<function> for each, so the program's hpvm_rt_stream_push is
 * __wrap_hpvm_rt_stream_push (host.c) and __real_hpvm_rt_stream_push is the runtime's. One
 * list declares both. */
#ifndef HPVM_RT_MPI_REAL_H
#define HPVM_RT_MPI_REAL_H

#include <hpvm/hpvm_rt.h>

/* The wrapped functions, their names prefixed with PREFIX (__real_ or __wrap_). */
#define HPVM_MPI_WRAPPED_FUNCTIONS(PREFIX)                                                 \
  hpvm_status_t PREFIX##hpvm_rt_pipeline_create(size_t input_size, size_t output_size,    \
                                                uint32_t capacity,                        \
                                                hpvm_rt_pipeline_t **out);                \
  hpvm_status_t PREFIX##hpvm_rt_pipeline_add_stage(                                       \
      hpvm_rt_pipeline_t *pipeline, const char *name,                                     \
      const hpvm_rt_stage_version_t *versions, uint32_t version_count, void *context,     \
      uint32_t input_count, const size_t *input_sizes, uint32_t output_count,             \
      const size_t *output_sizes, uint32_t *out_stage);                                   \
  hpvm_status_t PREFIX##hpvm_rt_pipeline_connect(hpvm_rt_pipeline_t *pipeline,            \
                                                 uint32_t src, uint32_t src_port,         \
                                                 uint32_t dst, uint32_t dst_port);        \
  void PREFIX##hpvm_rt_pipeline_destroy(hpvm_rt_pipeline_t *pipeline);                    \
  hpvm_status_t PREFIX##hpvm_rt_stream_launch(const hpvm_rt_pipeline_t *pipeline,         \
                                              hpvm_rt_stream_t **out_stream);             \
  hpvm_status_t PREFIX##hpvm_rt_stream_push(hpvm_rt_stream_t *stream, const void *item);  \
  hpvm_status_t PREFIX##hpvm_rt_stream_pop(hpvm_rt_stream_t *stream, void *out_item);     \
  void PREFIX##hpvm_rt_stream_close_input(hpvm_rt_stream_t *stream);                      \
  void PREFIX##hpvm_rt_stream_cancel(hpvm_rt_stream_t *stream);                           \
  hpvm_status_t PREFIX##hpvm_rt_stream_wait(hpvm_rt_stream_t *stream);

HPVM_MPI_WRAPPED_FUNCTIONS(__real_)
HPVM_MPI_WRAPPED_FUNCTIONS(__wrap_)

#endif
