/* reason.c - the reasons a kernel call gives for running the CPU version. */
#include "kernel/reason.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends "; <formatted>" (or just the text when empty); silently cut when full. */
void hpvm_kernel_reason_add(hpvm_kernel_reason_t *reason, const char *format, ...) {
  size_t room = sizeof(reason->text) - reason->length;
  if (room <= 3)
    return;
  if (reason->length) {
    memcpy(reason->text + reason->length, "; ", 2);
    reason->length += 2;
    room -= 2;
  }
  va_list args;
  va_start(args, format);
  int written = vsnprintf(reason->text + reason->length, room, format, args);
  va_end(args);
  if (written > 0)
    reason->length += (size_t)written < room ? (size_t)written : room - 1;
  reason->text[reason->length] = '\0';
}
