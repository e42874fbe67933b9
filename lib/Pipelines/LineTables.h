//===- LineTables.h - Line tables for generated functions -----*- C++ -*-===//
#ifndef HPVM_LIB_PIPELINES_LINETABLES_H
#define HPVM_LIB_PIPELINES_LINETABLES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass for `hpvm-cc -g`: every llvm.func without a subprogram of
/// its own (what the lowering generates: leaves' functions and their lane
/// variants, range functions, ...) gets one, of line tables, from its ops'
/// source locations, after the debug scopes those carry from the function
/// they came from are dropped (HPVM/Target/DebugScopes.h). Functions with a
/// subprogram (host code imported from C) keep theirs.
std::unique_ptr<Pass> createLineTablesPass();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_LINETABLES_H
