/* failover.h - a device error while a node's kernel ran (a failed launch, a lost device, an
 * illegal address the driver reports): the node's part runs again on the CPU, once. */
#ifndef HPVM_KERNEL_FAILOVER_H
#define HPVM_KERNEL_FAILOVER_H

#include "kernel/buffers.h"

/* After `error` came from a kernel (or library call) that had started on `device`: drops what
 * the device computed (temporaries freed without copying back, the tracked objects it may have
 * written made host-valid again: their host copies hold the data from before the launch, as
 * hpvm_kernel_buffers_prepare keeps them with `keep_host`), marks the device failed for the
 * rest of the run and warns naming the node, the device and the error.  Frees `error` and the
 * buffers.  NULL: the caller runs the CPU version from the same inputs; else the error (the
 * host copies could not be restored). */
hpvm_status_t hpvm_kernel_failover(hpvm_kernel_site_state_t *state, hpvm_kernel_buffers_t *run,
                                   hpvm_status_t error, const char *what,
                                   hpvm_kernel_reason_t *reason);

#endif /* HPVM_KERNEL_FAILOVER_H */
