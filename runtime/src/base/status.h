/* status.h - internal helpers around hpvm_status_t (annotation, early-return macros). */
#ifndef HPVM_BASE_STATUS_H
#define HPVM_BASE_STATUS_H

#include "hpvm/hpvm_rt.h"

/* Prefixes the message of `status` with a printf-style context ("loading module: ...") and
 * returns the (possibly new) status.  NULL stays NULL. */
hpvm_status_t hpvm_status_annotate(hpvm_status_t status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An independent copy of `status` (the same code and message), for reporting one failure to
 * several waiters. */
hpvm_status_t hpvm_status_clone(hpvm_status_t status);

/* Calls `entry(args)`; returns NULL, or the error with which compiled code on this thread
 * called hpvm_rt_check_at meanwhile (the call is abandoned: longjmp). The mechanism of
 * hpvm_rt_call_guarded, which also untracks what the abandoned call tracked. */
hpvm_status_t hpvm_status_guarded_call(void (*entry)(void **), void **args);

#define HPVM_RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                           \
    hpvm_status_t hpvm_status_tmp_ = (expr);                                                     \
    if (hpvm_status_tmp_)                                                                        \
      return hpvm_status_tmp_;                                                                   \
  } while (0)

#define HPVM_STATUS(code, ...) hpvm_status_create(HPVM_STATUS_##code, __VA_ARGS__)

#endif /* HPVM_BASE_STATUS_H */
