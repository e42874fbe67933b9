/* test_util.h - tiny assertion helpers, a counting/failing allocator and a host "device" for tests. */
#ifndef HPVM_TEST_UTIL_H
#define HPVM_TEST_UTIL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/allocator.h"
#include "device/device.h"
#include "hpvm/hpvm_rt.h"

/* Reproducible pseudo-random test inputs in [-1, 1] (a linear congruential generator;
 * `test_seed` may be set first to draw another sequence). */
static uint32_t test_seed = 12345;

static inline float test_random_value(void) {
  test_seed = test_seed * 1664525u + 1013904223u;
  return (float)((test_seed >> 8) % 2001) / 1000.0f - 1.0f;
}

/* `count` such values in a malloc'd array (never NULL: a test without memory aborts). */
static inline float *test_random_array(int64_t count) {
  float *data = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  if (!data) {
    fprintf(stderr, "test_random_array: out of memory\n");
    abort();
  }
  for (int64_t i = 0; i < count; ++i)
    data[i] = test_random_value();
  return data;
}

/* Runs `body(arg)` in a child process whose stderr is captured into `text` (at most size - 1
 * bytes, NUL-terminated); returns the child's exit code, or -1 when it did not exit normally.
 * For calls that must print an error and exit, never return. */
static inline int test_run_child(void (*body)(void *), void *arg, char *text, size_t size) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    dup2(pipe_fds[1], 2);
    body(arg);
    _exit(42); /* the body was expected not to return */
  }
  close(pipe_fds[1]);
  ssize_t length = read(pipe_fds[0], text, size - 1);
  text[length > 0 ? length : 0] = '\0';
  close(pipe_fds[0]);
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

/* Exit code CTest treats as "skipped" (SKIP_RETURN_CODE). */
#define TEST_SKIP_CODE 77

#define CHECK(condition)                                                                         \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition);              \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

#define CHECK_EQ_INT(actual, expected)                                                           \
  do {                                                                                           \
    long long check_actual_ = (long long)(actual), check_expected_ = (long long)(expected);      \
    if (check_actual_ != check_expected_) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %lld, expected %lld\n", __FILE__, __LINE__,    \
              #actual, check_actual_, check_expected_);                                          \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* Fails the test if `expr` returned an error status. */
#define CHECK_OK(expr)                                                                           \
  do {                                                                                           \
    hpvm_status_t check_status_ = (expr);                                                        \
    if (check_status_) {                                                                         \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,                   \
              hpvm_status_code_name(hpvm_status_code(check_status_)),                            \
              hpvm_status_message(check_status_));                                               \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* Checks that `expr` failed with `code` and frees the status. */
#define CHECK_CODE(expr, code)                                                                   \
  do {                                                                                           \
    hpvm_status_t check_status_ = (expr);                                                        \
    if (hpvm_status_code(check_status_) != (code)) {                                             \
      fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__, __LINE__, #expr,    \
              hpvm_status_code_name(hpvm_status_code(check_status_)),                            \
              hpvm_status_message(check_status_), hpvm_status_code_name(code));                  \
      exit(1);                                                                                   \
    }                                                                                            \
    hpvm_status_free(check_status_);                                                             \
  } while (0)

/* The whole file at `path` (malloc'ed, non-empty) and its size; exits when unreadable. */
static inline void *test_read_file(const char *path, size_t *out_size) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  CHECK(size > 0);
  void *data = malloc((size_t)size);
  CHECK(fread(data, 1, (size_t)size, file) == (size_t)size);
  fclose(file);
  *out_size = (size_t)size;
  return data;
}

/* Stress sizes shrink under sanitizers (HPVM_STRESS_SCALE=n divides the counts by n). */
static inline uint64_t test_scaled(uint64_t count) {
  const char *text = getenv("HPVM_STRESS_SCALE");
  uint64_t scale = text ? strtoull(text, NULL, 10) : 1;
  if (scale < 1)
    scale = 1;
  uint64_t scaled = count / scale;
  return scaled ? scaled : 1;
}

/* xorshift64*: deterministic pseudo-random numbers (tests must not depend on time). */
static inline uint64_t test_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/*===--- a counting allocator that can fail the N-th allocation ---------===*/

typedef struct test_allocator_t {
  _Atomic int64_t live;        /* allocations not yet freed */
  _Atomic int64_t calls;       /* allocations attempted */
  _Atomic int64_t fail_at;     /* the 1-based call that fails; 0 = never */
} test_allocator_t;

static void *test_allocator_alloc(void *self, size_t size) {
  test_allocator_t *state = self;
  int64_t call = atomic_fetch_add(&state->calls, 1) + 1;
  int64_t fail_at = atomic_load(&state->fail_at);
  if (fail_at && call == fail_at)
    return NULL;
  void *memory = malloc(size);
  if (memory)
    atomic_fetch_add(&state->live, 1);
  return memory;
}

static void test_allocator_free(void *self, void *ptr) {
  test_allocator_t *state = self;
  if (!ptr)
    return;
  atomic_fetch_sub(&state->live, 1);
  free(ptr);
}

static inline hpvm_allocator_t test_allocator_make(test_allocator_t *state) {
  hpvm_allocator_t allocator = {state, test_allocator_alloc, test_allocator_free};
  return allocator;
}

#endif /* HPVM_TEST_UTIL_H */
