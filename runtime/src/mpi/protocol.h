/* The headers of the messages between rank 0 and the workers (after the tag, link.h). */
#ifndef HPVM_RT_MPI_PROTOCOL_H
#define HPVM_RT_MPI_PROTOCOL_H

#include <stdint.h>

/* LAUNCH: the header, then the layout's text (layout_length bytes), then the plan. */
typedef struct {
  uint32_t stream, credits, layout_length, pad;
} hpvm_mpi_launch_header_t;

/* ITEM: the header, then the packed item. RESULT: the header, then the packed result, or
 * the error's message when code is not HPVM_STATUS_OK. DONE (sequence unused): the header,
 * then the message of the stream's error. CLOSE: the header alone. */
typedef struct {
  uint32_t stream, code;
  uint64_t sequence;
} hpvm_mpi_item_header_t;

/* DONE's sequence: the stream ended (its last message), or an error came first. */
enum { HPVM_MPI_DONE_FINAL = 0, HPVM_MPI_DONE_EARLY = 1 };

#endif
