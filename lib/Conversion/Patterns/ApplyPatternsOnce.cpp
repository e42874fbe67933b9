//===- ApplyPatternsOnce.cpp - one rewrite per op, in order ---------------===//
#include "HPVM/Conversion/ApplyPatternsOnce.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

LogicalResult mlir::hpvm::applyPatternsOncePerOp(
    ArrayRef<Operation *> ops, const FrozenRewritePatternSet &patterns,
    function_ref<void(Operation *)> onFailure, bool stopAtFailure) {
  if (ops.empty())
    return success();
  // Ops erased so far: compared by address only, never dereferenced.
  struct ErasedOps : RewriterBase::Listener {
    llvm::SmallPtrSet<Operation *, 16> erased;
    void notifyOperationErased(Operation *op) override { erased.insert(op); }
  } listener;
  PatternRewriter rewriter(ops.front()->getContext());
  rewriter.setListener(&listener);
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  bool ok = true;
  for (Operation *op : ops) {
    if (listener.erased.contains(op))
      continue;
    rewriter.setInsertionPoint(op);
    if (succeeded(applicator.matchAndRewrite(op, rewriter)))
      continue;
    onFailure(op);
    ok = false;
    if (stopAtFailure)
      break;
  }
  return success(ok);
}
