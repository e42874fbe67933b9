//===- Passes.h - Graph transforms of the hpvm dialect ----------*- C++ -*-===//
// Declares and registers hpvm-<verb>[-<noun>] passes.
#ifndef HPVM_TRANSFORMS_PASSES_H
#define HPVM_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::hpvm {

#define GEN_PASS_DECL
#include "HPVM/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "HPVM/Transforms/Passes.h.inc"

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_PASSES_H
