//===- LowerTensorOps.h - hpvm.tensor.* to linalg on tensors ----*- C++ -*-===//
// Private interface between the tensor-op patterns and the pass.
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_LOWERTENSOROPS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_LOWERTENSOROPS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::hpvm {

/// True when no operand or result of `op` is a dynamically shaped tensor
/// (the patterns of populateHPVMTensorToLinalgPatterns refuse those).
bool hasStaticShapes(Operation *op);

/// The diagnostic for a tensor op no pattern lowered, saying why: dynamic
/// shapes, a knob that needs the kernels (`useKernels`: they were on, so the
/// operands were not f32), or an op this lowering does not know.
InFlightDiagnostic emitUnloweredTensorOpError(Operation *op, bool useKernels);

/// The unit attribute on the math.exp ops the lowerings of softmax, tanh and
/// sigmoid create (not those of a map's own region), which the pass then
/// replaces by the math dialect's polynomial.
inline constexpr llvm::StringLiteral kLoweredExpAttr = "hpvm_lowered_exp";

/// The value of `op` under reduction sampling (`knob`, a sample_reduction the
/// verifier accepted on it): linalg ops that visit the kept elements only
/// (SampledReduce.cpp).
Value lowerSampledReduce(OpBuilder &b, TensorReduceOp op, KnobAttr knob);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_LOWERTENSOROPS_H
