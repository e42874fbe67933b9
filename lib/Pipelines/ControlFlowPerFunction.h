//===- ControlFlowPerFunction.h - cf-to-llvm function by function -*- C++ -*-===//
// Upstream's convert-cf-to-llvm is a module pass, for the one pattern that
// declares functions in the module (cf.assert's call of abort). Lowered HPVM
// programs have no cf.assert, and on a graph of 10,000 leaves the module-wide
// conversion cost 0.45 s of 4.05 s on one thread. (A module pass choosing
// between the two at run time cost as much: the dynamic pipeline verifies the
// whole module after it.)
#ifndef HPVM_LIB_PIPELINES_CONTROLFLOWPERFUNCTION_H
#define HPVM_LIB_PIPELINES_CONTROLFLOWPERFUNCTION_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::hpvm {

/// A module pass: cf.assert to the llvm dialect, and nothing else (one walk
/// when there is none).
std::unique_ptr<Pass> createAssertsToLLVM();

/// convert-cf-to-llvm's other patterns on the op it runs on (a function):
/// after createAssertsToLLVM, nested on each function, in parallel.
std::unique_ptr<Pass> createControlFlowToLLVMInFunction();

} // namespace mlir::hpvm

#endif // HPVM_LIB_PIPELINES_CONTROLFLOWPERFUNCTION_H
