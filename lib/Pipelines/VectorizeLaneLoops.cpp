//===- VectorizeLaneLoops.cpp - Loops over one vector's lanes --------------===//
// hpvm-vectorize-lane-loops (Passes.td): an innermost loop of 16 iterations
// that walks the last dimension of its buffers (the 16 channels of a block of
// an image in blocks) is marked for the C compiler's loop vectorizer, one
// 512-bit vector of f32 per iteration of the loop around it, and not
// unrolled. Unmarked, LLVM unrolled such a loop whole and vectorized the loop
// around it instead, across positions 16 floats apart: gathers and scatters
// of 8 lanes (a batch normalization in blocks ran 2.3x slower than in NCHW).
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMVECTORIZELANELOOPS
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// Lanes of one 512-bit vector of 32-bit elements: a block of channels.
constexpr int64_t kLanes = 16;

/// Whether the loop from `lower` to `upper` by `step` runs exactly kLanes
/// iterations from 0 by 1.
bool isLaneRange(Value lower, Value upper, Value step) {
  APInt l, u, s;
  return matchPattern(lower, m_ConstantInt(&l)) && matchPattern(upper, m_ConstantInt(&u)) &&
         matchPattern(step, m_ConstantInt(&s)) && l.isZero() && s.isOne() &&
         u.getSExtValue() == kLanes;
}

/// Whether `indices` of an access to a buffer of 32-bit elements use the
/// lane `iv` only as the last index (or not at all), every other index
/// defined outside `body` or another induction variable of its loop (an
/// scf.parallel's).
bool isLaneAccess(ValueRange indices, Type element, Value iv, Block *body) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() != 32)
    return false;
  for (auto [position, index] : llvm::enumerate(indices)) {
    if (index == iv) {
      if (position + 1 != indices.size())
        return false;
      continue;
    }
    if (Operation *def = index.getDefiningOp(); def && def->getBlock() == body)
      return false;
  }
  return true;
}

/// Whether `body`, the body of a loop whose induction variable is `iv`, is
/// elementwise work over the lanes: loads and stores of 32-bit elements
/// along their last dimension, arithmetic and math, nothing with regions or
/// calls.
bool isLaneBody(Block *body, Value iv) {
  bool stores = false;
  for (Operation &op : body->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (!isLaneAccess(load.getIndices(), load.getType(), iv, body))
        return false;
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (!isLaneAccess(store.getIndices(), store.getValueToStore().getType(), iv, body))
        return false;
      stores = true;
    } else if (op.getNumRegions() != 0 ||
               !isa_and_nonnull<arith::ArithDialect, math::MathDialect>(op.getDialect())) {
      return false;
    }
  }
  return stores;
}

/// `#llvm.loop_annotation<vectorize = <disable = false, width = 16>,
/// unroll = <disable = true>>`.
LLVM::LoopAnnotationAttr laneAnnotation(MLIRContext *context) {
  Builder b(context);
  auto vectorize = LLVM::LoopVectorizeAttr::get(
      context, /*disable=*/b.getBoolAttr(false), /*predicateEnable=*/nullptr,
      /*scalableEnable=*/nullptr, /*width=*/b.getI32IntegerAttr(kLanes),
      /*followupVectorized=*/nullptr, /*followupEpilogue=*/nullptr, /*followupAll=*/nullptr);
  auto unroll = LLVM::LoopUnrollAttr::get(
      context, /*disable=*/b.getBoolAttr(true), /*count=*/nullptr, /*runtimeDisable=*/nullptr,
      /*full=*/nullptr, /*followupUnrolled=*/nullptr, /*followupRemainder=*/nullptr,
      /*followupAll=*/nullptr);
  return LLVM::LoopAnnotationAttr::get(
      context, /*disableNonforced=*/nullptr, vectorize, /*interleave=*/nullptr, unroll,
      /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
      /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr,
      /*mustProgress=*/nullptr, /*isVectorized=*/nullptr, /*startLoc=*/nullptr,
      /*endLoc=*/nullptr, /*parallelAccesses=*/{});
}

/// An scf.parallel whose last dimension is a lane loop, as the parallel loop
/// of the other dimensions around an scf.for of that one (the form the
/// annotation goes on); a parallel loop of that dimension alone becomes the
/// scf.for.
void splitLaneDimension(scf::ParallelOp parallel) {
  unsigned last = parallel.getNumLoops() - 1;
  Value iv = parallel.getInductionVars()[last];
  if (parallel.getNumReductions() != 0 ||
      !isLaneRange(parallel.getLowerBound()[last], parallel.getUpperBound()[last],
                   parallel.getStep()[last]) ||
      !isLaneBody(parallel.getBody(), iv))
    return;
  OpBuilder b(parallel);
  Location loc = parallel.getLoc();
  auto build = [&](OpBuilder &inner, Location l, ValueRange outer) {
    auto lanes = scf::ForOp::create(inner, l, parallel.getLowerBound()[last],
                                    parallel.getUpperBound()[last], parallel.getStep()[last]);
    IRMapping mapping;
    ArrayRef<Value> ivs = parallel.getInductionVars();
    for (auto [from, to] : llvm::zip(ivs.drop_back(), outer))
      mapping.map(from, to);
    mapping.map(iv, lanes.getInductionVar());
    OpBuilder body = OpBuilder::atBlockBegin(lanes.getBody());
    for (Operation &op : parallel.getBody()->without_terminator())
      body.clone(op, mapping);
  };
  if (last == 0) {
    build(b, loc, {});
  } else {
    scf::ParallelOp::create(b, loc, parallel.getLowerBound().drop_back(),
                            parallel.getUpperBound().drop_back(),
                            parallel.getStep().drop_back(), build);
  }
  parallel.erase();
}

struct VectorizeLaneLoops
    : public hpvm::impl::HPVMVectorizeLaneLoopsBase<VectorizeLaneLoops> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> parallels;
    getOperation()->walk([&](scf::ParallelOp op) { parallels.push_back(op); });
    for (scf::ParallelOp parallel : parallels)
      splitLaneDimension(parallel);
    LLVM::LoopAnnotationAttr annotation;
    getOperation()->walk([&](scf::ForOp loop) {
      if (loop.getNumRegionIterArgs() != 0 ||
          !isLaneRange(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()) ||
          !isLaneBody(loop.getBody(), loop.getInductionVar()))
        return;
      if (!annotation)
        annotation = laneAnnotation(&getContext());
      loop->setAttr(hpvm::kLoopAnnotationAttrName, annotation);
    });
  }
};

} // namespace
