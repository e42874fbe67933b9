/*===- hetero_markers.h - the declarations of the Hetero-C++ markers --------===*
 *
 * The marker functions of hetero.h, under their names and under HPVM 2.x's
 * earlier spellings (__hpvm_launch, __hpvm_parallel_section_begin, ...), which
 * mean the same. hetero.h includes this header, and hpvm-cc includes it first
 * in every C++ source, so that a program's own declarations of the markers
 * (HPVM 2.x's heterocc.h declared most of them without noexcept) are
 * redeclarations of these, before or after hetero.h: clang accepts a
 * redeclaration that leaves out the noexcept of a declaration in a system
 * header. The markers never throw: in C++ they are noexcept, so that no call
 * of one needs exception cleanups.
 *
 * The functions are never defined: hpvm-cc rewrites every call.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HETERO_MARKERS_H
#define HPVM_HETERO_MARKERS_H
#pragma clang system_header

#ifdef __cplusplus
#include <cstddef>
#define HETERO_NOEXCEPT noexcept
extern "C" {
#else
#include <stddef.h>
#define HETERO_NOEXCEPT
#endif

void *__hetero_launch(void *root, ...) HETERO_NOEXCEPT;
void __hetero_wait(void *graph) HETERO_NOEXCEPT;
void *__hetero_launch_begin(unsigned inputs, ...) HETERO_NOEXCEPT;
void __hetero_launch_end(void *graph) HETERO_NOEXCEPT;
void *__hetero_section_begin(void) HETERO_NOEXCEPT;
void __hetero_section_end(void *section) HETERO_NOEXCEPT;
void *__hetero_task_begin(unsigned inputs, ...) HETERO_NOEXCEPT;
void __hetero_task_end(void *task) HETERO_NOEXCEPT;
void __hetero_parallel_loop(unsigned loops, ...) HETERO_NOEXCEPT;
/* In C++ an int here is a number of HPVM 2.x's heterocc.h (docs/HeteroCxx.md);
 * hetero.h adds the overload that takes this compiler's targets by name. */
void __hetero_hint(int target) HETERO_NOEXCEPT;
void __hetero_priv(unsigned count, ...) HETERO_NOEXCEPT;
void __hetero_isNonZeroLoop(long, ...) HETERO_NOEXCEPT;
void *__hetero_malloc(size_t bytes) HETERO_NOEXCEPT;
void __hetero_free(void *pointer) HETERO_NOEXCEPT;
void __hetero_request_mem(void *pointer, size_t bytes) HETERO_NOEXCEPT;
void __hetero_copy_mem(void *destination, void *source, size_t bytes) HETERO_NOEXCEPT;

/* HPVM 2.x's earlier spellings. */
void *__hpvm_launch(void *root, ...) HETERO_NOEXCEPT;
void __hpvm_wait(void *graph) HETERO_NOEXCEPT;
void *__hpvm_launch_begin(unsigned inputs, ...) HETERO_NOEXCEPT;
void __hpvm_launch_end(void *graph) HETERO_NOEXCEPT;
void *__hpvm_parallel_section_begin(void) HETERO_NOEXCEPT;
void __hpvm_parallel_section_end(void *section) HETERO_NOEXCEPT;
void *__hpvm_task_begin(unsigned inputs, ...) HETERO_NOEXCEPT;
void __hpvm_task_end(void *task) HETERO_NOEXCEPT;
void __hpvm_parallel_loop(unsigned loops, ...) HETERO_NOEXCEPT;
void __hpvm_priv(unsigned count, ...) HETERO_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HETERO_NOEXCEPT

#endif /* HPVM_HETERO_MARKERS_H */
