//===- KernelCalls.h - hpvm.tensor ops as calls of the runtime's kernels --===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::hpvm {

/// Adds, with `benefit`, the patterns that replace an f32
/// `hpvm.tensor.conv2d`, `hpvm.tensor.mul` or `hpvm.tensor.pool` (static
/// shapes) by a call of the runtime's kernel (hpvm_rt_tensor_conv2d_f32,
/// hpvm_rt_tensor_matmul_f32, hpvm_rt_tensor_pool_f32 and their approximate
/// and constant-filter variants; declared in the module when missing) on the
/// buffers of its operands and a fresh buffer for the result, read back as a
/// tensor. A bias add (one value per filter or per column) and a relu or
/// clipped_relu that consume the result alone are applied by the kernel too
/// (fused epilogue) and erased with the root: the ops after the root, so a
/// driver visits ops in program order.
void populateKernelCallPatterns(RewritePatternSet &patterns,
                                PatternBenefit benefit);

/// The aligned pointer of the memref `buffer` as an !llvm.ptr (what the
/// runtime's functions take).
Value pointerOf(OpBuilder &b, Location loc, Value buffer);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_KERNELCALLS_H
