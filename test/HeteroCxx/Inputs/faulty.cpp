// Deliberate faults for the sanitizer tests (../../HPVMC/sanitizer-faults.test), as
// Hetero-C++ writes them: each mode makes one fault a sanitizer must report,
// in main or in a parallel loop's body, and "none" makes none. The loop writes
// c[at[i]] = a[i] + limit, and "race" makes every iteration also add to one
// total without synchronization.
#include <heterocc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RACE_MEETING /* the ThreadSanitizer builds */
#include "../../HPVMC/Inputs/race_meeting.h"
#endif

void faulty(int *a, size_t bytes_a, long *at, size_t bytes_at, int *c, size_t bytes_c,
            int *total, size_t bytes_total, int limit, int race, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, /* inputs */ 7, a, bytes_a, at, bytes_at, c, bytes_c, total,
                           bytes_total, limit, race, n, /* outputs */ 2, c, bytes_c, total,
                           bytes_total, "faulty_element");
    c[at[i]] = a[i] + limit;
#ifdef RACE_MEETING
    if (race)
      meet_second_thread();
#endif
    /* Many unsynchronized updates per iteration, on two threads (above). */
    for (int k = 0; k < race; ++k)
      *(volatile int *)total += a[i];
  }
  __hetero_section_end(section);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  long n = 100000;
  int *a = (int *)malloc(n * sizeof(int)), *c = (int *)malloc(n * sizeof(int));
  long *at = (long *)malloc(n * sizeof(long));
  int *total = (int *)calloc(1, sizeof(int));
  for (long i = 0; i < n; ++i) {
    a[i] = (int)(i % 7);
    at[i] = i;
  }
  int limit = 0;
  if (strcmp(mode, "main-overflow") == 0)
    a[n + argc] = 1; /* past the array (argc: not known to the compiler) */
  else if (strcmp(mode, "main-ub") == 0)
    limit = INT_MAX + argc; /* signed overflow */
  else if (strcmp(mode, "leaf-overflow") == 0)
    at[n / 2] = n + argc - 2; /* the loop writes one element past c */
  else if (strcmp(mode, "leaf-ub") == 0)
    limit = INT_MAX - argc + 2; /* a[i] + limit overflows in the loop where a[i] > 0 */
  int race = strcmp(mode, "race") == 0 ? 64 : 0;
  void *graph = __hetero_launch((void *)faulty, 7, a, n * sizeof(int), at, n * sizeof(long), c,
                                n * sizeof(int), total, sizeof(int), limit, race, n, 2, c,
                                n * sizeof(int), total, sizeof(int));
  __hetero_wait(graph);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += c[i] != a[i] + limit;
  printf("faulty: mode=%s wrong=%ld\n", mode, wrong);
  free(a);
  free(at);
  free(c);
  free(total);
  return wrong != 0;
}
