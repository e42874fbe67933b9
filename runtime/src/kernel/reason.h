/* reason.h - why a kernel call runs the CPU version: the text traces and warnings give. */
#ifndef HPVM_KERNEL_REASON_H
#define HPVM_KERNEL_REASON_H

#include <stddef.h>

/* The reasons met so far, "; "-separated. */
typedef struct hpvm_kernel_reason_t {
  size_t length;
  char text[2048];
} hpvm_kernel_reason_t;

void hpvm_kernel_reason_add(hpvm_kernel_reason_t *reason, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif /* HPVM_KERNEL_REASON_H */
