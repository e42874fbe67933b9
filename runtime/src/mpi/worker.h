/* Ranks other than 0: run the streams rank 0 deals items of, until it ends the program. */
#ifndef HPVM_RT_MPI_WORKER_H
#define HPVM_RT_MPI_WORKER_H

/* Serves rank 0 until its SHUTDOWN; returns the exit status. */
int hpvm_mpi_worker_run(void);

#endif
