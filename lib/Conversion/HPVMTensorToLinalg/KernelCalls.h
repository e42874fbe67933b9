//===- KernelCalls.h - hpvm.tensor ops as calls of the runtime's kernels --===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::hpvm {

/// When `op` is an f32 `hpvm.tensor.conv2d` or `hpvm.tensor.mul`, builds at
/// `op` a call of the runtime's packed kernel (hpvm_rt_tensor_conv2d_f32,
/// hpvm_rt_tensor_matmul_f32; declared in the module when missing) on the
/// buffers of its operands and a fresh buffer for the result, and returns the
/// result as a tensor. Returns a null value for every other op.
Value buildKernelCall(OpBuilder &b, Operation *op);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
