//===- LinalgToLoopsWhereUsed.h - linalg to loops, only where needed -*- C++ -*-===//
// convert-linalg-to-loops is a greedy rewrite per function: run over every
// function of a lowered graph, most of which hold no linalg op (every leaf
// becomes a node function and a range function), it costs a pattern driver
// per function for nothing (0.3 s of 10,000 leaves). This pass runs it on the
// functions that hold linalg ops and leaves the others alone.
#ifndef HPVM_LIB_PIPELINES_LINALGTOLOOPSWHEREUSED_H
#define HPVM_LIB_PIPELINES_LINALGTOLOOPSWHEREUSED_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass: convert-linalg-to-loops on each func.func with a linalg op.
std::unique_ptr<Pass> createLinalgToLoopsWhereUsed();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_LINALGTOLOOPSWHEREUSED_H
