/* kernel_run_test.h - helpers of the hpvm_rt_kernel_run tests: parameters, runs, stderr capture. */
#ifndef HPVM_KERNEL_RUN_TEST_H
#define HPVM_KERNEL_RUN_TEST_H

#include <fcntl.h>
#include <pthread.h>

#include "base/trace.h"
#include "test_util.h"

static inline hpvm_rt_kernel_param_t value_param(const void *value, uint64_t size) {
  hpvm_rt_kernel_param_t param = {HPVM_RT_PARAM_VALUE, 0, size, value, NULL};
  return param;
}
#define VALUE(variable) value_param(&(variable), sizeof(variable))

static inline hpvm_rt_kernel_param_t buffer_param(void *host, uint64_t size,
                                                  hpvm_rt_access_t access) {
  hpvm_rt_kernel_param_t param = {HPVM_RT_PARAM_BUFFER, (uint32_t)access, size, NULL, host};
  return param;
}
static inline hpvm_rt_kernel_param_t workgroup_param(uint64_t size) {
  hpvm_rt_kernel_param_t param = {HPVM_RT_PARAM_WORKGROUP, 0, size, NULL, NULL};
  return param;
}
#define WORKGROUP(bytes) workgroup_param(bytes)
#define IN(host, size) buffer_param((host), (size), HPVM_RT_ACCESS_IN)
#define OUT(host, size) buffer_param((host), (size), HPVM_RT_ACCESS_OUT)
#define INOUT(host, size) buffer_param((host), (size), HPVM_RT_ACCESS_INOUT)

/* Runs `site` over the grid with the runtime's block sizes; returns out_ran (the call must
 * succeed). */
static inline int32_t run_site(hpvm_rt_kernel_site_t *site, int64_t x, int64_t y, int64_t z,
                               const hpvm_rt_kernel_param_t *params, uint32_t count) {
  const int64_t grid[3] = {x, y, z}, block[3] = {0, 0, 0};
  int32_t ran = -1;
  CHECK_OK(hpvm_rt_kernel_run(site, grid, block, params, count, &ran));
  CHECK(ran == 0 || ran == 1);
  return ran;
}

/* Restarts the global runtime so that it reads HPVM_DEVICE (value NULL = unset) again. */
static inline void restart_with_device(const char *value) {
  hpvm_rt_shutdown();
  if (value)
    setenv("HPVM_DEVICE", value, 1);
  else
    unsetenv("HPVM_DEVICE");
}

/* stderr captured in-process (no fork: driver threads would not survive it): everything
 * written between capture_begin and capture_end lands in `text`. */
typedef struct capture_t {
  int saved;
  FILE *file;
} capture_t;

static inline void capture_begin(capture_t *capture, bool trace) {
  if (trace)
    setenv("HPVM_TRACE", "1", 1);
  else
    unsetenv("HPVM_TRACE");
  hpvm_trace_reset(); /* HPVM_TRACE is read once: make the next use read it again */
  fflush(stderr);
  capture->file = tmpfile();
  CHECK(capture->file != NULL);
  capture->saved = dup(2);
  CHECK(capture->saved >= 0);
  CHECK(dup2(fileno(capture->file), 2) == 2);
}

static inline void capture_end(capture_t *capture, char *text, size_t size) {
  fflush(stderr);
  CHECK(dup2(capture->saved, 2) == 2);
  close(capture->saved);
  rewind(capture->file);
  size_t length = fread(text, 1, size - 1, capture->file);
  text[length] = '\0';
  fclose(capture->file);
  unsetenv("HPVM_TRACE");
  hpvm_trace_reset();
}

static inline int count_occurrences(const char *text, const char *needle) {
  int count = 0;
  for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle))
    ++count;
  return count;
}

/* Fails with the captured text when `needle` is not in it. */
#define CHECK_CONTAINS(text, needle)                                                             \
  do {                                                                                           \
    if (!strstr((text), (needle))) {                                                             \
      fprintf(stderr, "%s:%d: expected \"%s\" in:\n%s\n", __FILE__, __LINE__, (needle), (text)); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

#endif /* HPVM_KERNEL_RUN_TEST_H */
