//===- HostCodeBypass.h - Host code around the LLVM lowering ----*- C++ -*-===//
// Functions already in the LLVM dialect (host code imported from C, and the
// entry functions the CPU lowering writes) need none of the passes that lower
// the rest of a program to the llvm dialect, and some of those passes harm
// them: greedy rewrites with region simplification (expand-strided-metadata,
// convert-vector-to-llvm, canonicalize) merge C blocks that differ only in
// which local array they use and leave llvm.intr.lifetime.start/end on a
// block argument, which LLVM rejects. The bypass takes such functions out of
// the module before those passes and puts them back, unchanged, after them.
#ifndef HPVM_LIB_PIPELINES_HOSTCODEBYPASS_H
#define HPVM_LIB_PIPELINES_HOSTCODEBYPASS_H

#include "mlir/Pass/PassManager.h"

#include <functional>

namespace mlir::hpvm {

/// Adds to `pm` a pass that sets aside every function of the module that is
/// entirely in the LLVM dialect (leaving a declaration in its place), the
/// passes `addLowering` adds, and a pass that restores the functions. The two
/// passes share their storage; they are not registered on their own.
void addHostCodeBypass(OpPassManager &pm,
                       const std::function<void(OpPassManager &)> &addLowering);

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_HOSTCODEBYPASS_H
