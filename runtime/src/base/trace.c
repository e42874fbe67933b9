/* trace.c - the cached HPVM_TRACE flag and whole-line writes to stderr. */
#include "base/trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic int hpvm_trace_state = -1;

bool hpvm_trace_read_environment(void) {
  const char *text = getenv("HPVM_TRACE");
  int state = text && *text && strcmp(text, "0") != 0;
  /* Racing first readers compute the same answer: a plain store is enough. */
  atomic_store_explicit(&hpvm_trace_state, state, memory_order_relaxed);
  return state != 0;
}

void hpvm_trace_reset(void) { atomic_store(&hpvm_trace_state, -1); }

/* Formats prefix + message + "\n" into one buffer and writes it with one fputs: stderr is
 * unbuffered, and stdio locks the stream per call, so lines never interleave. */
static void write_line(const char *prefix, const char *format, va_list args) {
  char line[4096];
  size_t prefix_length = strlen(prefix);
  memcpy(line, prefix, prefix_length);
  size_t room = sizeof(line) - prefix_length - 1; /* one byte kept for the newline */
  int length = vsnprintf(line + prefix_length, room, format, args);
  size_t end = prefix_length;
  if (length > 0)
    end += (size_t)length < room ? (size_t)length : room - 1;
  if (length > 0 && (size_t)length >= room)
    memcpy(line + end - 3, "...", 3);
  line[end] = '\n';
  line[end + 1] = '\0';
  fputs(line, stderr);
}

void hpvm_trace_line(const char *format, ...) {
  va_list args;
  va_start(args, format);
  write_line("hpvm-trace: ", format, args);
  va_end(args);
}

void hpvm_warning(const char *format, ...) {
  va_list args;
  va_start(args, format);
  write_line("hpvm: warning: ", format, args);
  va_end(args);
}
