/* allocator.c - the default allocator and checked allocation helpers. */
#include "base/allocator.h"

#include <stdlib.h>
#include <string.h>

static void *system_alloc(void *self, size_t size) {
  (void)self;
  return malloc(size);
}

static void system_free(void *self, void *ptr) {
  (void)self;
  free(ptr);
}

hpvm_allocator_t hpvm_allocator_system(void) {
  hpvm_allocator_t allocator = {NULL, system_alloc, system_free};
  return allocator;
}

hpvm_status_t hpvm_allocator_malloc(hpvm_allocator_t allocator, size_t size, void **out) {
  *out = allocator.alloc(allocator.self, size ? size : 1);
  if (!*out)
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "out of host memory allocating %zu bytes", size);
  return NULL;
}

hpvm_status_t hpvm_allocator_calloc(hpvm_allocator_t allocator, size_t size, void **out) {
  HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(allocator, size, out));
  memset(*out, 0, size);
  return NULL;
}

hpvm_status_t hpvm_allocator_calloc_array(hpvm_allocator_t allocator, size_t count,
                                          size_t element_size, void **out) {
  size_t bytes;
  if (!hpvm_size_mul(count, element_size, &bytes)) {
    *out = NULL;
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "array of %zu x %zu bytes overflows size_t", count,
                       element_size);
  }
  return hpvm_allocator_calloc(allocator, bytes, out);
}

hpvm_status_t hpvm_allocator_grow_array(hpvm_allocator_t allocator, void **array,
                                        size_t old_count, size_t new_count, size_t element_size) {
  void *grown;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc_array(allocator, new_count, element_size, &grown));
  if (*array && old_count)
    memcpy(grown, *array, old_count * element_size); /* old_count <= new_count: no overflow */
  hpvm_allocator_free(allocator, *array);
  *array = grown;
  return NULL;
}

void hpvm_allocator_free(hpvm_allocator_t allocator, void *ptr) {
  if (ptr)
    allocator.free(allocator.self, ptr);
}

/* The block from `alloc` is stored in the pointer-sized word just below the aligned address. */
hpvm_status_t hpvm_allocator_calloc_aligned(hpvm_allocator_t allocator, size_t count,
                                            size_t element_size, size_t alignment, void **out) {
  *out = NULL;
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
    return HPVM_STATUS(INVALID_ARGUMENT, "alignment %zu is not a power of two of at least %zu",
                       alignment, sizeof(void *));
  size_t bytes, total;
  if (!hpvm_size_mul(count, element_size, &bytes) ||
      !hpvm_size_add(bytes, alignment + sizeof(void *), &total))
    return HPVM_STATUS(RESOURCE_EXHAUSTED, "aligned array of %zu x %zu bytes overflows size_t",
                       count, element_size);
  void *block;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(allocator, total, &block));
  uintptr_t start = (uintptr_t)block + sizeof(void *);
  char *aligned = (char *)block + ((start + alignment - 1) / alignment * alignment - (uintptr_t)block);
  memcpy(aligned - sizeof(void *), &block, sizeof(void *));
  memset(aligned, 0, bytes);
  *out = aligned;
  return NULL;
}

void hpvm_allocator_free_aligned(hpvm_allocator_t allocator, void *ptr) {
  if (!ptr)
    return;
  void *block;
  memcpy(&block, (char *)ptr - sizeof(void *), sizeof(void *));
  hpvm_allocator_free(allocator, block);
}

hpvm_status_t hpvm_allocator_strdup(hpvm_allocator_t allocator, const char *text, char **out) {
  *out = NULL;
  if (!text)
    return NULL;
  size_t length = strlen(text) + 1;
  void *copy;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_malloc(allocator, length, &copy));
  memcpy(copy, text, length);
  *out = copy;
  return NULL;
}
