//===- ContractionMatch.h - The loop of products a leaf sums --------------===//
// The matching half of hpvm-vectorize's contraction analysis. The loop must
// have the shape clang gives a counted loop at -O1 and above (rotated,
// guarded, one block, not unrolled: hpvm-cc asks the frontend not to unroll
// loops of run-time trip counts):
//
//   G:  ... cond_br %guard, P, E(%init)
//   P:  (pure ops) br L(0, %init)            (P may be absent: G -> L)
//   L(%kk, %acc):
//       %a = load (base_a + affine(x, y, kk)); %b = load (base_b + ...)
//       %acc2 = fmuladd(%a, %b, %acc)         (or fma, or fadd(acc, fmul))
//       %kk2 = add %kk, 1
//       cond_br (icmp eq %kk2, %n), E(%acc2), L(%kk2, %acc2)
//   E(%sum): the rest of the leaf
//
// The factors' addresses are affine forms (ContractionForms.h).
#ifndef HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONMATCH_H
#define HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONMATCH_H

#include "ContractionForms.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <string>

namespace mlir::hpvm::contraction {

/// The loop of products a leaf sums, matched against the shape above; after
/// `run` succeeds, the blocks and values the plan and the sums variant need,
/// and the factors' addresses as affine forms.
class Analysis : public AffineForms {
public:
  Analysis(LeafOp leaf) : AffineForms(leaf) {}

  Block *loop = nullptr, *exit = nullptr, *guard = nullptr,
        *preheader = nullptr;
  BlockArgument acc;
  Operation *stepOp = nullptr, *productOp = nullptr; // productOp: the fmul
  LLVM::LoadOp loads[2];
  Value tripCount, guardCondition, init, stepped;
  /// What the loop passes to `exit`.
  SmallVector<Value> exitOperands;
  bool guardTrueEnters = true;
  std::pair<Value, Form> addresses[2];
  std::string reason;

  /// Finds the loop; else false, and `reason` says why.
  bool run();

private:
  bool fail(const Twine &why) {
    reason = why.str();
    return false;
  }
  bool matchLoop(Block *candidate);
  /// The counter, which steps by 1, and the trip count where the loop exits.
  bool matchCounter(LLVM::CondBrOp branch, OperandRange again,
                    bool exitOnTrue);
  /// The sum's step: a multiply-add of two plain loads in the loop.
  bool matchStep(OperandRange again);
  /// Nothing else happens in the loop, and only the sum leaves it (`out`).
  bool matchBody(LLVM::CondBrOp branch, OperandRange out);
  /// The guard (and preheader) that enters the loop.
  bool matchEntry();
  /// The counter starts at 0 and the sum from a constant or an input.
  bool matchStart();
  /// The factors' addresses as affine forms.
  bool matchAddresses();
};

} // namespace mlir::hpvm::contraction

#endif // HPVM_LIB_TRANSFORMS_VECTORIZE_CONTRACTIONMATCH_H
