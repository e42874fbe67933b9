//===- DebugScopes.h - Source locations fit for LLVM's debug info -*- C++ -*-===//
// Code the compiler generates (a leaf's function, a kernel) is made of ops
// whose locations may name debug scopes of the function they came from:
// imported HPVM-C code keeps its subprogram on block arguments and loop
// annotations, a kernel module copies constant tables with their compile
// unit. LLVM rejects a !dbg that names another function's subprogram ("!dbg
// attachment points at wrong subprogram") and strips the module's debug
// information, and ptxas refuses to optimize PTX of full debug information.
// These helpers drop such scopes, so that a pass like upstream's
// ensure-debug-info-scope-on-llvm-func can give each function line tables of
// its own.
#ifndef HPVM_CONVERSION_DEBUGSCOPES_H
#define HPVM_CONVERSION_DEBUGSCOPES_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::hpvm {

/// Drops the debug scopes of the source locations in `root`: in the
/// locations of ops and block arguments (the file positions stay) and in
/// loop annotations. Only inside the functions `select` accepts, and, when
/// `globals` is set, also the debug descriptions of globals.
void dropDebugScopes(Operation *root,
                     llvm::function_ref<bool(FunctionOpInterface)> select,
                     bool globals);

/// Whether `function` has a subprogram of its own (its location names one).
bool hasSubprogram(FunctionOpInterface function);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_DEBUGSCOPES_H
