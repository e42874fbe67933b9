/* MPI start, messages and failure (link.h). */
#define _GNU_SOURCE
#include "mpi/link.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hpvm_mpi_world_t hpvm_mpi_world;

int hpvm_mpi_start_world(void) {
  /* Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI_SIZE / PMIX_RANK come from others. */
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
    return 0;
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "hpvm: MPI_Init_thread failed\n");
    exit(1);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &hpvm_mpi_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &hpvm_mpi_world.size);
  hpvm_mpi_world.active = 1;
  if (provided < MPI_THREAD_MULTIPLE && hpvm_mpi_world.size > 1)
    hpvm_mpi_fail(hpvm_mpi_world.rank,
                  "the MPI library gives thread level %d, the MPI layer needs "
                  "MPI_THREAD_MULTIPLE (%d)", provided, MPI_THREAD_MULTIPLE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return 1;
}

int hpvm_mpi_try_receive(int source, hpvm_mpi_message_t *message) {
  int found = 0;
  MPI_Message handle;
  MPI_Status status;
  if (MPI_Improbe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &handle, &status) !=
      MPI_SUCCESS)
    hpvm_mpi_fail(source, "probing for messages failed");
  if (!found)
    return 0;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  message->source = status.MPI_SOURCE;
  message->tag = status.MPI_TAG;
  message->size = (size_t)count;
  message->data = malloc(message->size ? message->size : 1);
  if (!message->data)
    abort();
  if (MPI_Mrecv(message->data, count, MPI_BYTE, &handle, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    hpvm_mpi_fail(message->source, "receiving a message (tag %d) failed", message->tag);
  return 1;
}

void hpvm_mpi_send(int destination, int tag, const void *data, size_t size) {
  if (size > (size_t)INT32_MAX)
    hpvm_mpi_fail(destination, "a message of %zu bytes is more than MPI_Send takes", size);
  if (MPI_Send(data, (int)size, MPI_BYTE, destination, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
    hpvm_mpi_fail(destination, "sending a message (tag %d) failed", tag);
}

double hpvm_mpi_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void hpvm_mpi_backoff(unsigned idle) {
  if (idle < 64)
    return;
  /* Yield (the core goes to whoever waits for it: on a shared machine, the stages), then
   * sleep: a sleep lasts at least the timer slack (50 us), too long between items. */
  if (idle < 4096) {
    sched_yield();
    return;
  }
  struct timespec t = {0, idle < 8192 ? 20000 : 200000};
  nanosleep(&t, NULL);
}

_Noreturn void hpvm_mpi_fail(int rank, const char *format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "hpvm: MPI rank %d: %s\n", rank, text);
  fflush(stderr);
  if (hpvm_mpi_world.active)
    MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}
