/* A pipeline as the program described it (create, add_stage, connect), recorded on rank 0,
 * sent to the workers and built there with the runtime's own functions. Stage functions
 * travel as offsets from a function of this layer: every rank runs the same program. */
#ifndef HPVM_RT_MPI_PLAN_H
#define HPVM_RT_MPI_PLAN_H

#include "mpi/wire.h"

/* The most stages, versions per stage and ports per stage a plan may have. */
#define HPVM_MPI_PLAN_LIMIT 1024

typedef struct {
  int32_t device;
  int64_t offset;
} hpvm_mpi_version_t;

typedef struct {
  uint32_t version_count, in_count, out_count;
  hpvm_mpi_version_t *versions;
  uint64_t *in_sizes, *out_sizes;
} hpvm_mpi_stage_t;

typedef struct {
  uint32_t src, src_port, dst, dst_port;
} hpvm_mpi_connect_t;

typedef struct {
  uint64_t input_size, output_size;
  uint32_t capacity, stage_count, connect_count;
  hpvm_mpi_stage_t *stages;
  hpvm_mpi_connect_t *connects;
  /* Why the pipeline cannot travel (a stage context, a function of another library), or
   * NULL. */
  const char *refusal;
} hpvm_mpi_plan_t;

void hpvm_mpi_plan_add_stage(hpvm_mpi_plan_t *plan, const hpvm_rt_stage_version_t *versions,
                             uint32_t version_count, void *context, uint32_t input_count,
                             const size_t *input_sizes, uint32_t output_count,
                             const size_t *output_sizes);
void hpvm_mpi_plan_connect(hpvm_mpi_plan_t *plan, uint32_t src, uint32_t src_port,
                           uint32_t dst, uint32_t dst_port);
void hpvm_mpi_plan_encode(const hpvm_mpi_plan_t *plan, hpvm_mpi_bytes_t *out);
/* The plan of `data`; 0 when the bytes are short. */
int hpvm_mpi_plan_decode(const char *data, size_t size, hpvm_mpi_plan_t *plan);
/* The pipeline of `plan`, made by the runtime's own functions. */
hpvm_status_t hpvm_mpi_plan_build(const hpvm_mpi_plan_t *plan, hpvm_rt_pipeline_t **out);
void hpvm_mpi_plan_free(hpvm_mpi_plan_t *plan);

#endif
