/* buffer_cache.h - the allocator behind compiled code's memref.alloc / memref.dealloc. */
#ifndef HPVM_RT_MEM_BUFFER_CACHE_H
#define HPVM_RT_MEM_BUFFER_CACHE_H

#include <stddef.h>

/* Scratch memory of the runtime's own kernels (packed panels and weights, padded images,
 * each task's slab): `bytes` bytes, 64-byte aligned, or NULL without memory; released with
 * hpvm_scratch_free and nothing else. Blocks of 64 KiB and more come from the cache's size
 * classes and go back to them, as compiled code's buffers do, instead of growing and trimming
 * the malloc heap on every call. */
void *hpvm_scratch_alloc(size_t bytes);
void hpvm_scratch_free(void *pointer);

/* Returns every cached block to the system (hpvm_rt_shutdown calls it). */
void hpvm_buffer_cache_release(void);

/* Bytes held in the cache now (for tests). */
size_t hpvm_buffer_cache_held_bytes(void);

#endif /* HPVM_RT_MEM_BUFFER_CACHE_H */
