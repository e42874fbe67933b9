/* platform.h - small OS helpers: CPU count, spin hints, a clock, environment parsing. */
#ifndef HPVM_BASE_PLATFORM_H
#define HPVM_BASE_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Number of CPUs this process may run on (sched_getaffinity, else sysconf), at least 1. */
uint32_t hpvm_platform_cpu_count(void);

/* Reads a positive integer from environment variable `name`; false if unset or invalid. */
bool hpvm_platform_env_uint(const char *name, uint64_t *out);

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
