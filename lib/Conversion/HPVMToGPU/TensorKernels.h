//===- TensorKernels.h - Tensor nodes as device kernels ---------*- C++ -*-===//
// A leaf of tensor ops (conv2d, mul, add, activations, pools, softmax,
// batchnorm, map, reduce; a fused chain of them) becomes a kernel that
// computes one element of the leaf's outputs per thread: each op's element is
// an expression of its operands' elements, evaluated where it is needed, so a
// fused conv + bias + activation + pool is one kernel with no intermediate
// tensor. The node keeps its CPU version (the runtime's tensor kernels).
#ifndef HPVM_CONVERSION_HPVMTOGPU_TENSORKERNELS_H
#define HPVM_CONVERSION_HPVMTOGPU_TENSORKERNELS_H

#include "TensorTiling.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::hpvm {

/// Whether `leaf` is a tensor node: an input or output is a tensor.
bool isTensorLeaf(LeafOp leaf);

/// Why the tensor leaf `leaf` cannot be a device kernel (an op with no
/// element form, a knob, a grid of it, an operand that a reduction would
/// recompute too often), or "" when it can.
std::string checkTensorLeaf(LeafOp leaf, ModuleOp module);

/// Builds the kernel of the tensor leaf `leaf` in `kernels`, its constant
/// tensors as `memref.global`s of `module` named in the leaf's
/// `hpvm.tensor_kernel` attribute; returns the kernel's symbol reference.
/// A product `tiling` tiles (TensorTiling.h) runs in work-groups of
/// kTileThreads, as the leaf's `hpvm.tensor_launch` says.
SymbolRefAttr buildTensorKernel(LeafOp leaf, ModuleOp module,
                                gpu::GPUModuleOp kernels,
                                tensor_kernels::TilingMode tiling);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTOGPU_TENSORKERNELS_H
