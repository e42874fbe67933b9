//===- VectorToLLVMWhereUsed.h - vector to llvm, only where needed -*- C++ -*-===//
// convert-vector-to-llvm is a dialect conversion over the whole module (some
// vector ops lower to calls of functions it declares there): on a lowered
// graph without a vector op it walks every op for nothing (1.2 s of 5.3 s for
// 10,000 leaves through hpvm-lower-to-llvm-pipeline). This pass runs it when
// the module holds a vector op and otherwise leaves the module alone.
#ifndef HPVM_LIB_PIPELINES_VECTORTOLLVMWHEREUSED_H
#define HPVM_LIB_PIPELINES_VECTORTOLLVMWHEREUSED_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass: convert-vector-to-llvm on the module when it holds an op of
/// the vector dialect.
std::unique_ptr<Pass> createVectorToLLVMWhereUsed();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_VECTORTOLLVMWHEREUSED_H
