/* tracker.h - the memory tracker: which copies (host / devices) of each object are valid. */
#ifndef HPVM_MEM_TRACKER_H
#define HPVM_MEM_TRACKER_H

#include "base/allocator.h"
#include "device/device.h"

typedef struct hpvm_mem_tracker_t hpvm_mem_tracker_t;

hpvm_status_t hpvm_mem_tracker_create(hpvm_allocator_t allocator, hpvm_mem_tracker_t **out_tracker);
/* Frees every device copy and entry still tracked (without copying back).  Returns the first
 * error of a device free, after freeing everything else. */
hpvm_status_t hpvm_mem_tracker_destroy(hpvm_mem_tracker_t *tracker);

/* See hpvm_rt_track / hpvm_rt_untrack. */
hpvm_status_t hpvm_mem_tracker_track(hpvm_mem_tracker_t *tracker, void *ptr, size_t size);
hpvm_status_t hpvm_mem_tracker_untrack(hpvm_mem_tracker_t *tracker, void *ptr);
/* See hpvm_rt_discard: untrack without bringing device data home. */
hpvm_status_t hpvm_mem_tracker_discard(hpvm_mem_tracker_t *tracker, void *ptr);
/* Makes the copy on `device` (NULL or the CPU device = the host copy) valid for `access` and
 * returns its handle and ptr's offset inside the object.  See hpvm_rt_request_device. */
hpvm_status_t hpvm_mem_tracker_request(hpvm_mem_tracker_t *tracker, void *ptr, size_t size,
                                       hpvm_device_t *device, hpvm_rt_access_t access,
                                       uint64_t *out_handle, size_t *out_offset);
/* Whether `ptr` lies inside a tracked object; if so, the object's start and size.  Copies
 * nothing and changes no validity (hpvm_rt_kernel_run plans its requests with it). */
bool hpvm_mem_tracker_find(hpvm_mem_tracker_t *tracker, const void *ptr, void **out_base,
                           size_t *out_size);
/* Number of tracked objects (tests and diagnostics). */
size_t hpvm_mem_tracker_count(hpvm_mem_tracker_t *tracker);

#endif /* HPVM_MEM_TRACKER_H */
