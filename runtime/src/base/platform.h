/* platform.h - small OS helpers: CPU count, spin hints, a clock, environment parsing. */
#ifndef HPVM_BASE_PLATFORM_H
#define HPVM_BASE_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "hpvm/hpvm_rt.h"

/* Number of CPUs this process may run on (sched_getaffinity, else sysconf), at least 1. */
uint32_t hpvm_platform_cpu_count(void);

/* Reads environment variable `name` as a decimal integer from `min` to `max`. Unset or empty:
 * NULL, *present = false, *out untouched. A number in range: NULL, *present = true, the value
 * in *out. Anything else (a sign, a space, "1e3", "0x10", digits past `max`) is an
 * INVALID_ARGUMENT status naming the variable, the range expected and what was found: a typo
 * must never silently change the configuration. The one parser of the runtime's numeric
 * environment variables. */
hpvm_status_t hpvm_platform_env_integer(const char *name, uint64_t min, uint64_t max,
                                        uint64_t *out, bool *present);

/* A hint to the CPU that we are spinning (pause on x86, yield on Arm). */
static inline void hpvm_platform_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Monotonic time in nanoseconds (a vDSO call on Linux, ~20 ns). */
static inline uint64_t hpvm_platform_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* HPVM_BASE_PLATFORM_H */
