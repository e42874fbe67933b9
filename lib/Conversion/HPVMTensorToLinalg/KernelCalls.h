//===- KernelCalls.h - hpvm.tensor ops as calls of the runtime's kernels --===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/Operation.h"

namespace mlir::hpvm {

/// When `op` is an f32 `hpvm.tensor.conv2d`, `hpvm.tensor.mul` or
/// `hpvm.tensor.pool`, replaces it by a call of the runtime's kernel
/// (hpvm_rt_tensor_conv2d_f32, hpvm_rt_tensor_matmul_f32,
/// hpvm_rt_tensor_pool_f32; declared in the module when missing) on the
/// buffers of its operands and a fresh buffer for the result, read back as a
/// tensor. A bias add (one value per filter or per column) and a relu or
/// clipped_relu that consume the result alone are applied by the kernel too
/// (fused epilogue) and erased. Every op erased is added to `lowered`. Returns
/// false, changing nothing, for every other op.
bool lowerToKernelCall(Operation *op, llvm::SmallPtrSetImpl<Operation *> &lowered);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
