/* buffer_cache.h - the allocator behind compiled code's memref.alloc / memref.dealloc. */
#ifndef HPVM_RT_MEM_BUFFER_CACHE_H
#define HPVM_RT_MEM_BUFFER_CACHE_H

#include <stddef.h>

/* Returns every cached block to the system (hpvm_rt_shutdown calls it). */
void hpvm_buffer_cache_release(void);

/* Bytes held in the cache now (for tests). */
size_t hpvm_buffer_cache_held_bytes(void);

#endif /* HPVM_RT_MEM_BUFFER_CACHE_H */
