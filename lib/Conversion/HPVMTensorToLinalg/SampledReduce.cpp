//===- SampledReduce.cpp - hpvm.tensor.reduce with reduction sampling -----===//
// #hpvm.knob<sample_reduction> as code that skips the work: the loops visit
// the kept elements only, so that a tuner measures what the knob saves.
#include "LowerTensorOps.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// A tensor of `type` filled with `value`.
Value filledWith(OpBuilder &b, Location loc, RankedTensorType type, Value value) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// Folds `elements` into `accumulator`, in order, with copies of the reduce's
/// combiner (a single op: classifyReduceCombiner accepted it).
Value combineInOrder(OpBuilder &b, TensorReduceOp op, Value accumulator,
                     ValueRange elements) {
  Block &block = op.getCombiner().front();
  for (Value element : elements) {
    IRMapping mapping;
    mapping.map(block.getArgument(0), accumulator);
    mapping.map(block.getArgument(1), element);
    for (Operation &inner : block.without_terminator())
      b.clone(inner, mapping);
    accumulator = mapping.lookup(cast<TensorYieldOp>(block.getTerminator()).getValue());
  }
  return accumulator;
}

/// Rates up to this one run as blocks of `rate` elements whose kept positions
/// are operands of one loop body (each pass over the outputs folds rate - 1
/// elements); larger ones as runs of consecutive kept elements, one operand and
/// an inner loop each, which keeps the code small for any rate.
constexpr int64_t kMaxUnrolledRate = 8;
} // namespace

Value mlir::hpvm::lowerSampledReduce(OpBuilder &b, TensorReduceOp op, KnobAttr knob) {
  Location loc = op.getLoc();
  MLIRContext *context = b.getContext();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  unsigned rank = inputType.getRank(), outRank = type.getRank(), axis = op.getAxis();
  // Static shapes (SampledReduceLowering refuses others): what is kept is
  // known here.
  int64_t extent = inputType.getDimSize(axis), rate = knob.getRate(),
          offset = knob.getOffset();
  int64_t skipped = extent > offset ? (extent - offset - 1) / rate + 1 : 0;
  int64_t kept = extent - skipped;
  if (kept == 0)
    return filledWith(b, loc, type, op.getInit());

  // A sum is accumulated from zero, scaled, and then added to init (which an
  // estimate of the full sum must not scale); a maximum or minimum starts from
  // init.
  bool sum = classifyReduceCombiner(op) == ReduceCombiner::sum;
  Value start = sum ? arith::ConstantOp::create(b, loc, element, b.getFloatAttr(element, 0.0))
                          .getResult()
                    : op.getInit();
  Value accumulated = filledWith(b, loc, type, start);
  auto dim = [&](unsigned d) { return b.getAffineDimExpr(d); };
  // The outputs' dimensions among `dims` iteration dimensions whose `skip`
  // dimensions from `axis` on stand for the reduced one.
  auto outputMap = [&](unsigned dims, unsigned skip) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < outRank; ++d)
      exprs.push_back(dim(d < axis ? d : d + skip));
    return AffineMap::get(dims, 0, exprs, context);
  };
  // The input read at `position` along the axis, the other dimensions as above.
  auto inputMap = [&](unsigned dims, unsigned skip, AffineExpr position) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d)
      exprs.push_back(d < axis ? dim(d) : d == axis ? position : dim(d - 1 + skip));
    return AffineMap::get(dims, 0, exprs, context);
  };
  // Folds `reads` (input maps, in order) into the accumulator at each point of
  // an iteration space whose `skip` dimensions from `axis` on (of extents
  // `extents`: reductions) stand for the axis. The strided reads do not give
  // those extents; a shape-only operand does.
  auto fold = [&](ArrayRef<AffineMap> reads, ArrayRef<int64_t> extents) {
    unsigned skip = extents.size(), dims = outRank + skip;
    SmallVector<Value> inputs(reads.size(), op.getInput());
    SmallVector<AffineMap> maps(reads);
    inputs.push_back(tensor::EmptyOp::create(b, loc, extents, element));
    SmallVector<AffineExpr> shapeExprs;
    for (unsigned d = 0; d < skip; ++d)
      shapeExprs.push_back(dim(axis + d));
    maps.push_back(AffineMap::get(dims, 0, shapeExprs, context));
    maps.push_back(outputMap(dims, skip));
    SmallVector<utils::IteratorType> iterators(dims, utils::IteratorType::parallel);
    for (unsigned d = 0; d < skip; ++d)
      iterators[axis + d] = utils::IteratorType::reduction;
    size_t count = reads.size();
    accumulated =
        linalg::GenericOp::create(
            b, loc, TypeRange{type}, inputs, ValueRange{accumulated}, maps, iterators,
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  nb, l, combineInOrder(nb, op, args.back(), args.take_front(count)));
            })
            .getResult(0);
  };

  // The kept positions of the partial last block (small rates only).
  SmallVector<int64_t> tail;
  if (rate <= kMaxUnrolledRate) {
    // Whole blocks: the axis counts blocks, and each kept position p of a
    // block is an operand read at block * rate + p; the skipped one is never
    // loaded.
    int64_t blocks = extent / rate;
    SmallVector<AffineMap> reads;
    for (int64_t position = 0; position < rate; ++position) {
      if (position == offset)
        continue;
      reads.push_back(inputMap(rank, 1, dim(axis) * rate + position));
      if (position < extent % rate)
        tail.push_back(blocks * rate + position);
    }
    if (blocks > 0)
      fold(reads, {blocks});
  } else {
    // Runs of consecutive kept elements: those before the first skipped one,
    // the whole runs of rate - 1 between two skipped ones, then those after
    // the last skipped one. The axis becomes (run, element of the run), read
    // at base + run * stride + element (never a bare dimension, which linalg
    // would take for the whole axis, even for a single run).
    auto foldRuns = [&](int64_t base, int64_t runs, int64_t stride, int64_t length) {
      fold({inputMap(outRank + 2, 2, dim(axis) * stride + dim(axis + 1) + base)},
           {runs, length});
    };
    int64_t before = std::min(offset, extent);
    if (before > 0)
      foldRuns(0, 1, 1, before);
    if (extent > offset) {
      int64_t runs = (extent - offset) / rate, after = offset + 1 + runs * rate;
      if (runs > 0)
        foldRuns(offset + 1, runs, rate, rate - 1);
      if (after < extent)
        foldRuns(after, 1, 1, extent - after);
    }
  }
  if (!sum && tail.empty())
    return accumulated;

  // Per output element, in place: the kept positions of the partial last
  // block, then, for a sum, init + sum * extent / kept.
  SmallVector<AffineMap> maps;
  for (int64_t position : tail)
    maps.push_back(inputMap(outRank, 0, b.getAffineConstantExpr(position)));
  maps.push_back(b.getMultiDimIdentityMap(outRank));
  SmallVector<Value> inputs(tail.size(), op.getInput());
  SmallVector<utils::IteratorType> parallel(outRank, utils::IteratorType::parallel);
  Value init = op.getInit();
  Value scale;
  if (sum && kept != extent)
    scale = arith::ConstantOp::create(b, loc, element,
                                      b.getFloatAttr(element, double(extent) / double(kept)));
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{accumulated}, maps, parallel,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value result = combineInOrder(nb, op, args.back(), args.drop_back());
               if (sum) {
                 if (scale)
                   result = arith::MulFOp::create(nb, l, result, scale);
                 result = arith::AddFOp::create(nb, l, init, result);
               }
               linalg::YieldOp::create(nb, l, result);
             })
      .getResult(0);
}
