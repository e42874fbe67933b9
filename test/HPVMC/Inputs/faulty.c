// Deliberate faults for the sanitizer tests (../sanitizer-faults.test): each mode
// makes one fault a sanitizer must report, in main or in a leaf, and "none"
// makes none. The leaf writes c[at[i]] = a[i] + limit (int), and "race"
// makes every instance also add to one total, 64 times, without
// synchronization.
#include <hpvm/hpvm.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RACE_MEETING /* the ThreadSanitizer builds */
#include "race_meeting.h"
#endif

typedef struct __attribute__((__packed__)) {
  int *a;
  size_t bytes_a;
  long *at;
  size_t bytes_at;
  int *c;
  size_t bytes_c;
  int *total;
  size_t bytes_total;
  int limit;
  int race;
  long n;
} RootIn;

void faulty_leaf(int *a, size_t bytes_a, long *at, size_t bytes_at, int *c, size_t bytes_c,
                 int *total, size_t bytes_total, int limit, int race) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, a, at, total, 2, c, total);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  c[at[i]] = a[i] + limit;
#ifdef RACE_MEETING
  if (race)
    meet_second_thread();
#endif
  /* Many unsynchronized updates per instance, on two threads (above). */
  for (int k = 0; k < race; ++k)
    *(volatile int *)total += a[i];
}

void faulty_root(int *a, size_t bytes_a, long *at, size_t bytes_at, int *c, size_t bytes_c,
                 int *total, size_t bytes_total, int limit, int race, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(3, a, at, total, 2, c, total);
  void *leaf = __hpvm__createNodeND(1, faulty_leaf, n);
  for (int p = 0; p < 10; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  long n = 100000;
  int *a = malloc(n * sizeof(int)), *c = malloc(n * sizeof(int));
  long *at = malloc(n * sizeof(long));
  int *total = calloc(1, sizeof(int));
  for (long i = 0; i < n; ++i) {
    a[i] = (int)(i % 7);
    at[i] = i;
  }
  int limit = 0;
  if (strcmp(mode, "main-overflow") == 0)
    a[n + argc] = 1; /* one element past the array (argc: not known to the compiler) */
  else if (strcmp(mode, "main-ub") == 0)
    limit = INT_MAX + argc; /* signed overflow */
  else if (strcmp(mode, "leaf-overflow") == 0)
    at[n / 2] = n + argc - 2; /* the leaf writes one element past c */
  else if (strcmp(mode, "leaf-ub") == 0)
    limit = INT_MAX - argc + 2; /* a[i] + limit overflows in the leaf where a[i] > 0 */
  int race = strcmp(mode, "race") == 0 ? 64 : 0;
  __hpvm__init();
  llvm_hpvm_track_mem(a, n * sizeof(int));
  llvm_hpvm_track_mem(at, n * sizeof(long));
  llvm_hpvm_track_mem(c, n * sizeof(int));
  llvm_hpvm_track_mem(total, sizeof(int));
  RootIn args = {a,     n * sizeof(int), at,    n * sizeof(long), c, n * sizeof(int),
                 total, sizeof(int),     limit, race, n};
  void *dfg = __hpvm__launch(0, faulty_root, (void *)&args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(c, n * sizeof(int));
  llvm_hpvm_request_mem(total, sizeof(int));
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += c[i] != a[i] + limit;
  printf("faulty: mode=%s wrong=%ld\n", mode, wrong);
  llvm_hpvm_untrack_mem(a);
  llvm_hpvm_untrack_mem(at);
  llvm_hpvm_untrack_mem(c);
  llvm_hpvm_untrack_mem(total);
  __hpvm__cleanup();
  free(a);
  free(at);
  free(c);
  free(total);
  return wrong != 0;
}
