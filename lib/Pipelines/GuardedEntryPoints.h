//===- GuardedEntryPoints.h - Entry points for hpvm_rt_call_guarded -*- C++ -*-===//
#ifndef HPVM_LIB_PIPELINES_GUARDEDENTRYPOINTS_H
#define HPVM_LIB_PIPELINES_GUARDEDENTRYPOINTS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass run after func-to-llvm: for every C interface function
/// `_mlir_ciface_<f>` (a public host function), an entry point
/// `void __hpvm_guarded_<f>(void **args)` of one fixed signature, which
/// loads each argument through `args[i]` (the pointer itself for pointer
/// parameters, such as memref descriptors; the value it points to for
/// scalars), calls `_mlir_ciface_<f>` and stores a result through the pointer
/// after the arguments. An embedder hands it to the runtime's
/// `hpvm_rt_call_guarded`, which returns an error of the compiled code as a
/// status instead of letting it end the process.
std::unique_ptr<Pass> createGuardedEntryPointsPass();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_GUARDEDENTRYPOINTS_H
