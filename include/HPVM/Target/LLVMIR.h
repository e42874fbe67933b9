//===- LLVMIR.h - HPVM programs to LLVM IR ----------------------*- C++ -*-===//
// Registers --hpvm-to-llvmir: hpvm-lower-to-llvm-pipeline, then LLVM IR export.
#ifndef HPVM_TARGET_LLVMIR_H
#define HPVM_TARGET_LLVMIR_H

namespace mlir::hpvm {
void registerToLLVMIRTranslation();
} // namespace mlir::hpvm

#endif // HPVM_TARGET_LLVMIR_H
