//===- TensorScalars.h - One element of a tensor op, as scalars -*- C++ -*-===//
// The scalar arithmetic of the tensor ops, written once: the CPU lowering
// (convert-hpvm-tensor-to-linalg) builds its linalg bodies from it and the
// device kernels (convert-hpvm-to-gpu's tensor kernels) their element
// expressions, so that both compute the same formula.
#ifndef HPVM_CONVERSION_TENSORSCALARS_H
#define HPVM_CONVERSION_TENSORSCALARS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::hpvm::scalars {

/// A float constant of `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);

/// exp(x); `marked` adds the CPU lowering's kLoweredExpAttr (replaced there by
/// the math dialect's polynomial).
Value exp(OpBuilder &b, Location loc, Value x, bool marked);

/// The activation `op` (relu, clipped_relu, tanh, sigmoid) of one element:
/// max(x, 0); min(max(x, 0), max); 1 - 2 / (exp(2x) + 1), whose limits are
/// exactly ±1 where exp overflows or vanishes; 1 / (1 + exp(-x)).
Value activation(OpBuilder &b, Location loc, Operation *op, Value x,
                 bool markedExp);

/// Whether `op` is one of the activations `activation` computes.
bool isActivation(Operation *op);

/// The value a pooling window starts from (-inf for max, +inf for min, 0 for
/// mean); padding takes it too, so it never wins a max or a min and counts
/// as zero in a mean.
double poolIdentity(PoolKind kind);

/// One step of a pooling window: max, min, or a sum for mean.
Value poolCombine(OpBuilder &b, Location loc, PoolKind kind, Value accumulator,
                  Value element);

} // namespace mlir::hpvm::scalars

#endif // HPVM_CONVERSION_TENSORSCALARS_H
