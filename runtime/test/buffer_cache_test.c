/* buffer_cache_test.c - the allocator behind compiled code's memref.alloc: blocks of 64 KiB
 * and more are reused after a free (same class), alignment holds, small blocks are not cached,
 * a foreign or doubly freed pointer frees nothing (with a warning), threads share it safely,
 * and hpvm_rt_shutdown releases the cache. */
#include "test_util.h"

#include "mem/buffer_cache.h"

#include <pthread.h>

static void *churn(void *arg) {
  (void)arg;
  for (int i = 0; i < 2000; ++i) {
    size_t size = (size_t)(64 * 1024 + (i % 7) * 40000);
    unsigned char *p = _mlir_memref_to_llvm_alloc(size);
    CHECK(p != NULL);
    p[0] = (unsigned char)i;
    p[size - 1] = (unsigned char)i;
    _mlir_memref_to_llvm_free(p);
  }
  return NULL;
}

static void free_foreign(void *arg) {
  (void)arg;
  /* A block of our own whose header says it was never handed out: a foreign pointer. */
  char *block = calloc(1, 4096);
  _mlir_memref_to_llvm_free(block + 1024);
  free(block);
  exit(0);
}

static void free_twice(void *arg) {
  (void)arg;
  void *p = _mlir_memref_to_llvm_alloc(1 << 20);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(p);
  exit(0);
}

int main(void) {
  /* Reuse: a freed 1 MiB block comes back for the next allocation of its class. */
  void *a = _mlir_memref_to_llvm_alloc((1 << 20) - 1000);
  CHECK(a != NULL);
  CHECK(((uintptr_t)a & 63) == 0);
  memset(a, 1, (1 << 20) - 1000);
  _mlir_memref_to_llvm_free(a);
  CHECK(hpvm_buffer_cache_held_bytes() == (1u << 20));
  void *b = _mlir_memref_to_llvm_alloc((1 << 20) - 5000); /* the same class */
  CHECK(b == a);
  CHECK(hpvm_buffer_cache_held_bytes() == 0);
  _mlir_memref_to_llvm_free(b);
  /* Small blocks are not cached. */
  void *small = _mlir_memref_to_llvm_alloc(100);
  CHECK(small != NULL && ((uintptr_t)small & 63) == 0);
  size_t held = hpvm_buffer_cache_held_bytes();
  _mlir_memref_to_llvm_free(small);
  CHECK(hpvm_buffer_cache_held_bytes() == held);
  /* Larger alignments are honoured (not cached); non-powers of two are refused. */
  void *aligned = _mlir_memref_to_llvm_aligned_alloc(4096, 200000);
  CHECK(aligned != NULL && ((uintptr_t)aligned & 4095) == 0);
  _mlir_memref_to_llvm_free(aligned);
  CHECK(_mlir_memref_to_llvm_aligned_alloc(48, 1000) == NULL);
  CHECK(_mlir_memref_to_llvm_alloc(SIZE_MAX - 8) == NULL);
  _mlir_memref_to_llvm_free(NULL);
  /* Threads. */
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i)
    CHECK(pthread_create(&threads[i], NULL, churn, NULL) == 0);
  for (int i = 0; i < 4; ++i)
    pthread_join(threads[i], NULL);
  /* Misuse: warnings, nothing freed, no crash. */
  char text[512];
  CHECK_EQ_INT(test_run_child(free_foreign, NULL, text, sizeof(text)), 0);
  CHECK(strstr(text, "was not allocated by _mlir_memref_to_llvm_alloc") != NULL);
  CHECK_EQ_INT(test_run_child(free_twice, NULL, text, sizeof(text)), 0);
  CHECK(strstr(text, "or is already freed; not freed") != NULL);
  /* Shutdown gives everything back. */
  CHECK(hpvm_buffer_cache_held_bytes() > 0);
  hpvm_rt_shutdown();
  CHECK(hpvm_buffer_cache_held_bytes() == 0);
  printf("buffer cache: all checks passed\n");
  return 0;
}
