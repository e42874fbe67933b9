//===- HPVMDialect.h - The hpvm dialect -------------------------*- C++ -*-===//
// Declares the hpvm dialect class.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H
#define HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h.inc"

#include <string>

namespace mlir::hpvm {
/// The name the runtime shows for the node with symbol `symbol` (HPVM_TRACE
/// lines, warnings): the symbol, or for a C++ function its qualified name
/// without the parameters ("_Z5scalePfml" -> "scale").
std::string getNodeDisplayName(llvm::StringRef symbol);
} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_HPVMDIALECT_H
