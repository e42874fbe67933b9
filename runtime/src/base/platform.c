/* platform.c - OS queries used to size the runtime. */
#define _GNU_SOURCE
#include "base/platform.h"

#include <errno.h>
#include <sched.h>
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

bool hpvm_platform_env_uint(const char *name, uint64_t *out) {
  const char *text = getenv(name);
  if (!text || !*text)
    return false;
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || !end || *end != '\0' || value == 0)
    return false;
  *out = (uint64_t)value;
  return true;
}
