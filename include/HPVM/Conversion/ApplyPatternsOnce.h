//===- ApplyPatternsOnce.h - one rewrite per op, in order -------*- C++ -*-===//
#ifndef HPVM_CONVERSION_APPLYPATTERNSONCE_H
#define HPVM_CONVERSION_APPLYPATTERNSONCE_H

#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Support/LLVM.h"

namespace mlir::hpvm {

/// Applies to each of `ops`, in the order given, the highest-benefit pattern
/// of `patterns` that matches it, once, with the insertion point before the
/// op. An op erased by an earlier rewrite (a kernel call absorbs the ops after
/// it) is skipped. Unlike the greedy driver, nothing is folded, no dead op is
/// erased and no op is visited twice, so the lowerings stay in program order;
/// unlike the dialect conversion, a failure adds no diagnostic of its own.
/// Calls `onFailure` for an op no pattern rewrote, and stops there when
/// `stopAtFailure`; fails when some op was not rewritten.
LogicalResult applyPatternsOncePerOp(ArrayRef<Operation *> ops,
                                     const FrozenRewritePatternSet &patterns,
                                     function_ref<void(Operation *)> onFailure,
                                     bool stopAtFailure);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_APPLYPATTERNSONCE_H
