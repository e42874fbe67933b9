//===- ElementwiseForms.h - Tensor maps the kernels compute themselves -*- C++ -*-===//
// Recognizes hpvm.tensor.map regions that the runtime's tensor kernels apply in their
// epilogues, operation for operation (so that fused and unfused graphs give the same bits).
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_ELEMENTWISEFORMS_H
#define HPVM_DIALECT_HPVM_ANALYSIS_ELEMENTWISEFORMS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

namespace mlir::hpvm {

/// Whether `map` is HardSwish of its one f32 input as the ONNX importer writes it:
/// `x * maximumf(minimumf(x * (1/6) + 0.5, 1), 0)` in f32, each op without fast-math flags,
/// the operands of the commutative ones in either order (the runtime's
/// HPVM_RT_TENSOR_HARDSWISH).
bool isHardSwishMap(TensorMapOp map);

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_ANALYSIS_ELEMENTWISEFORMS_H
