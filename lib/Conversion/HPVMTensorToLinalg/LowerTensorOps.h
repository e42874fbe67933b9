//===- LowerTensorOps.h - hpvm.tensor.* to linalg on tensors ----*- C++ -*-===//
// Private interface between the tensor-op lowerings and the pass.
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_LOWERTENSOROPS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_LOWERTENSOROPS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::hpvm {

/// Replaces one hpvm.tensor op by linalg/tensor/arith/math ops on tensors
/// computing the same value (with `useKernels`, f32 convolutions and matrix
/// products by calls of the runtime's kernels, which may absorb the bias add
/// and activation after them: KernelCalls.h); every op erased is added to
/// `lowered`. Failure, after a diagnostic at the op saying what is not
/// supported yet, otherwise.
LogicalResult lowerTensorOpToLinalg(Operation *op, bool useKernels,
                                    llvm::SmallPtrSetImpl<Operation *> &lowered);

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
