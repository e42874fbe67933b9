/* status.c - hpvm_status_t objects: gRPC-style code + message, NULL meaning OK. */
#include "base/status.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hpvm_status_s {
  hpvm_status_code_t code;
  bool is_static; /* the out-of-memory fallback below must never be freed */
  char *message;  /* points just past the struct (one allocation) */
};

/* Returned when even the status itself cannot be allocated, so that an out-of-memory
 * condition is still reported instead of being mistaken for success. */
static char out_of_memory_text[] = "out of host memory while reporting an error";
static struct hpvm_status_s out_of_memory_status = {HPVM_STATUS_RESOURCE_EXHAUSTED, true,
                                                    out_of_memory_text};

static const char *const code_names[] = {
    "OK",        "CANCELLED",         "UNKNOWN",           "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL",      "UNAVAILABLE",       "DATA_LOSS",
};

const char *hpvm_status_code_name(hpvm_status_code_t code) {
  if ((unsigned)code < sizeof(code_names) / sizeof(code_names[0]))
    return code_names[code];
  return "UNKNOWN_CODE";
}

hpvm_status_code_t hpvm_status_code(hpvm_status_t status) {
  return status ? status->code : HPVM_STATUS_OK;
}

const char *hpvm_status_message(hpvm_status_t status) { return status ? status->message : ""; }

void hpvm_status_free(hpvm_status_t status) {
  if (status && !status->is_static)
    free(status);
}

/* Statuses use the system allocator on purpose: they must be creatable while an injected
 * allocator is failing, and their owner may free them long after that allocator is gone. */
static hpvm_status_t status_from_va(hpvm_status_code_t code, const char *prefix,
                                    const char *format, va_list args) {
  if (code == HPVM_STATUS_OK)
    return NULL;
  va_list copy;
  va_copy(copy, args);
  int body = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (body < 0)
    body = 0;
  size_t prefix_len = prefix ? strlen(prefix) : 0;
  size_t total = sizeof(struct hpvm_status_s) + prefix_len + (size_t)body + 1;
  hpvm_status_t status = malloc(total);
  if (!status)
    return &out_of_memory_status;
  status->code = code;
  status->is_static = false;
  status->message = (char *)(status + 1);
  if (prefix_len)
    memcpy(status->message, prefix, prefix_len);
  vsnprintf(status->message + prefix_len, (size_t)body + 1, format, args);
  return status;
}

hpvm_status_t hpvm_status_create(hpvm_status_code_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hpvm_status_t status = status_from_va(code, NULL, format, args);
  va_end(args);
  return status;
}

hpvm_status_t hpvm_status_annotate(hpvm_status_t status, const char *format, ...) {
  if (!status || status->is_static)
    return status;
  va_list args;
  va_start(args, format);
  char prefix[256];
  vsnprintf(prefix, sizeof(prefix), format, args);
  va_end(args);
  size_t len = strlen(prefix);
  if (len + 2 < sizeof(prefix)) {
    prefix[len] = ':';
    prefix[len + 1] = ' ';
    prefix[len + 2] = '\0';
  }
  hpvm_status_t annotated = hpvm_status_create(status->code, "%s%s", prefix, status->message);
  if (annotated->is_static)
    return status; /* keep the original rather than lose the code */
  hpvm_status_free(status);
  return annotated;
}

hpvm_status_t hpvm_status_clone(hpvm_status_t status) {
  if (!status || status->is_static)
    return status;
  return hpvm_status_create(status->code, "%s", status->message);
}

/* The innermost hpvm_rt_call_guarded of this thread, and the error it returns. */
static _Thread_local jmp_buf *guard_target;
static _Thread_local hpvm_status_t guard_status;

hpvm_status_t hpvm_status_guarded_call(void (*entry)(void **), void **args) {
  jmp_buf here;
  jmp_buf *outer = guard_target;
  if (setjmp(here)) {
    guard_target = outer;
    hpvm_status_t status = guard_status;
    guard_status = NULL;
    return status;
  }
  guard_target = &here;
  entry(args);
  guard_target = outer;
  return NULL;
}

void hpvm_rt_check_at(hpvm_status_t status, const char *where) {
  if (!status)
    return;
  if (guard_target) {
    /* An embedder's call: the error goes back to it. */
    guard_status = where ? hpvm_status_annotate(status, "%s", where) : status;
    longjmp(*guard_target, 1);
  }
  fprintf(stderr, "hpvm: error: %s%s%s: %s\n", where ? where : "", where ? ": " : "",
          hpvm_status_code_name(status->code), status->message);
  fflush(stderr);
  hpvm_status_free(status);
  exit(1);
}

void hpvm_rt_check(hpvm_status_t status) { hpvm_rt_check_at(status, NULL); }
