/*===- hetero.h - Hetero-C++ ------------------------------------------------===*
 *
 * The markers of Hetero-C++, HPVM 2.x's C/C++ dialect: ordinary code between
 * marker calls that hpvm-cc outlines into dataflow graph nodes
 * (docs/HeteroCxx.md has the rules and what is refused).
 *
 *   __hetero_section_begin / _end   a section: an internal node of the tasks and
 *                                   parallel loops inside it
 *   __hetero_task_begin(nIn, in..., nOut, out..., ["name"]) / __hetero_task_end
 *                                   a task: one node; `in` are buffer pairs
 *                                   (pointer, size in bytes) and scalars, `out`
 *                                   buffer pairs
 *   __hetero_parallel_loop(nLoops, nIn, in..., nOut, out..., ["name"])
 *                                   first in the body of nLoops (1 to 3) perfectly
 *                                   nested for loops: a replicated leaf with one
 *                                   instance per iteration
 *   __hetero_hint(TARGET)           the node's target
 *   __hetero_launch(root, nIn, in..., nOut, out...) / __hetero_wait(handle)
 *   __hetero_launch_begin(nIn, in..., nOut, out...) / __hetero_launch_end(handle)
 *                                   the code between them is the root, launched
 *                                   and waited for in place
 *
 * The functions are never defined: hpvm-cc rewrites every call.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HETERO_H
#define HPVM_HETERO_H

/* The targets are HPVM-C's (hpvm.h): hetero::CPU_TARGET is hpvm::CPU_TARGET. */
#include "hpvm.h"

#ifdef __cplusplus
namespace hetero = hpvm;
/* `__hetero_hint(DEVICE)` with hpvm-cc's -DDEVICE=CPU_TARGET: the targets by their plain
 * names, as in C (the same enumerators as hpvm::CPU_TARGET, ...). */
using hpvm::CPU_TARGET;
using hpvm::GPU_TARGET;
using hpvm::SPIR_TARGET;
using hpvm::CUDNN_TARGET;
using hpvm::PROMISE_TARGET;
using hpvm::CPU_OR_GPU_TARGET;
using hpvm::CPU_OR_SPIR_TARGET;
using hpvm::FPGA_TARGET;
using hpvm::TENSOR_TARGET;
extern "C" {
#endif

void *__hetero_launch(void *root, ...) HPVM_NOEXCEPT;
void __hetero_wait(void *graph) HPVM_NOEXCEPT;
void *__hetero_launch_begin(unsigned inputs, ...) HPVM_NOEXCEPT;
void __hetero_launch_end(void *graph) HPVM_NOEXCEPT;
void *__hetero_section_begin(void) HPVM_NOEXCEPT;
void __hetero_section_end(void *section) HPVM_NOEXCEPT;
void *__hetero_task_begin(unsigned inputs, ...) HPVM_NOEXCEPT;
void __hetero_task_end(void *task) HPVM_NOEXCEPT;
void __hetero_parallel_loop(unsigned loops, ...) HPVM_NOEXCEPT;
void __hetero_hint(int target) HPVM_NOEXCEPT;
void __hetero_priv(unsigned count, ...) HPVM_NOEXCEPT;
void __hetero_isNonZeroLoop(long, ...) HPVM_NOEXCEPT;
void *__hetero_malloc(size_t bytes) HPVM_NOEXCEPT;
void __hetero_free(void *pointer) HPVM_NOEXCEPT;
void __hetero_request_mem(void *pointer, size_t bytes) HPVM_NOEXCEPT;
void __hetero_copy_mem(void *destination, void *source, size_t bytes) HPVM_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HPVM_HETERO_H */
