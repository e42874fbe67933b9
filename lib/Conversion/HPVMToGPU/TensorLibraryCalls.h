//===- TensorLibraryCalls.h - Tensor leaves as cuDNN / cuBLAS calls -*- C++ -*-===//
// A tensor leaf whose whole computation is `act?(add?(conv2d(x, W), bias))`
// or `act?(add?(mul(a, b), bias))` in f32 is one library call (cuDNN's
// convolution, cuBLAS's sgemm) plus the epilogue cuDNN does (cudnnAddTensor,
// cudnnActivationForward). convert-hpvm-to-gpu records such a call on the leaf
// (`hpvm.tensor_library`, a dictionary); hpvm-embed-kernels makes it the
// site's hpvm_rt_tensor_library_call_t, which the runtime runs on CUDA
// instead of the leaf's generated kernel when the library loads. The
// generated kernel stays: it runs where the library is missing or refuses.
#ifndef HPVM_CONVERSION_HPVMTOGPU_TENSORLIBRARYCALLS_H
#define HPVM_CONVERSION_HPVMTOGPU_TENSORLIBRARYCALLS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::hpvm {

/// The library call of the tensor leaf `leaf`, whose kernel was built
/// (buildTensorKernel set its `hpvm.tensor_kernel`), as the dictionary of
/// `hpvm.tensor_library`; null when the leaf is not one such call (another
/// op, an approximation knob, an operand computed in the leaf, a type other
/// than f32, scalar outputs that are not constants). Its parameter indices follow the order of the
/// host's parameter array (RuntimeABI.h, KernelShape::Tensor): inputs,
/// constant tensors, outputs, each memref as 3 + 2 * rank parameters.
DictionaryAttr matchTensorLibraryCall(LeafOp leaf);

/// A constant global `name` holding the hpvm_rt_tensor_library_call_t of
/// `call` (a dictionary matchTensorLibraryCall made), inserted at `b`, and
/// the global of its scalar outputs when it has any (added to `symbols`,
/// which the caller adds the returned global to).
LLVM::GlobalOp createTensorLibraryCallGlobal(OpBuilder &b, Location loc,
                                             DictionaryAttr call,
                                             StringRef name,
                                             SymbolTable &symbols);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTOGPU_TENSORLIBRARYCALLS_H
