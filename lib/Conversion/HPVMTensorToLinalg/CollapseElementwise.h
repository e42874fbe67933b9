//===- CollapseElementwise.h - Elementwise loops over contiguous runs -----===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_COLLAPSEELEMENTWISE_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_COLLAPSEELEMENTWISE_H

#include "mlir/IR/Operation.h"

namespace mlir::hpvm {

/// In `leaves` (on tensors, after their elementwise ops are fused), every
/// elementwise linalg.generic of static shapes drops its unit dimensions and
/// then merges the loops that every operand walks contiguously: a 1x144x28x28
/// product with a per-channel 1x144x1x1 factor becomes 144 loops of 784
/// elements instead of 144 x 28 loops of 28 (which the C compiler unrolled
/// whole and vectorized across rows, with gathers). Each element is computed
/// by the same operations, so the results are the same bits.
void collapseElementwiseLoops(ArrayRef<Operation *> leaves);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_COLLAPSEELEMENTWISE_H
