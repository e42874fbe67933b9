//===- Passes.h - Passes of the lowering pipelines --------------*- C++ -*-===//
// Declares and registers the passes that hpvm-lower-to-cpu-pipeline and
// hpvm-lower-to-llvm-pipeline add around the conversions (Passes.td).
#ifndef HPVM_PIPELINES_PASSES_H
#define HPVM_PIPELINES_PASSES_H

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::hpvm {

/// The discardable attribute of an scf.for that upstream's scf-to-cf carries
/// to the loop's latch branch (an LLVM::LoopAnnotationAttr);
/// hpvm-cf-to-llvm-in-function makes it the llvm.br's loop annotation, which
/// the translation writes as the loop's `llvm.loop` metadata.
inline constexpr llvm::StringLiteral kLoopAnnotationAttrName = "llvm.loop_annotation";

#define GEN_PASS_DECL
#include "HPVM/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "HPVM/Pipelines/Passes.h.inc"

} // namespace mlir::hpvm

#endif // HPVM_PIPELINES_PASSES_H
