/* allocator.h - injectable host allocator and overflow-checked size arithmetic. */
#ifndef HPVM_BASE_ALLOCATOR_H
#define HPVM_BASE_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Every runtime object is allocated through one of these so that tests can count and fail
 * allocations and embedders can route memory to their own heap.  `alloc` returns memory
 * aligned for any object (max_align_t) or NULL; `free` accepts NULL. */
typedef struct hpvm_allocator_t {
  void *self;
  void *(*alloc)(void *self, size_t size);
  void (*free)(void *self, void *ptr);
} hpvm_allocator_t;

/* malloc/free. */
hpvm_allocator_t hpvm_allocator_system(void);

/* Allocates `size` bytes (size 0 allocates 1 byte so the pointer is unique).
 * RESOURCE_EXHAUSTED on failure; *out is NULL then. */
hpvm_status_t hpvm_allocator_malloc(hpvm_allocator_t allocator, size_t size, void **out);
/* Like hpvm_allocator_malloc but zero-fills. */
hpvm_status_t hpvm_allocator_calloc(hpvm_allocator_t allocator, size_t size, void **out);
/* Allocates count * element_size bytes, zero-filled; RESOURCE_EXHAUSTED on overflow. */
hpvm_status_t hpvm_allocator_calloc_array(hpvm_allocator_t allocator, size_t count,
                                          size_t element_size, void **out);
/* Grows a zero-initialised array from old_count to new_count elements (copying).  On
 * failure *array is untouched. */
hpvm_status_t hpvm_allocator_grow_array(hpvm_allocator_t allocator, void **array,
                                        size_t old_count, size_t new_count, size_t element_size);
void hpvm_allocator_free(hpvm_allocator_t allocator, void *ptr);
/* count * element_size bytes, zero-filled, at an address that is a multiple of `alignment` (a
 * power of two): for objects declared with _Alignas beyond max_align_t (cache-line padded
 * atomics), which `alloc` does not promise. RESOURCE_EXHAUSTED on overflow. Freed with
 * hpvm_allocator_free_aligned only. */
hpvm_status_t hpvm_allocator_calloc_aligned(hpvm_allocator_t allocator, size_t count,
                                            size_t element_size, size_t alignment, void **out);
void hpvm_allocator_free_aligned(hpvm_allocator_t allocator, void *ptr);
/* strdup through the allocator; NULL stays NULL. */
hpvm_status_t hpvm_allocator_strdup(hpvm_allocator_t allocator, const char *text, char **out);

/* Overflow-checked arithmetic: false when the result does not fit. */
static inline bool hpvm_size_mul(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool hpvm_size_add(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

#endif /* HPVM_BASE_ALLOCATOR_H */
