/* The stream of stream_items.c (test/Integration/Distributed/Inputs) written by hand with
 * MPI_Send / MPI_Recv: rank 0 deals items round-robin to the other ranks with up to 32 in
 * flight, each worker computes both stages and sends the result back, and rank 0 prints the
 * results in item order. The transport the MPI layer is measured against (run.sh).
 * usage: mpirun -np N hand_mpi [ITEMS [WORK [quiet]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  long index;
  double x;
  long work;
} Item;

typedef struct {
  long index;
  double y;
} Result;

static Result compute(Item item) {
  double t = item.x * 1.5 + (double)item.index;
  for (long i = 0; i < item.work; ++i)
    t = t * 0.999999 + 1e-7;
  return (Result){item.index, t * t - (double)item.index / 3.0};
}

static void worker(void) {
  for (;;) {
    Item item;
    MPI_Status status;
    MPI_Recv(&item, sizeof item, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == 2)
      return;
    Result r = compute(item);
    MPI_Send(&r, sizeof r, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "hand_mpi: needs 2 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank > 0) {
    worker();
    MPI_Finalize();
    return 0;
  }
  long n = argc > 1 ? atol(argv[1]) : 10000, work = argc > 2 ? atol(argv[2]) : 0;
  int quiet = argc > 3 && strcmp(argv[3], "quiet") == 0;
  Result *results = malloc(sizeof *results * (size_t)n);
  long sent = 0, received = 0, printed = 0;
  char *done = calloc((size_t)n, 1);
  double sum = 0.0, start = MPI_Wtime();
  while (printed < n) {
    while (sent < n && sent - received < 32) {
      Item item = {sent, (double)((sent * 7919) % 1009) / 7.0, work};
      MPI_Send(&item, sizeof item, MPI_BYTE, 1 + (int)(sent % (size - 1)), 1, MPI_COMM_WORLD);
      sent++;
    }
    Result r;
    MPI_Recv(&r, sizeof r, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    results[r.index] = r;
    done[r.index] = 1;
    received++;
    for (; printed < n && done[printed]; ++printed) {
      sum += results[printed].y;
      if (!quiet)
        printf("item %ld %a\n", results[printed].index, results[printed].y);
    }
  }
  fprintf(stderr, "stream: %.6f s\n", MPI_Wtime() - start);
  printf("stream: items=%ld misordered=0 sum=%a\n", n, sum);
  for (int w = 1; w < size; ++w)
    MPI_Send(NULL, 0, MPI_BYTE, w, 2, MPI_COMM_WORLD);
  free(results);
  free(done);
  MPI_Finalize();
  return 0;
}
