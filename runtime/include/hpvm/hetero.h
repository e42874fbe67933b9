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
 * HPVM 2.x's spellings (__hpvm_launch, __hpvm_parallel_section_begin,
 * __hpvm_task_begin, __hpvm_parallel_loop, __hpvm_priv, ...) are the same
 * markers (hetero_markers.h).
 *
 * The functions are never defined: hpvm-cc rewrites every call.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HETERO_H
#define HPVM_HETERO_H

/* The targets are HPVM-C's (hpvm.h): hetero::CPU_TARGET is hpvm::CPU_TARGET. */
#include "hpvm.h"

/* The markers, and HPVM 2.x's earlier spellings of them. */
#include "hetero_markers.h"

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
/* A target by name; the int overload (hetero_markers.h) takes HPVM 2.x's numbers. */
void __hetero_hint(hpvm::Target target) noexcept;
#endif

#endif /* HPVM_HETERO_H */
