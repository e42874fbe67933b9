//===- Passes.h - Conversion passes of the hpvm dialect ---------*- C++ -*-===//
// Declares and registers convert-hpvm-to-<target> passes.
#ifndef HPVM_CONVERSION_PASSES_H
#define HPVM_CONVERSION_PASSES_H

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::hpvm {

#define GEN_PASS_DECL
#include "HPVM/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "HPVM/Conversion/Passes.h.inc"

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_PASSES_H
