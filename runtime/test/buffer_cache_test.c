/* buffer_cache_test.c - the allocator behind compiled code's memref.alloc: blocks of 64 KiB
 * and more are reused after a free (same class), alignment holds, small blocks are not cached,
 * a foreign or doubly freed pointer frees nothing (with a warning), threads share it safely,
 * and hpvm_rt_shutdown releases the cache; hpvm_rt_buffer_last_use names exactly one last
 * receiver per buffer. */
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

/* Receivers of fanned-out buffers: three threads report on the same 64 buffers (each in its
 * own order), round after round; exactly one report per buffer and round is the last. */
enum { LAST_USE_BUFFERS = 64, LAST_USE_ROUNDS = 300, LAST_USE_THREADS = 3 };
static char last_use_buffers[LAST_USE_BUFFERS];
static int last_use_wins[LAST_USE_ROUNDS][LAST_USE_BUFFERS];
static pthread_barrier_t last_use_round;

static void *report(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int r = 0; r < LAST_USE_ROUNDS; ++r) {
    for (int i = 0; i < LAST_USE_BUFFERS; ++i) {
      int b = (i * (2 * t + 1) + t * 7) % LAST_USE_BUFFERS; /* a permutation per thread */
      if (hpvm_rt_buffer_last_use(&last_use_buffers[b], LAST_USE_THREADS))
        __atomic_fetch_add(&last_use_wins[r][b], 1, __ATOMIC_RELAXED);
    }
    pthread_barrier_wait(&last_use_round); /* a round's buffers complete before the next */
  }
  return NULL;
}

static void check_last_use(void) {
  char one = 0, two = 0;
  CHECK(hpvm_rt_buffer_last_use(&one, 1) == 1); /* one receiver: always the last */
  CHECK(hpvm_rt_buffer_last_use(&one, 0) == 1);
  CHECK(hpvm_rt_buffer_last_use(&one, 3) == 0);
  CHECK(hpvm_rt_buffer_last_use(&two, 2) == 0); /* counted apart from `one` */
  CHECK(hpvm_rt_buffer_last_use(&one, 3) == 0);
  CHECK(hpvm_rt_buffer_last_use(&two, 2) == 1);
  CHECK(hpvm_rt_buffer_last_use(&one, 3) == 1);
  CHECK(hpvm_rt_buffer_last_use(&one, 2) == 0); /* counted afresh once complete */
  CHECK(hpvm_rt_buffer_last_use(&one, 2) == 1);
  pthread_barrier_init(&last_use_round, NULL, LAST_USE_THREADS);
  pthread_t threads[LAST_USE_THREADS];
  for (int t = 0; t < LAST_USE_THREADS; ++t)
    CHECK(pthread_create(&threads[t], NULL, report, (void *)(intptr_t)t) == 0);
  for (int t = 0; t < LAST_USE_THREADS; ++t)
    pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&last_use_round);
  for (int r = 0; r < LAST_USE_ROUNDS; ++r)
    for (int b = 0; b < LAST_USE_BUFFERS; ++b)
      CHECK_EQ_INT(last_use_wins[r][b], 1);
}

int main(void) {
  check_last_use();
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
