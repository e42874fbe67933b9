//===- CollapseElementwise.cpp - Elementwise loops over contiguous runs ---===//
// Drops the unit dimensions of elementwise linalg.generic ops and merges the
// loops that every operand walks contiguously (see CollapseElementwise.h).
#include "CollapseElementwise.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// An all-parallel generic on tensors of static shapes that does not read its
/// loop indices (merged loops would compute them by divisions per element),
/// and whose results go into no slice of a larger tensor (a chunk of images:
/// reshaped, the op would write a buffer of its own, then copied into the
/// slice, instead of the slice itself).
bool isStaticElementwise(linalg::GenericOp generic) {
  if (!generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != generic.getNumParallelLoops() || generic.hasIndexSemantics())
    return false;
  for (Operation *user : generic->getUsers())
    if (isa<tensor::InsertSliceOp>(user))
      return false;
  return llvm::all_of(generic->getOperandTypes(), [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  });
}

/// Maximal runs of consecutive loops that every indexing map keeps
/// contiguous, of two loops or more.
SmallVector<ReassociationIndices> contiguousRuns(linalg::GenericOp generic) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run;
  auto close = [&] {
    if (run.size() > 1)
      runs.push_back(run);
    run.clear();
  };
  for (int64_t loop = 0, e = generic.getNumLoops(); loop < e; ++loop) {
    ReassociationIndices longer = run;
    longer.push_back(loop);
    if (!run.empty() && !linalg::areDimSequencesPreserved(maps, {longer}))
      close();
    run.push_back(loop);
  }
  close();
  return runs;
}

/// One generic: unit dimensions dropped, then contiguous runs merged; the op
/// is left as it was where either step does not apply.
void collapse(linalg::GenericOp generic, IRRewriter &rewriter) {
  if (llvm::any_of(generic.getStaticLoopRanges(), [](int64_t size) { return size == 1; })) {
    linalg::ControlDropUnitDims options;
    rewriter.setInsertionPoint(generic);
    FailureOr<linalg::DropUnitDimsResult> dropped =
        linalg::dropUnitDims(rewriter, generic, options);
    if (succeeded(dropped)) {
      rewriter.replaceOp(generic, dropped->replacements);
      generic = dyn_cast<linalg::GenericOp>(dropped->resultOp.getOperation());
      if (!generic)
        return;
    }
  }
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return;
  SmallVector<ReassociationIndices> runs = contiguousRuns(generic);
  if (runs.empty())
    return;
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(generic, runs, rewriter);
  if (succeeded(collapsed))
    rewriter.replaceOp(generic, collapsed->results);
}
} // namespace

void mlir::hpvm::collapseElementwiseLoops(ArrayRef<Operation *> leaves) {
  for (Operation *leaf : leaves) {
    SmallVector<linalg::GenericOp> generics;
    leaf->walk([&](linalg::GenericOp generic) {
      if (isStaticElementwise(generic))
        generics.push_back(generic);
    });
    if (generics.empty())
      continue;
    IRRewriter rewriter(leaf->getContext());
    for (linalg::GenericOp generic : generics)
      collapse(generic, rewriter);
    // The reshapes each op put around itself compose with its neighbours'
    // (a fused chain's collapse of an expand is the value itself): the buffer
    // an op writes is then one allocation, returned through one view.
    SmallVector<Operation *> reshapes;
    leaf->walk([&](Operation *op) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
        reshapes.push_back(op);
    });
    RewritePatternSet patterns(leaf->getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, leaf->getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, leaf->getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // Not folded: a reshaped constant would be a second copy of its data.
    config.enableFolding(false);
    config.enableConstantCSE(false);
    (void)applyOpPatternsGreedily(reshapes, FrozenRewritePatternSet(std::move(patterns)),
                                  config);
  }
}
