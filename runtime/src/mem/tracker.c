/* tracker.c - thread-safe tracker: a sorted table of objects, each with its own lock.
 *
 * An object may be held by several threads at once (launches of one graph from several host
 * threads that share a read-only input): each thread tracks and untracks it for itself, the
 * device copies live until the last holder untracks it, and a device write while others hold
 * it is refused.  One thread holds an object once: a second track of it by the same thread
 * (one array passed twice to one call, or launched again before the first launch's wait) is
 * ALREADY_EXISTS, as before. */
#include "mem/tracker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* One location per device kind; location HPVM_RT_DEVICE_CPU is the host copy itself. */
typedef struct tracked_copy_t {
  hpvm_device_t *device; /* NULL until allocated (never set for the host) */
  uint64_t handle;
  bool valid;
} tracked_copy_t;

typedef struct tracked_object_t {
  char *base;
  size_t size;
  _Atomic uint32_t references; /* the table holds one; each request in flight holds one */
  /* Copies of one object are made under its own lock so that transfers of different objects
   * run in parallel: no global lock around device work. */
  pthread_mutex_t mutex;
  bool untracked; /* set under mutex by the last untrack; later requests see NOT_FOUND */
  /* The threads that hold the object (each once), guarded by the table lock.  `holds` is
   * also read without it by request (a snapshot: see the device-write check). */
  uint64_t *holders; /* thread_id()s */
  uint32_t holder_capacity;
  _Atomic uint32_t holds;
  tracked_copy_t copies[HPVM_RT_DEVICE_KIND_COUNT];
} tracked_object_t;

struct hpvm_mem_tracker_t {
  hpvm_allocator_t allocator;
  pthread_rwlock_t lock; /* guards the table, never held during copies */
  tracked_object_t **objects; /* sorted by base */
  size_t count;
  size_t capacity;
};

hpvm_status_t hpvm_mem_tracker_create(hpvm_allocator_t allocator,
                                      hpvm_mem_tracker_t **out_tracker) {
  hpvm_mem_tracker_t *tracker;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*tracker), (void **)&tracker));
  tracker->allocator = allocator;
  pthread_rwlock_init(&tracker->lock, NULL);
  *out_tracker = tracker;
  return NULL;
}

static hpvm_status_t free_device_copies(tracked_object_t *object) {
  hpvm_status_t first = NULL;
  for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind) {
    tracked_copy_t *copy = &object->copies[kind];
    if (kind != HPVM_RT_DEVICE_CPU && copy->device) {
      hpvm_status_t status = hpvm_device_buffer_free(copy->device, copy->handle,
                                                     HPVM_BUFFER_OWNER_TRACKER);
      if (status && !first)
        first = status;
      else
        hpvm_status_free(status);
      copy->device = NULL;
      copy->valid = false;
    }
  }
  return first;
}

static void object_release(hpvm_mem_tracker_t *tracker, tracked_object_t *object) {
  if (atomic_fetch_sub(&object->references, 1) == 1) {
    pthread_mutex_destroy(&object->mutex);
    hpvm_allocator_free(tracker->allocator, object->holders);
    hpvm_allocator_free(tracker->allocator, object);
  }
}

hpvm_status_t hpvm_mem_tracker_destroy(hpvm_mem_tracker_t *tracker) {
  if (!tracker)
    return NULL;
  hpvm_status_t first = NULL;
  for (size_t i = 0; i < tracker->count; ++i) {
    hpvm_status_t status = free_device_copies(tracker->objects[i]);
    if (status && !first)
      first = status;
    else
      hpvm_status_free(status);
    object_release(tracker, tracker->objects[i]);
  }
  hpvm_allocator_free(tracker->allocator, tracker->objects);
  pthread_rwlock_destroy(&tracker->lock);
  hpvm_allocator_free(tracker->allocator, tracker);
  return first;
}

/* Index of the first object whose base is > ptr (binary search; table lock held). */
static size_t upper_bound(const hpvm_mem_tracker_t *tracker, const char *ptr) {
  size_t low = 0, high = tracker->count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (tracker->objects[middle]->base <= ptr)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

/* A number for the calling thread, never reused in the process (pthread_t values of threads
 * that ended are reused, which would make a new thread the holder an old one left). */
static uint64_t thread_id(void) {
  static _Atomic uint64_t next_id = 1;
  static _Thread_local uint64_t id;
  if (!id)
    id = atomic_fetch_add(&next_id, 1);
  return id;
}

/* Index of thread `self` among the holders of `object`, or -1 (table lock held). */
static int64_t holder_index(const tracked_object_t *object, uint64_t self) {
  for (uint32_t i = 0; i < atomic_load(&object->holds); ++i)
    if (object->holders[i] == self)
      return i;
  return -1;
}

/* Adds the calling thread as a holder of `object` (table write lock held). */
static hpvm_status_t add_holder(hpvm_mem_tracker_t *tracker, tracked_object_t *object) {
  uint32_t holds = atomic_load(&object->holds);
  if (holds == object->holder_capacity) {
    uint32_t grown = object->holder_capacity ? object->holder_capacity * 2 : 4;
    HPVM_RETURN_IF_ERROR(hpvm_allocator_grow_array(tracker->allocator, (void **)&object->holders,
                                                   object->holder_capacity, grown,
                                                   sizeof(uint64_t)));
    object->holder_capacity = grown;
  }
  object->holders[holds] = thread_id();
  atomic_store(&object->holds, holds + 1);
  return NULL;
}

hpvm_status_t hpvm_mem_tracker_track(hpvm_mem_tracker_t *tracker, void *ptr, size_t size) {
  if (!ptr || size == 0)
    return HPVM_STATUS(INVALID_ARGUMENT, "track needs a non-NULL pointer and a size > 0 (got %p, %zu)",
                       ptr, size);
  char *base = ptr;
  if ((uintptr_t)base > UINTPTR_MAX - size)
    return HPVM_STATUS(INVALID_ARGUMENT, "object %p + %zu bytes wraps around memory", ptr, size);
  tracked_object_t *object;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(tracker->allocator, sizeof(*object), (void **)&object));
  object->base = base;
  object->size = size;
  atomic_init(&object->references, 1);
  atomic_init(&object->holds, 0);
  pthread_mutex_init(&object->mutex, NULL);
  object->copies[HPVM_RT_DEVICE_CPU].valid = true;
  object->copies[HPVM_RT_DEVICE_CPU].handle = (uint64_t)(uintptr_t)base;

  hpvm_status_t status = NULL;
  bool shared = false;
  pthread_rwlock_wrlock(&tracker->lock);
  size_t index = upper_bound(tracker, base);
  if (index > 0) {
    tracked_object_t *before = tracker->objects[index - 1];
    if (before->base == base && before->size != size)
      status = HPVM_STATUS(ALREADY_EXISTS,
                           "%p is already tracked (%zu bytes), not as %zu bytes; threads that "
                           "share an object track it with the same size",
                           ptr, before->size, size);
    else if (before->base == base && holder_index(before, thread_id()) >= 0)
      status = HPVM_STATUS(ALREADY_EXISTS,
                           "%p is already tracked (%zu bytes) by this thread; a thread tracks "
                           "an object once (one array passed twice to one call, or launched "
                           "again before the first launch's wait?)",
                           ptr, before->size);
    else if (before->base == base) {
      /* Another thread holds the same range: share it. */
      status = add_holder(tracker, before);
      shared = true;
    } else if (before->base + before->size > base)
      status = HPVM_STATUS(INVALID_ARGUMENT, "[%p, +%zu) overlaps the tracked object [%p, +%zu)",
                           ptr, size, (void *)before->base, before->size);
  }
  if (!status && !shared && index < tracker->count && tracker->objects[index]->base < base + size)
    status = HPVM_STATUS(INVALID_ARGUMENT, "[%p, +%zu) overlaps the tracked object [%p, +%zu)",
                         ptr, size, (void *)tracker->objects[index]->base,
                         tracker->objects[index]->size);
  if (!status && !shared)
    status = add_holder(tracker, object);
  if (!status && !shared && tracker->count == tracker->capacity) {
    size_t grown = tracker->capacity ? tracker->capacity * 2 : 16;
    status = hpvm_allocator_grow_array(tracker->allocator, (void **)&tracker->objects,
                                       tracker->capacity, grown, sizeof(tracked_object_t *));
    if (!status)
      tracker->capacity = grown;
  }
  if (!status && !shared) {
    memmove(&tracker->objects[index + 1], &tracker->objects[index],
            (tracker->count - index) * sizeof(tracked_object_t *));
    tracker->objects[index] = object;
    tracker->count++;
  }
  pthread_rwlock_unlock(&tracker->lock);
  if (status || shared) {
    pthread_mutex_destroy(&object->mutex);
    hpvm_allocator_free(tracker->allocator, object->holders);
    hpvm_allocator_free(tracker->allocator, object);
  }
  return status;
}

/* Finds the object containing ptr and takes a reference to it. */
static tracked_object_t *lookup(hpvm_mem_tracker_t *tracker, const char *ptr) {
  tracked_object_t *found = NULL;
  pthread_rwlock_rdlock(&tracker->lock);
  size_t index = upper_bound(tracker, ptr);
  if (index > 0) {
    tracked_object_t *object = tracker->objects[index - 1];
    if (ptr < object->base + object->size) {
      atomic_fetch_add(&object->references, 1);
      found = object;
    }
  }
  pthread_rwlock_unlock(&tracker->lock);
  return found;
}

/* Makes the host copy valid (object lock held). */
static hpvm_status_t refresh_host(tracked_object_t *object) {
  tracked_copy_t *host = &object->copies[HPVM_RT_DEVICE_CPU];
  if (host->valid)
    return NULL;
  for (int kind = 0; kind < HPVM_RT_DEVICE_KIND_COUNT; ++kind) {
    tracked_copy_t *copy = &object->copies[kind];
    if (kind == HPVM_RT_DEVICE_CPU || !copy->valid)
      continue;
    HPVM_RETURN_IF_ERROR(hpvm_status_annotate(
        hpvm_device_copy_to_host(copy->device, object->base, copy->handle, 0, object->size),
        "copying %zu bytes from %s to the host", object->size, copy->device->name));
    host->valid = true;
    return NULL;
  }
  return HPVM_STATUS(INTERNAL, "tracked object %p has no valid copy", (void *)object->base);
}

/* Drops one hold of the object starting at ptr (the calling thread's, else another's); the
 * last one untracks it.  `keep_data`: the host gets the newest data (every holder's untrack
 * brings it home; device copies stay for the other holders); else a last discard drops it. */
static hpvm_status_t untrack_object(hpvm_mem_tracker_t *tracker, void *ptr, bool keep_data) {
  if (!ptr)
    return HPVM_STATUS(INVALID_ARGUMENT, "%s of NULL", keep_data ? "untrack" : "discard");
  pthread_rwlock_wrlock(&tracker->lock);
  size_t index = upper_bound(tracker, ptr);
  tracked_object_t *object = NULL;
  bool last = false;
  if (index > 0 && tracker->objects[index - 1]->base == (char *)ptr) {
    object = tracker->objects[index - 1];
    uint32_t holds = atomic_load(&object->holds);
    int64_t mine = holder_index(object, thread_id());
    uint32_t drop = mine >= 0 ? (uint32_t)mine : holds - 1;
    object->holders[drop] = object->holders[holds - 1];
    atomic_store(&object->holds, holds - 1);
    last = holds == 1;
    if (last) {
      memmove(&tracker->objects[index - 1], &tracker->objects[index],
              (tracker->count - index) * sizeof(tracked_object_t *));
      tracker->count--;
    } else {
      atomic_fetch_add(&object->references, 1); /* kept alive while its data come home */
    }
  }
  pthread_rwlock_unlock(&tracker->lock);
  if (!object)
    return HPVM_STATUS(NOT_FOUND, "%s: %p is not the start of a tracked object",
                       keep_data ? "untrack" : "discard", ptr);
  pthread_mutex_lock(&object->mutex);
  /* The host keeps the memory after untrack, so it must hold the newest data; after a
   * discard it is freed, so the data are dropped. */
  hpvm_status_t status = keep_data ? refresh_host(object) : NULL;
  hpvm_status_t free_status = NULL;
  if (last) {
    free_status = free_device_copies(object);
    object->untracked = true;
  }
  pthread_mutex_unlock(&object->mutex);
  if (!status)
    status = free_status;
  else
    hpvm_status_free(free_status);
  object_release(tracker, object);
  return status;
}

hpvm_status_t hpvm_mem_tracker_untrack(hpvm_mem_tracker_t *tracker, void *ptr) {
  return untrack_object(tracker, ptr, true);
}

hpvm_status_t hpvm_mem_tracker_discard(hpvm_mem_tracker_t *tracker, void *ptr) {
  return untrack_object(tracker, ptr, false);
}

hpvm_status_t hpvm_mem_tracker_request(hpvm_mem_tracker_t *tracker, void *ptr, size_t size,
                                       hpvm_device_t *device, hpvm_rt_access_t access,
                                       uint64_t *out_handle, size_t *out_offset) {
  if (!ptr)
    return HPVM_STATUS(INVALID_ARGUMENT, "request of NULL");
  if (access != HPVM_RT_ACCESS_IN && access != HPVM_RT_ACCESS_OUT &&
      access != HPVM_RT_ACCESS_INOUT)
    return HPVM_STATUS(INVALID_ARGUMENT, "bad access mode %d", (int)access);
  tracked_object_t *object = lookup(tracker, ptr);
  if (!object)
    return HPVM_STATUS(NOT_FOUND, "request: %p is not inside a tracked object", ptr);
  size_t offset = (size_t)((char *)ptr - object->base);
  hpvm_status_t status = NULL;
  if (size > object->size - offset)
    status = HPVM_STATUS(OUT_OF_RANGE, "request of %zu bytes at offset %zu leaves the %zu-byte object",
                         size, offset, object->size);
  int kind = device ? (int)device->kind : HPVM_RT_DEVICE_CPU;
  /* A shared object is read-only on devices: a device write would leave the other holders'
   * launches reading stale or half-written data.  (The host's own memory is the program's,
   * as in C: host requests of any access are served; request_host is how host code brings
   * the newest data home.) */
  uint32_t holds = atomic_load(&object->holds);
  if (!status && kind != HPVM_RT_DEVICE_CPU && access != HPVM_RT_ACCESS_IN && holds > 1)
    status = HPVM_STATUS(FAILED_PRECONDITION,
                         "%s of %p for writing while %u threads hold it; an object tracked by "
                         "several threads at once is read-only on devices",
                         device->name, ptr, holds);
  pthread_mutex_lock(&object->mutex);
  if (!status && object->untracked)
    status = HPVM_STATUS(NOT_FOUND, "request: %p was untracked concurrently", ptr);
  tracked_copy_t *target = &object->copies[kind];
  if (!status && kind != HPVM_RT_DEVICE_CPU && !target->device) {
    status = hpvm_status_annotate(hpvm_device_buffer_alloc(device, object->size,
                                                           HPVM_BUFFER_OWNER_TRACKER,
                                                           &target->handle),
                                  "allocating %zu bytes on %s", object->size, device->name);
    if (!status) {
      target->device = device;
      target->valid = false;
    }
  }
  if (!status && kind != HPVM_RT_DEVICE_CPU && target->device != device)
    status = HPVM_STATUS(FAILED_PRECONDITION, "object %p already has a copy on another %s device",
                         ptr, device->name);
  /* Copy only what the access reads and only when this copy is stale. */
  if (!status && access != HPVM_RT_ACCESS_OUT && !target->valid) {
    if (kind == HPVM_RT_DEVICE_CPU) {
      status = refresh_host(object);
    } else {
      status = refresh_host(object); /* device-to-device goes through the host */
      if (!status)
        status = hpvm_status_annotate(
            hpvm_device_copy_to_device(device, target->handle, 0, object->base, object->size),
            "copying %zu bytes from the host to %s", object->size, device->name);
    }
    if (!status)
      target->valid = true;
  }
  if (!status && access != HPVM_RT_ACCESS_IN) {
    for (int other = 0; other < HPVM_RT_DEVICE_KIND_COUNT; ++other)
      object->copies[other].valid = other == kind;
  }
  if (!status) {
    if (out_handle)
      *out_handle = target->handle;
    if (out_offset)
      *out_offset = offset;
  }
  pthread_mutex_unlock(&object->mutex);
  object_release(tracker, object);
  return status;
}

bool hpvm_mem_tracker_find(hpvm_mem_tracker_t *tracker, const void *ptr, void **out_base,
                           size_t *out_size) {
  bool found = false;
  pthread_rwlock_rdlock(&tracker->lock);
  size_t index = upper_bound(tracker, ptr);
  if (index > 0) {
    tracked_object_t *object = tracker->objects[index - 1];
    if ((const char *)ptr < object->base + object->size) {
      *out_base = object->base;
      *out_size = object->size;
      found = true;
    }
  }
  pthread_rwlock_unlock(&tracker->lock);
  return found;
}

size_t hpvm_mem_tracker_count(hpvm_mem_tracker_t *tracker) {
  pthread_rwlock_rdlock(&tracker->lock);
  size_t count = tracker->count;
  pthread_rwlock_unlock(&tracker->lock);
  return count;
}
