/* profile.h - HPVM_PROFILE: wall time and runs of each leaf node, reported at exit. */
#ifndef HPVM_BASE_PROFILE_H
#define HPVM_BASE_PROFILE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

/* -1: HPVM_PROFILE not read yet, 0: off, 1: on.  Read through hpvm_profile_enabled only. */
extern _Atomic int hpvm_profile_state;

/* Reads HPVM_PROFILE (a decimal 0 or 1, unset or empty = 0) and caches the answer; on the
 * first answer 1 registers the report at exit.  A malformed value stops the program (or
 * returns to a guarded call) through hpvm_rt_check_at, naming the variable, and stays unread. */
bool hpvm_profile_read_environment(void);

/* Whether HPVM_PROFILE is on: one relaxed load once the environment has been read. */
static inline bool hpvm_profile_enabled(void) {
  int state = atomic_load_explicit(&hpvm_profile_state, memory_order_relaxed);
  return state < 0 ? hpvm_profile_read_environment() : state != 0;
}

/* A run of leaf `node` starts on this thread (pushed on the thread's stack of open runs, the
 * oldest dropped past 32).  Callers check hpvm_profile_enabled first. */
void hpvm_profile_start(const char *node);

/* The innermost open run of `node` on this thread (matched by the name's 64-bit hash) ends: its
 * wall time since its start is added to the node's total, and open runs above it (abandoned by
 * a failed guarded call) are dropped.  A `node` with no open run is ignored.  Callers check
 * hpvm_profile_enabled first. */
void hpvm_profile_done(const char *node);

/* Writes the report (what the exit handler prints) to `out`: one line per node, largest total
 * first, "hpvm-profile: <total ms> <runs> <ms per run> <share>% <node>", then
 * "hpvm-profile: total <ms> ms in <runs> runs of <nodes> nodes". */
void hpvm_profile_report(FILE *out);

#endif /* HPVM_BASE_PROFILE_H */
