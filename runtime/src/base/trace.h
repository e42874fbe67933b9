/* trace.h - HPVM_TRACE lines and one-line warnings on stderr. */
#ifndef HPVM_BASE_TRACE_H
#define HPVM_BASE_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>

/* -1: HPVM_TRACE not read yet, 0: off, 1: on.  Read through hpvm_trace_enabled only. */
extern _Atomic int hpvm_trace_state;

/* Reads HPVM_TRACE (on unless unset, empty or "0") and caches the answer. */
bool hpvm_trace_read_environment(void);

/* Whether HPVM_TRACE is on: one relaxed load once the environment has been read. */
static inline bool hpvm_trace_enabled(void) {
  int state = atomic_load_explicit(&hpvm_trace_state, memory_order_relaxed);
  return state < 0 ? hpvm_trace_read_environment() : state != 0;
}

/* Forgets the cached HPVM_TRACE so that the next hpvm_trace_enabled reads it again (tests). */
void hpvm_trace_reset(void);

/* Prints "hpvm-trace: <formatted>\n" on stderr as one write (lines of concurrent callers never
 * interleave; a line longer than 4 KiB is cut and ends in "...").  Callers check
 * hpvm_trace_enabled first. */
void hpvm_trace_line(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints "hpvm: warning: <formatted>\n" on stderr as one write, whatever HPVM_TRACE says. */
void hpvm_warning(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif /* HPVM_BASE_TRACE_H */
