//===- WhereUsed.h - Lowerings run only where their dialect is -*- C++ -*-===//
// Some upstream lowerings cost a walk or a pattern driver over all the IR they
// are given even when it holds none of the ops they lower: on a lowered graph
// of 10,000 leaves, convert-linalg-to-loops on every function cost 0.3 s and
// convert-vector-to-llvm over the module 1.27 s, for programs with no linalg or
// vector op. These passes run such a lowering only on the IR that holds an op
// of its dialect, and otherwise change nothing (the pass manager then skips
// verifying the module again).
#ifndef HPVM_LIB_PIPELINES_WHEREUSED_H
#define HPVM_LIB_PIPELINES_WHEREUSED_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass: convert-linalg-to-loops on each func.func with a linalg op.
std::unique_ptr<Pass> createLinalgToLoopsWhereUsed();

/// A module pass: convert-vector-to-llvm on the module when it holds a vector
/// op (module-wide: some vector ops lower to calls of functions it declares).
std::unique_ptr<Pass> createVectorToLLVMWhereUsed();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_WHEREUSED_H
