/* buffer_cache.c - the allocator behind compiled code's memref.alloc / memref.dealloc.
 *
 * The compiler lowers memref allocations to _mlir_memref_to_llvm_alloc / _aligned_alloc /
 * _free (MLIR's "generic" allocation functions), defined here. A tensor graph allocates the
 * same large buffers on every run (each node's output, padded images, ...); from malloc,
 * each such block is a fresh mmap whose pages fault in again, which cost LeNet inferences
 * half their time. Here blocks of at least 64 KiB are rounded up to a size class (powers of
 * two and the midpoints between them) and, when freed, kept on the class's free list for the
 * next allocation of that class, up to HPVM_BUFFER_CACHE_LIMIT bytes in all; beyond it they go
 * back to the system. Smaller blocks go straight to malloc. Every block carries a header in
 * front of the pointer handed out (its class, its base pointer, a check word), so _free needs
 * no size and rejects pointers it did not hand out (with a warning, nothing freed). The
 * runtime's kernels take their scratch memory from here too (hpvm_scratch_alloc). */
#include "mem/buffer_cache.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum {
  SMALL_LIMIT = 64 * 1024, /* smaller blocks are not cached */
  CLASSES = 80,            /* two per power of two from 64 KiB: beyond 2^55 bytes */
  HEADER_ALIGN = 64,
};
#define HPVM_BUFFER_CACHE_LIMIT ((size_t)512 << 20)
#define MAGIC UINT64_C(0x48505643616368a5)        /* handed out */
#define MAGIC_CACHED UINT64_C(0x4850564361636863) /* on a free list */

typedef struct header_t {
  void *base;      /* what posix_memalign / malloc returned */
  uint64_t magic;  /* MAGIC ^ (uintptr_t)base: a check word */
  int64_t klass;   /* size class, or -1: not cached */
  struct header_t *next; /* free-list link while cached */
} header_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static header_t *free_lists[CLASSES];
static size_t held_bytes;

/* The bytes of a class: they alternate 2^n and 1.5 * 2^n from 64 KiB. */
static size_t bytes_of_class(int64_t klass) {
  size_t bytes = (size_t)SMALL_LIMIT << (klass / 2);
  return klass % 2 == 0 ? bytes : bytes + bytes / 2;
}

/* The smallest class holding `size` bytes (>= SMALL_LIMIT), and its bytes; -1 when none. */
static int64_t class_of(size_t size, size_t *class_bytes) {
  for (int64_t k = 0; k < CLASSES; ++k)
    if (size <= bytes_of_class(k)) {
      *class_bytes = bytes_of_class(k);
      return k;
    }
  return -1;
}

static void *hand_out(void *base, size_t offset, int64_t klass) {
  char *pointer = (char *)base + offset;
  header_t *header = (header_t *)(pointer - sizeof(header_t));
  header->base = base;
  header->magic = MAGIC ^ (uint64_t)(uintptr_t)base;
  header->klass = klass;
  header->next = NULL;
  return pointer;
}

static void *allocate(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return NULL; /* not a power of two */
  if (alignment < HEADER_ALIGN)
    alignment = HEADER_ALIGN;
  /* The header fits in the `alignment` bytes in front of the pointer. */
  size_t offset = alignment;
  if (size > SIZE_MAX - offset)
    return NULL;
  size_t class_bytes = 0;
  int64_t klass = size + offset >= SMALL_LIMIT && alignment == HEADER_ALIGN
                      ? class_of(size + offset, &class_bytes)
                      : -1;
  if (klass >= 0) {
    pthread_mutex_lock(&lock);
    header_t *cached = free_lists[klass];
    if (cached) {
      free_lists[klass] = cached->next;
      held_bytes -= class_bytes;
    }
    pthread_mutex_unlock(&lock);
    if (cached)
      return hand_out(cached->base, offset, klass);
  }
  void *base = NULL;
  if (posix_memalign(&base, alignment, klass >= 0 ? class_bytes : size + offset) != 0)
    return NULL;
  return hand_out(base, offset, klass);
}

void *_mlir_memref_to_llvm_alloc(size_t size) { return allocate(HEADER_ALIGN, size); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return allocate(alignment, size);
}

void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  header_t *header = (header_t *)((char *)pointer - sizeof(header_t));
  if (header->magic != (MAGIC ^ (uint64_t)(uintptr_t)header->base)) {
    hpvm_warning("_mlir_memref_to_llvm_free: %p was not allocated by "
                 "_mlir_memref_to_llvm_alloc, or is already freed; not freed", pointer);
    return;
  }
  void *base = header->base;
  int64_t klass = header->klass;
  if (klass >= 0 && klass < CLASSES) {
    size_t bytes = bytes_of_class(klass);
    pthread_mutex_lock(&lock);
    if (held_bytes + bytes <= HPVM_BUFFER_CACHE_LIMIT) {
      /* Cached: the header lives at the start of the block's first `offset` bytes; keep the
       * base there for reuse. */
      header->magic = MAGIC_CACHED ^ (uint64_t)(uintptr_t)base;
      header->next = free_lists[klass];
      free_lists[klass] = header;
      held_bytes += bytes;
      pthread_mutex_unlock(&lock);
      return;
    }
    pthread_mutex_unlock(&lock);
  }
  header->magic = 0; /* a second free of the same pointer is caught above */
  free(base);
}

void *hpvm_scratch_alloc(size_t bytes) { return allocate(HEADER_ALIGN, bytes ? bytes : 1); }

void hpvm_scratch_free(void *pointer) { _mlir_memref_to_llvm_free(pointer); }

void hpvm_buffer_cache_release(void) {
  pthread_mutex_lock(&lock);
  header_t *lists[CLASSES];
  for (int k = 0; k < CLASSES; ++k) {
    lists[k] = free_lists[k];
    free_lists[k] = NULL;
  }
  held_bytes = 0;
  pthread_mutex_unlock(&lock);
  for (int k = 0; k < CLASSES; ++k)
    while (lists[k]) {
      header_t *next = lists[k]->next;
      lists[k]->magic = 0;
      free(lists[k]->base);
      lists[k] = next;
    }
}

size_t hpvm_buffer_cache_held_bytes(void) {
  pthread_mutex_lock(&lock);
  size_t held = held_bytes;
  pthread_mutex_unlock(&lock);
  return held;
}
