//===- Contraction.h - Reduction leaves as one packed contraction ---------===//
// The contraction half of hpvm-vectorize: an imported-C leaf
// replicated in x and y whose instances each fold a loop of products,
//   acc = init; for (kk = 0; kk < n; ++kk) acc = acc + P[.., kk] * Q[.., kk];
// with one operand indexed by the y instance and kk only and the other by the
// x instance and kk only (a matrix product), gets
//   * a plan (`@<leaf>__sums_plan`, an llvm.func): given the leaf's inputs and
//     its grid, it checks at run time that every address of the loop is the
//     affine function of (x, y, kk) the analysis derived (no index wraps), and
//     then has the runtime (hpvm_rt_contract_f32) compute every instance's
//     sum into a buffer at once, packed and blocked for the caches, each sum
//     through the same rounded steps in the same order; null when a check
//     fails (the leaf then runs as it is);
//   * a sums variant (`@<leaf>__sums`, a leaf): the leaf with the loop
//     replaced by a load of its instance's sum from that buffer (two more
//     inputs: the buffer and its row length).
#ifndef HPVM_LIB_CONVERSION_HPVMTOVECTOR_CONTRACTION_H
#define HPVM_LIB_CONVERSION_HPVMTOVECTOR_CONTRACTION_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

namespace mlir::hpvm {

struct ContractionVariant {
  /// Null when the leaf is no contraction: `reason` says why.
  LeafOp sums;
  LLVM::LLVMFuncOp plan;
  std::string reason;
};

/// Builds the plan and the sums variant of `leaf` (both inserted after it)
/// when its body is a contraction; `symbols` (the module's) names them.
ContractionVariant buildContraction(LeafOp leaf, SymbolTable &symbols);

} // namespace mlir::hpvm

#endif // HPVM_LIB_CONVERSION_HPVMTOVECTOR_CONTRACTION_H
