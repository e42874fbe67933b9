//===- HPVMAttrs.h - Attributes of the hpvm dialect -------------*- C++ -*-===//
// Declares the hpvm enums (target, access, dim, replication, pool kind) and attributes.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMATTRS_H
#define HPVM_DIALECT_HPVM_IR_HPVMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"

#include "HPVM/Dialect/HPVM/IR/HPVMEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "HPVM/Dialect/HPVM/IR/HPVMAttrs.h.inc"

namespace mlir::hpvm {
/// Returns the target hints of a node definition in order of preference
/// (the `hpvm.targets` attribute); `{cpu}` when the attribute is absent.
llvm::SmallVector<Target> getNodeTargets(Operation *node);

/// The strictest of the error budgets (`hpvm.error`) of the node definitions
/// `nodes`, the smallest l1 and the smallest l2; null when none has one. A
/// node a transform makes of them (fused, tiled) keeps it.
ErrorBudgetAttr strictestNodeError(llvm::ArrayRef<Operation *> nodes);
} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_HPVMATTRS_H
