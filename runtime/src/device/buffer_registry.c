/* buffer_registry.c - open-addressing hash set of live device buffers (linear probing). */
#include "device/buffer_registry.h"

#include <string.h>

enum { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_DELETED = 2 };

/* A 64-bit mix (splitmix64's finaliser): handles are often aligned addresses whose low bits
 * are all zero, so they must be mixed before masking. */
static size_t slot_hash(uint64_t handle) {
  handle ^= handle >> 30;
  handle *= 0xbf58476d1ce4e5b9ull;
  handle ^= handle >> 27;
  handle *= 0x94d049bb133111ebull;
  handle ^= handle >> 31;
  return (size_t)handle;
}

void hpvm_buffer_registry_init(hpvm_buffer_registry_t *registry, hpvm_allocator_t allocator) {
  memset(registry, 0, sizeof(*registry));
  registry->allocator = allocator;
  pthread_mutex_init(&registry->mutex, NULL);
}

void hpvm_buffer_registry_destroy(hpvm_buffer_registry_t *registry) {
  hpvm_allocator_free(registry->allocator, registry->slots);
  registry->slots = NULL;
  registry->capacity = registry->live = registry->deleted = 0;
  pthread_mutex_destroy(&registry->mutex);
}

/* The live entry of `handle`, or NULL (mutex held). */
static hpvm_buffer_entry_t *find(hpvm_buffer_registry_t *registry, uint64_t handle) {
  if (!registry->capacity)
    return NULL;
  size_t mask = registry->capacity - 1;
  for (size_t i = slot_hash(handle) & mask, probes = 0; probes < registry->capacity;
       i = (i + 1) & mask, ++probes) {
    hpvm_buffer_entry_t *slot = &registry->slots[i];
    if (slot->state == SLOT_EMPTY)
      return NULL;
    if (slot->state == SLOT_LIVE && slot->handle == handle)
      return slot;
  }
  return NULL;
}

/* Inserts without checking for duplicates or load (mutex held, a free slot exists). */
static void insert(hpvm_buffer_entry_t *slots, size_t capacity, const hpvm_buffer_entry_t *entry) {
  size_t mask = capacity - 1;
  size_t i = slot_hash(entry->handle) & mask;
  while (slots[i].state == SLOT_LIVE)
    i = (i + 1) & mask;
  slots[i] = *entry;
  slots[i].state = SLOT_LIVE;
}

/* Keeps live + deleted below 3/4 of the capacity so probes stay short and always end; a table
 * full of tombstones is rehashed at the same size (mutex held). */
static hpvm_status_t make_room(hpvm_buffer_registry_t *registry) {
  if ((registry->live + registry->deleted + 1) * 4 <= registry->capacity * 3)
    return NULL;
  size_t capacity = registry->capacity ? registry->capacity : 16;
  while ((registry->live + 1) * 2 > capacity) /* at most half full after a rehash */
    capacity *= 2;
  hpvm_buffer_entry_t *slots;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(registry->allocator, capacity, sizeof(*slots),
                                                   (void **)&slots));
  for (size_t i = 0; i < registry->capacity; ++i)
    if (registry->slots[i].state == SLOT_LIVE)
      insert(slots, capacity, &registry->slots[i]);
  hpvm_allocator_free(registry->allocator, registry->slots);
  registry->slots = slots;
  registry->capacity = capacity;
  registry->deleted = 0;
  return NULL;
}

hpvm_status_t hpvm_buffer_registry_add(hpvm_buffer_registry_t *registry, uint64_t handle,
                                       size_t size, hpvm_buffer_owner_t owner) {
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&registry->mutex);
  if (find(registry, handle))
    status = HPVM_STATUS(INTERNAL, "the driver returned buffer handle 0x%llx, which is still live",
                         (unsigned long long)handle);
  if (!status)
    status = make_room(registry);
  if (!status) {
    hpvm_buffer_entry_t entry = {handle, size, 0, SLOT_LIVE, (uint8_t)owner};
    insert(registry->slots, registry->capacity, &entry);
    registry->live++;
  }
  pthread_mutex_unlock(&registry->mutex);
  return status;
}

static const char *owner_name(uint8_t owner) {
  switch (owner) {
  case HPVM_BUFFER_OWNER_TRACKER: return "the memory tracker";
  case HPVM_BUFFER_OWNER_KERNEL_RUN: return "hpvm_rt_kernel_run";
  default: return "hpvm_rt_device_alloc";
  }
}

hpvm_status_t hpvm_buffer_registry_remove(hpvm_buffer_registry_t *registry, uint64_t handle,
                                          hpvm_buffer_owner_t owner, const char *device_name) {
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&registry->mutex);
  hpvm_buffer_entry_t *entry = find(registry, handle);
  if (!entry)
    status = HPVM_STATUS(NOT_FOUND,
                         "free: handle 0x%llx is not a live buffer of device '%s' (never "
                         "allocated there, or already freed)",
                         (unsigned long long)handle, device_name);
  else if (entry->owner != (uint8_t)owner)
    status = HPVM_STATUS(FAILED_PRECONDITION,
                         "free: buffer 0x%llx of device '%s' was allocated by %s, not %s%s",
                         (unsigned long long)handle, device_name, owner_name(entry->owner),
                         owner_name((uint8_t)owner),
                         entry->owner == HPVM_BUFFER_OWNER_TRACKER
                             ? ": untrack the object to free its device copy"
                             : "");
  else if (entry->users)
    status = HPVM_STATUS(FAILED_PRECONDITION,
                         "free: buffer 0x%llx of device '%s' is in use by %u copies; expected "
                         "none in flight",
                         (unsigned long long)handle, device_name, entry->users);
  if (!status) {
    entry->state = SLOT_DELETED;
    registry->live--;
    registry->deleted++;
  }
  pthread_mutex_unlock(&registry->mutex);
  return status;
}

hpvm_status_t hpvm_buffer_registry_begin_use(hpvm_buffer_registry_t *registry, uint64_t handle,
                                             size_t offset, size_t size, const char *what,
                                             const char *device_name) {
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&registry->mutex);
  hpvm_buffer_entry_t *entry = find(registry, handle);
  if (!entry)
    status = HPVM_STATUS(NOT_FOUND,
                         "%s: handle 0x%llx is not a live buffer of device '%s' (never "
                         "allocated there, or already freed)",
                         what, (unsigned long long)handle, device_name);
  /* Written so that nothing can wrap: offset <= size of the buffer first, then the rest. */
  else if (offset > entry->size || size > entry->size - offset)
    status = HPVM_STATUS(OUT_OF_RANGE,
                         "%s: %zu bytes at offset %zu leave buffer 0x%llx of device '%s'; "
                         "expected offset + size <= %zu",
                         what, size, offset, (unsigned long long)handle, device_name,
                         entry->size);
  else
    entry->users++;
  pthread_mutex_unlock(&registry->mutex);
  return status;
}

void hpvm_buffer_registry_end_use(hpvm_buffer_registry_t *registry, uint64_t handle) {
  pthread_mutex_lock(&registry->mutex);
  hpvm_buffer_entry_t *entry = find(registry, handle);
  if (entry && entry->users) /* cannot be gone: remove refuses while users > 0 */
    entry->users--;
  pthread_mutex_unlock(&registry->mutex);
}

bool hpvm_buffer_registry_take_any(hpvm_buffer_registry_t *registry, uint64_t *out_handle) {
  bool found = false;
  pthread_mutex_lock(&registry->mutex);
  for (size_t i = 0; i < registry->capacity && !found; ++i) {
    hpvm_buffer_entry_t *slot = &registry->slots[i];
    if (slot->state == SLOT_LIVE) {
      *out_handle = slot->handle;
      slot->state = SLOT_DELETED;
      registry->live--;
      registry->deleted++;
      found = true;
    }
  }
  pthread_mutex_unlock(&registry->mutex);
  return found;
}

size_t hpvm_buffer_registry_count(hpvm_buffer_registry_t *registry) {
  pthread_mutex_lock(&registry->mutex);
  size_t live = registry->live;
  pthread_mutex_unlock(&registry->mutex);
  return live;
}
