//===- LLVMIR.h - HPVM programs to LLVM IR ----------------------*- C++ -*-===//
// Registers --hpvm-to-llvmir: hpvm-lower-to-llvm-pipeline, then LLVM IR export.
#ifndef HPVM_TARGET_LLVMIR_H
#define HPVM_TARGET_LLVMIR_H

#include "HPVM/Pipelines/Pipelines.h"

#include "mlir/Support/LLVM.h"

namespace mlir::hpvm {
/// Lowers the module `op` with hpvm-lower-to-llvm-pipeline (`options`) and
/// writes it to `output` as LLVM IR. Errors are reported as diagnostics.
/// hpvm-translate --hpvm-to-llvmir and the compiler library (HPVM/C/Compiler.h)
/// both call it.
/// Lowers `op` with hpvm-lower-to-llvm-pipeline and writes it as LLVM IR:
/// text, or bitcode when `bitcode` is set.
LogicalResult lowerToLLVMIR(Operation *op, const CPUPipelineOptions &options,
                            llvm::raw_ostream &output, bool bitcode = false);

void registerToLLVMIRTranslation();
} // namespace mlir::hpvm

#endif // HPVM_TARGET_LLVMIR_H
