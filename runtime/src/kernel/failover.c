/* failover.c - a kernel that failed after it started: its results are dropped, the device is
 * not used again by this runtime, and the caller runs the node's CPU version. */
#include "kernel/failover.h"

#include <stdatomic.h>

#include "base/trace.h"

hpvm_status_t hpvm_kernel_failover(hpvm_kernel_site_state_t *state, hpvm_kernel_buffers_t *run,
                                   hpvm_status_t error, const char *what,
                                   hpvm_kernel_reason_t *reason) {
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_device_t *device = run->device;
  /* Marked first: no other node starts on it while this one recovers. */
  atomic_store(&device->failed, true);
  hpvm_status_free(hpvm_kernel_buffers_release(run, false));
  /* The device's copies of what the kernel may have written are garbage now; the host copies
   * were made valid before the launch and nothing wrote them since (OUT on the host: valid,
   * nothing copied, every device copy stale). */
  hpvm_status_t restored = NULL;
  for (uint32_t i = 0; i < run->count && !restored; ++i) {
    const param_slot_t *slot = &run->slots[i];
    if (slot->requested && slot->writes)
      restored = hpvm_mem_tracker_request(run->cache->tracker, run->params[i].host, slot->bytes,
                                          NULL, HPVM_RT_ACCESS_OUT, NULL, NULL);
  }
  hpvm_kernel_buffers_free(run);
  if (restored) {
    hpvm_status_t annotated = hpvm_status_annotate(
        restored, "node '%s': restoring the host copies after %s failed on %s: %s",
        hpvm_kernel_node_name(site), what, device->name, hpvm_status_message(error));
    hpvm_status_free(error);
    return annotated;
  }
  hpvm_warning("node '%s': %s failed on %s (%s: %s); the node runs again on the CPU from its "
               "inputs, and %s is not used again in this run",
               hpvm_kernel_node_name(site), what, device->name,
               hpvm_status_code_name(hpvm_status_code(error)), hpvm_status_message(error),
               device->name);
  hpvm_kernel_reason_add(reason, "%s failed: %s", device->name, hpvm_status_message(error));
  hpvm_status_free(error);
  if (hpvm_trace_enabled())
    hpvm_trace_line("%s falls back to cpu: %s", hpvm_kernel_node_name(site), reason->text);
  return NULL;
}
