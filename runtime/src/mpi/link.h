/* The MPI side of the distributed streams: whether this process runs under mpirun, its rank,
 * the message tags, and sending and polling with deadlines. */
#ifndef HPVM_RT_MPI_LINK_H
#define HPVM_RT_MPI_LINK_H

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>

enum {
  HPVM_MPI_TAG_LAUNCH = 1, /* 0 -> worker: a stream's pipeline */
  HPVM_MPI_TAG_ITEM,       /* 0 -> worker: stream, sequence number, item */
  HPVM_MPI_TAG_CLOSE,      /* 0 -> worker: end of a stream's input */
  HPVM_MPI_TAG_RESULT,     /* worker -> 0: stream, sequence number, status, output */
  HPVM_MPI_TAG_DONE,       /* worker -> 0: a stream ended, with its status */
  HPVM_MPI_TAG_HEARTBEAT,  /* worker -> 0: alive (every HPVM_MPI_HEARTBEAT_MS) */
  HPVM_MPI_TAG_SHUTDOWN,   /* 0 -> worker: the program ends */
  HPVM_MPI_TAG_BYE,        /* worker -> 0: ends now */
};

#define HPVM_MPI_HEARTBEAT_MS 200

typedef struct {
  int active; /* MPI_Init ran (under mpirun) */
  int rank, size;
} hpvm_mpi_world_t;

extern hpvm_mpi_world_t hpvm_mpi_world;

/* MPI_Init_thread (MPI_THREAD_MULTIPLE) when this process was started by mpirun, with
 * errors returned rather than fatal; 0 when it was not. Ends the program with a message
 * when MPI cannot give threads. */
int hpvm_mpi_start_world(void);

/* A received message: its source, tag and bytes (malloc'd). */
typedef struct {
  int source, tag;
  char *data;
  size_t size;
} hpvm_mpi_message_t;

/* A message from `source` (MPI_ANY_SOURCE) if one is waiting: 1, else 0. */
int hpvm_mpi_try_receive(int source, hpvm_mpi_message_t *message);
/* Sends; ends the program with a message naming the rank when MPI fails. */
void hpvm_mpi_send(int destination, int tag, const void *data, size_t size);
/* Seconds since an arbitrary start (monotonic). */
double hpvm_mpi_now(void);
/* Sleeps after `idle` empty polls: nothing at first, then up to 200 us. */
void hpvm_mpi_backoff(unsigned idle);
/* Prints "hpvm: MPI rank R: <message>" and aborts every rank (MPI_Abort). */
_Noreturn void hpvm_mpi_fail(int rank, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif
