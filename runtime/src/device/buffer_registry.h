/* buffer_registry.h - the live buffers of one device: handle -> size, owner, copies in flight. */
#ifndef HPVM_DEVICE_BUFFER_REGISTRY_H
#define HPVM_DEVICE_BUFFER_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/allocator.h"

/* Who allocated a buffer, and so who may free it: buffers of the memory tracker (device
 * copies of tracked objects) are freed by untrack, never through hpvm_rt_device_free. */
typedef enum hpvm_buffer_owner_e {
  HPVM_BUFFER_OWNER_USER = 1,    /* hpvm_rt_device_alloc */
  HPVM_BUFFER_OWNER_TRACKER = 2, /* the memory tracker */
  HPVM_BUFFER_OWNER_KERNEL_RUN = 3, /* temporaries of hpvm_rt_kernel_run (one call's life) */
} hpvm_buffer_owner_t;

typedef struct hpvm_buffer_entry_t {
  uint64_t handle;
  size_t size;
  uint32_t users; /* copies in flight: the buffer cannot be freed under them */
  uint8_t state;  /* empty, live or deleted (open addressing needs tombstones) */
  uint8_t owner;  /* hpvm_buffer_owner_t */
} hpvm_buffer_entry_t;

/* An open-addressing hash set keyed by handle.  Handles are driver values (host addresses,
 * CUdeviceptr, cl_mem) that a caller may forge or keep after a free, so every buffer call
 * looks its handle up here before the driver sees it.  All functions are thread-safe. */
typedef struct hpvm_buffer_registry_t {
  hpvm_allocator_t allocator;
  pthread_mutex_t mutex;
  hpvm_buffer_entry_t *slots; /* capacity entries, a power of two (or NULL) */
  size_t capacity;
  size_t live;
  size_t deleted;
} hpvm_buffer_registry_t;

void hpvm_buffer_registry_init(hpvm_buffer_registry_t *registry, hpvm_allocator_t allocator);
/* Frees the table (not the buffers: see hpvm_buffer_registry_take_any). */
void hpvm_buffer_registry_destroy(hpvm_buffer_registry_t *registry);

/* Records a new live buffer.  RESOURCE_EXHAUSTED when the table cannot grow; INTERNAL when
 * the handle is already live (a driver handing out one handle twice). */
hpvm_status_t hpvm_buffer_registry_add(hpvm_buffer_registry_t *registry, uint64_t handle,
                                       size_t size, hpvm_buffer_owner_t owner);
/* Removes a live buffer that `owner` may free.  NOT_FOUND when the handle is not live (never
 * allocated, or freed already); FAILED_PRECONDITION when it belongs to another owner or
 * copies are in flight.  `device_name` and `what` only word the messages. */
hpvm_status_t hpvm_buffer_registry_remove(hpvm_buffer_registry_t *registry, uint64_t handle,
                                          hpvm_buffer_owner_t owner, const char *device_name);
/* Checks that [offset, offset + size) lies inside the live buffer `handle` (overflow-safe)
 * and, if so, counts a copy in flight until hpvm_buffer_registry_end_use.  NOT_FOUND for a
 * handle that is not live, OUT_OF_RANGE for a range leaving the buffer. */
hpvm_status_t hpvm_buffer_registry_begin_use(hpvm_buffer_registry_t *registry, uint64_t handle,
                                             size_t offset, size_t size, const char *what,
                                             const char *device_name);
void hpvm_buffer_registry_end_use(hpvm_buffer_registry_t *registry, uint64_t handle);
/* Removes some live buffer and returns its handle (for freeing what is left when a device is
 * destroyed); false when none is left. */
bool hpvm_buffer_registry_take_any(hpvm_buffer_registry_t *registry, uint64_t *out_handle);
/* Number of live buffers. */
size_t hpvm_buffer_registry_count(hpvm_buffer_registry_t *registry);

#endif /* HPVM_DEVICE_BUFFER_REGISTRY_H */
