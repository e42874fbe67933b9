/* platform.c - OS queries used to size the runtime. */
#define _GNU_SOURCE
#include "base/platform.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint32_t hpvm_platform_cpu_count(void) {
#ifdef CPU_COUNT
  /* The affinity mask, not the machine size: containers and taskset restrict it. */
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0)
      return (uint32_t)count;
  }
#endif
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (uint32_t)online : 1u;
}

hpvm_status_t hpvm_platform_env_integer(const char *name, uint64_t min, uint64_t max,
                                        uint64_t *out, bool *present) {
  *present = false;
  const char *text = getenv(name);
  if (!text || !*text)
    return NULL;
  /* strtoull alone would take leading spaces and signs ("-1" is 2^64 - 1). */
  char found[96] = "";
  unsigned long long value = 0;
  if (*text < '0' || *text > '9') {
    snprintf(found, sizeof found, "'%c' first", *text);
  } else {
    char *end = NULL;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno == ERANGE || value > max)
      snprintf(found, sizeof found, "a number above %llu", (unsigned long long)max);
    else if (*end)
      snprintf(found, sizeof found, "'%.40s' after the number", end);
    else if (value < min)
      snprintf(found, sizeof found, "a number below %llu", (unsigned long long)min);
  }
  if (*found)
    return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                              "%s='%.64s': expected a decimal integer from %llu to %llu, found %s",
                              name, text, (unsigned long long)min, (unsigned long long)max,
                              found);
  *out = (uint64_t)value;
  *present = true;
  return NULL;
}
