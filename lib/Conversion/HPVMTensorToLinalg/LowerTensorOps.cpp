//===- LowerTensorOps.cpp - hpvm.tensor.* to linalg on tensors ------------===//
// One lowering per tensor op: named linalg ops where upstream has them
// (matmul, conv_2d_nchw_fchw), linalg.generic elsewhere; each a rewrite
// pattern (populateHPVMTensorToLinalgPatterns).
#include "LowerTensorOps.h"
#include "KernelCalls.h"

#include "HPVM/Conversion/HPVMTensorToLinalg.h"
#include "HPVM/Conversion/TensorScalars.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::hpvm;

namespace {
using BodyBuilder = function_ref<void(OpBuilder &, Location, ValueRange)>;

using scalars::floatConstant;

/// exp(x), marked as the lowering's own (kLoweredExpAttr).
Value loweredExp(OpBuilder &b, Location loc, Value x) {
  return scalars::exp(b, loc, x, /*marked=*/true);
}

/// A tensor of `type` filled with `value`.
Value filled(OpBuilder &b, Location loc, RankedTensorType type, Value value) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// A linalg.generic computing `resultType` from `inputs`.
Value generic(OpBuilder &b, Location loc, RankedTensorType resultType,
              Value init, ValueRange inputs, ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iterators, BodyBuilder body) {
  return linalg::GenericOp::create(b, loc, TypeRange{resultType}, inputs,
                                   ValueRange{init}, maps, iterators, body)
      .getResult(0);
}

/// `input` with `before[i]` elements of `padValue` added before and
/// `after[i]` after dimension 2 + i (H and W of NCHW); the input itself
/// without padding.
/// A generic reads the input at clamped indices and selects the pad value
/// outside it, so the buffers need no strided copies (which would call a
/// runtime library on the CPU).
Value padImage(OpBuilder &b, Location loc, Value input,
               ArrayRef<int64_t> before, ArrayRef<int64_t> after,
               Value padValue) {
  if (llvm::all_of(before, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(after, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[2] += before[0] + after[0];
  shape[3] += before[1] + after[1];
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  return generic(
      b, loc, paddedType, empty, ValueRange{}, {b.getMultiDimIdentityMap(4)},
      parallel, [&](OpBuilder &nb, Location l, ValueRange) {
        auto index = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        SmallVector<Value> indices = {linalg::IndexOp::create(nb, l, 0),
                                      linalg::IndexOp::create(nb, l, 1)};
        Value inside;
        for (unsigned d = 2; d < 4; ++d) {
          Value position = arith::SubIOp::create(
              nb, l, linalg::IndexOp::create(nb, l, d), index(before[d - 2]));
          Value zero = index(0), last = index(type.getDimSize(d) - 1);
          Value low = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                            position, zero);
          Value high = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                             position, last);
          Value valid = arith::AndIOp::create(nb, l, low, high);
          inside = inside
                       ? arith::AndIOp::create(nb, l, inside, valid).getResult()
                       : valid;
          indices.push_back(arith::MinSIOp::create(
              nb, l, arith::MaxSIOp::create(nb, l, position, zero), last));
        }
        Value element = tensor::ExtractOp::create(nb, l, input, indices);
        linalg::YieldOp::create(
            nb, l,
            arith::SelectOp::create(nb, l, inside, element, padValue)
                .getResult());
      });
}

/// An elementwise function of one tensor.
Value elementwise(OpBuilder &b, Location loc, Value input,
                  function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto type = cast<RankedTensorType>(input.getType());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return generic(b, loc, type, init, input, {id, id}, iterators,
                 [&](OpBuilder &nb, Location l, ValueRange args) {
                   linalg::YieldOp::create(nb, l, fn(nb, l, args[0]));
                 });
}

/// The map reading `operand` (broadcast along its size-1 dimensions) inside
/// an iteration over `resultType`.
AffineMap broadcastMap(OpBuilder &b, RankedTensorType operand,
                       RankedTensorType resultType) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    exprs.push_back(operand.getDimSize(d) == 1 && resultType.getDimSize(d) != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(d));
  return AffineMap::get(resultType.getRank(), 0, exprs, b.getContext());
}

/// The map of a tensor with dimension `axis` of an iteration dropped.
AffineMap dropDimMap(OpBuilder &b, unsigned rank, unsigned axis) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (d != axis)
      exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

SmallVector<int64_t> getInts(ArrayAttr attr) {
  SmallVector<int64_t> values;
  for (Attribute a : attr)
    values.push_back(cast<IntegerAttr>(a).getInt());
  return values;
}

Value lowerAdd(OpBuilder &b, TensorAddOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return generic(
      b, loc, type, init, {op.getLhs(), op.getRhs()},
      {broadcastMap(b, lhs, type), broadcastMap(b, rhs, type),
       b.getMultiDimIdentityMap(type.getRank())},
      iterators, [](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, args[0], args[1]).getResult());
      });
}

Value lowerMul(OpBuilder &b, TensorMulOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Value zero = floatConstant(b, loc, type.getElementType(), 0.0);
  Value init = filled(b, loc, type, zero);
  if (type.getRank() == 2)
    return linalg::MatmulOp::create(b, loc, TypeRange{type},
                                    ValueRange{op.getLhs(), op.getRhs()},
                                    ValueRange{init})
        .getResult(0);
  // Batches: dims (batch..., m, n, k).
  unsigned rank = type.getRank(), batch = rank - 2;
  auto dim = [&](unsigned d) { return b.getAffineDimExpr(d); };
  SmallVector<AffineExpr> lhs, rhs, out;
  for (unsigned d = 0; d < batch; ++d) {
    lhs.push_back(dim(d));
    rhs.push_back(dim(d));
    out.push_back(dim(d));
  }
  lhs.append({dim(batch), dim(batch + 2)});
  rhs.append({dim(batch + 2), dim(batch + 1)});
  out.append({dim(batch), dim(batch + 1)});
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  MLIRContext *ctx = b.getContext();
  return generic(
      b, loc, type, init, {op.getLhs(), op.getRhs()},
      {AffineMap::get(rank + 1, 0, lhs, ctx),
       AffineMap::get(rank + 1, 0, rhs, ctx),
       AffineMap::get(rank + 1, 0, out, ctx)},
      iterators, [](OpBuilder &nb, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(nb, l, args[0], args[1]);
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, args[2], product).getResult());
      });
}

/// A convolution with groups > 1 (depthwise when each group has one input
/// channel): a generic over (n, f, oh, ow, c, kh, kw) that reads input channel
/// (f / filtersPerGroup) * channelsPerGroup + c; upstream has no named NCHW
/// grouped convolution with an FCHW filter.
Value groupedConv(OpBuilder &b, Location loc, RankedTensorType type, Value input,
                  Value filter, Value init, ArrayRef<int64_t> strides,
                  int64_t groups) {
  auto filterType = cast<RankedTensorType>(filter.getType());
  int64_t channelsPerGroup = filterType.getDimSize(1);
  int64_t filtersPerGroup = type.getDimSize(1) / groups;
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  MLIRContext *ctx = b.getContext();
  AffineMap inputMap = AffineMap::get(
      7, 0,
      {d(0), d(1).floorDiv(filtersPerGroup) * channelsPerGroup + d(4),
       d(2) * strides[0] + d(5), d(3) * strides[1] + d(6)},
      ctx);
  AffineMap filterMap = AffineMap::get(7, 0, {d(1), d(4), d(5), d(6)}, ctx);
  AffineMap outMap = AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  return generic(b, loc, type, init, {input, filter},
                 {inputMap, filterMap, outMap}, iterators,
                 [](OpBuilder &nb, Location l, ValueRange args) {
                   Value product =
                       arith::MulFOp::create(nb, l, args[0], args[1]);
                   linalg::YieldOp::create(
                       nb, l,
                       arith::AddFOp::create(nb, l, args[2], product)
                           .getResult());
                 });
}

/// The NCHW image of `value`: itself, or (rank 5, its channels in blocks
/// [N, C / B, H, W, B]) a transpose to [N, C / B, B, H, W] collapsed.
Value unblocked(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 5)
    return value;
  ArrayRef<int64_t> s = type.getShape();
  Value init = tensor::EmptyOp::create(b, loc, {s[0], s[1], s[4], s[2], s[3]},
                                       type.getElementType());
  Value moved =
      linalg::TransposeOp::create(b, loc, value, init, {0, 1, 4, 2, 3}).getResult()[0];
  auto nchw = RankedTensorType::get({s[0], s[1] * s[4], s[2], s[3]},
                                    type.getElementType());
  return tensor::CollapseShapeOp::create(
      b, loc, nchw, moved,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// The NCHW image `value` with its channels in blocks of `block`: expanded
/// to [N, C / B, B, H, W], then transposed to [N, C / B, H, W, B].
Value blockedImage(OpBuilder &b, Location loc, Value value, int64_t block) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> s = type.getShape();
  auto expandedType = RankedTensorType::get({s[0], s[1] / block, block, s[2], s[3]},
                                            type.getElementType());
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, expandedType, value,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  Value init = tensor::EmptyOp::create(b, loc, {s[0], s[1] / block, s[2], s[3], block},
                                       type.getElementType());
  return linalg::TransposeOp::create(b, loc, expanded, init, {0, 1, 3, 4, 2})
      .getResult()[0];
}

Value lowerToBlocked(OpBuilder &b, TensorToBlockedOp op) {
  return blockedImage(b, op.getLoc(), op.getInput(), op.getBlock());
}

Value lowerFromBlocked(OpBuilder &b, TensorFromBlockedOp op) {
  return unblocked(b, op.getLoc(), op.getInput());
}

/// `type` as an NCHW image (a rank-5 type's channels out of their blocks).
RankedTensorType unblockedType(RankedTensorType type) {
  if (type.getRank() != 5)
    return type;
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[1] * s[4], s[2], s[3]}, type.getElementType());
}

/// The NCHW result `nchw` of an op whose result type is `type`: in blocks
/// where `type` has them.
Value reblocked(OpBuilder &b, Location loc, Value nchw, RankedTensorType type) {
  return type.getRank() == 5 ? blockedImage(b, loc, nchw, type.getDimSize(4)) : nchw;
}

/// Blocked operands and results are unblocked around the NCHW lowering (the
/// CPU's kernels read and write them directly: KernelCalls.cpp).
Value lowerConv(OpBuilder &b, TensorConv2DOp op) {
  Location loc = op.getLoc();
  auto blockedType = cast<RankedTensorType>(op.getType());
  auto type = unblockedType(blockedType);
  SmallVector<int64_t> padding = getInts(op.getPadding());
  SmallVector<int64_t> strides = getInts(op.getStrides());
  Value zero = floatConstant(b, loc, type.getElementType(), 0.0);
  Value input =
      padImage(b, loc, unblocked(b, loc, op.getInput()), padding, padding, zero);
  Value init = filled(b, loc, type, zero);
  if (op.getGroups() != 1)
    return reblocked(b, loc,
                     groupedConv(b, loc, type, input, op.getFilter(), init, strides,
                                 op.getGroups()),
                     blockedType);
  Value result = linalg::Conv2DNchwFchwOp::create(
                     b, loc, TypeRange{type}, ValueRange{input, op.getFilter()},
                     ValueRange{init}, b.getI64TensorAttr(strides),
                     b.getI64TensorAttr({1, 1}))
                     .getResult(0);
  return reblocked(b, loc, result, blockedType);
}

Value lowerPool(OpBuilder &b, TensorPoolOp op) {
  Location loc = op.getLoc();
  auto blockedType = cast<RankedTensorType>(op.getType());
  auto type = unblockedType(blockedType);
  Type element = type.getElementType();
  SmallVector<int64_t> window = getInts(op.getWindow());
  SmallVector<int64_t> strides = getInts(op.getStrides());
  SmallVector<int64_t> padding = getInts(op.getPadding());
  auto floatType = cast<FloatType>(element);
  double identity = scalars::poolIdentity(op.getKind());
  Value start = arith::ConstantOp::create(b, loc, element,
                                          b.getFloatAttr(floatType, identity));
  // Padding never wins a max or min; a mean counts padded elements (the
  // divisor is always the window size).
  Value input = padImage(b, loc, unblocked(b, loc, op.getInput()), padding,
                         op.getEndPadding(), start);
  Value init = filled(b, loc, type, start);
  Value windowShape = tensor::EmptyOp::create(b, loc, window, element);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  MLIRContext *ctx = b.getContext();
  // Dims: n, c, oh, ow, kh, kw.
  AffineMap inputMap = AffineMap::get(
      6, 0, {d(0), d(1), d(2) * strides[0] + d(4), d(3) * strides[1] + d(5)},
      ctx);
  AffineMap windowMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
  AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  PoolKind kind = op.getKind();
  Value reduced = generic(
      b, loc, type, init, {input, windowShape}, {inputMap, windowMap, outMap},
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value result = scalars::poolCombine(nb, l, kind, args[2], args[0]);
        linalg::YieldOp::create(nb, l, result);
      });
  if (kind != PoolKind::mean)
    return reblocked(b, loc, reduced, blockedType);
  Value count = floatConstant(b, loc, element, double(window[0] * window[1]));
  Value mean = elementwise(b, loc, reduced, [&](OpBuilder &nb, Location l, Value x) {
    return arith::DivFOp::create(nb, l, x, count).getResult();
  });
  return reblocked(b, loc, mean, blockedType);
}

template <typename ActivationOp>
Value lowerActivation(OpBuilder &b, ActivationOp op) {
  return elementwise(b, op->getLoc(), op->getOperand(0),
                     [&](OpBuilder &nb, Location l, Value x) -> Value {
                       return scalars::activation(nb, l, op, x,
                                                  /*markedExp=*/true);
                     });
}

/// Reduces `input` along `axis` into a tensor without that dimension,
/// starting from `start` and combining with `combine(accumulator, element)`.
Value reduceAxis(
    OpBuilder &b, Location loc, Value input, unsigned axis, Value start,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (unsigned d = 0; d < type.getRank(); ++d)
    if (d != axis)
      shape.push_back(type.getDimSize(d));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init = filled(b, loc, resultType, start);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  return generic(b, loc, resultType, init, input,
                 {b.getMultiDimIdentityMap(type.getRank()),
                  dropDimMap(b, type.getRank(), axis)},
                 iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
                   linalg::YieldOp::create(nb, l,
                                           combine(nb, l, args[1], args[0]));
                 });
}

/// Reduces `input` along its last axis as reduceAxis does, each row's elements
/// combined in the same order, but with the rows of the dimension before the
/// axis innermost: the loops run over the outer dimensions, then the axis,
/// then those rows, so that the rows' accumulations are independent chains
/// side by side (a row's own chain, in order, waits on each add's latency and
/// does not vectorize). Null unless the input has rank >= 3, and outer
/// dimensions of at least 2 elements for the pool to split.
Value reduceLastAxisInterleaved(
    OpBuilder &b, Location loc, Value input, Value start,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  if (rank < 3)
    return {};
  int64_t outer = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    outer *= type.getDimSize(d);
  if (outer < 2)
    return {};
  // Loop i[rank - 2] is the axis, loop i[rank - 1] the rows before it.
  SmallVector<AffineExpr> read, write;
  for (unsigned d = 0; d + 2 < rank; ++d) {
    read.push_back(b.getAffineDimExpr(d));
    write.push_back(b.getAffineDimExpr(d));
  }
  read.push_back(b.getAffineDimExpr(rank - 1));
  read.push_back(b.getAffineDimExpr(rank - 2));
  write.push_back(b.getAffineDimExpr(rank - 1));
  SmallVector<int64_t> shape(type.getShape().drop_back());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init = filled(b, loc, resultType, start);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators[rank - 2] = utils::IteratorType::reduction;
  MLIRContext *ctx = b.getContext();
  return generic(b, loc, resultType, init, input,
                 {AffineMap::get(rank, 0, read, ctx), AffineMap::get(rank, 0, write, ctx)},
                 iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
                   linalg::YieldOp::create(nb, l, combine(nb, l, args[1], args[0]));
                 });
}

/// reduceLastAxisInterleaved where it applies (`axis` the last), else
/// reduceAxis: the same values either way.
Value reduceRows(OpBuilder &b, Location loc, Value input, unsigned axis, Value start,
                 function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  if (axis + 1 == cast<RankedTensorType>(input.getType()).getRank())
    if (Value reduced = reduceLastAxisInterleaved(b, loc, input, start, combine))
      return reduced;
  return reduceAxis(b, loc, input, axis, start, combine);
}

/// exp(x - max) / sum(exp(x - max)) along the axis.
Value lowerSoftmax(OpBuilder &b, TensorSoftmaxOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  unsigned rank = type.getRank(), axis = op.getAxis();
  Value lowest = arith::ConstantOp::create(
      b, loc, element,
      b.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
  Value max =
      reduceRows(b, loc, op.getInput(), axis, lowest,
                 [](OpBuilder &nb, Location l, Value acc, Value x) {
                   return arith::MaximumFOp::create(nb, l, acc, x).getResult();
                 });
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap reducedMap = dropDimMap(b, rank, axis);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  Value exps =
      generic(b, loc, type, empty, {op.getInput(), max}, {id, reducedMap, id},
              parallel, [](OpBuilder &nb, Location l, ValueRange args) {
                Value shifted = arith::SubFOp::create(nb, l, args[0], args[1]);
                linalg::YieldOp::create(
                    nb, l, loweredExp(nb, l, shifted));
              });
  Value zero = floatConstant(b, loc, element, 0.0);
  Value sums =
      reduceRows(b, loc, exps, axis, zero,
                 [](OpBuilder &nb, Location l, Value acc, Value x) {
                   return arith::AddFOp::create(nb, l, acc, x).getResult();
                 });
  Value empty2 = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  return generic(
      b, loc, type, empty2, {exps, sums}, {id, reducedMap, id}, parallel,
      [](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l, arith::DivFOp::create(nb, l, args[0], args[1]).getResult());
      });
}

/// A per-channel parameter ([C] or [1, C, 1, 1]) as [C / block, block], the
/// channels of an image in blocks.
Value channelsInBlocks(OpBuilder &b, Location loc, Value parameter, int64_t block) {
  auto type = cast<RankedTensorType>(parameter.getType());
  if (type.getRank() != 1) {
    auto flat = RankedTensorType::get({type.getNumElements()}, type.getElementType());
    parameter = tensor::CollapseShapeOp::create(
        b, loc, flat, parameter, SmallVector<ReassociationIndices>{{0, 1, 2, 3}});
  }
  int64_t channels = cast<RankedTensorType>(parameter.getType()).getDimSize(0);
  auto blocks =
      RankedTensorType::get({channels / block, block}, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, blocks, parameter,
                                       SmallVector<ReassociationIndices>{{0, 1}});
}

/// gamma * (x - mean) / sqrt(variance + epsilon) + beta per channel, on an
/// NCHW image or one with its channels in blocks (each parameter then read
/// as [C / B, B] at (block, lane)).
Value lowerBatchNorm(OpBuilder &b, TensorBatchNormOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  auto channelMap = [&](Value parameter) {
    auto parameterType = cast<RankedTensorType>(parameter.getType());
    if (rank == 5)
      return AffineMap::get(5, 0, {b.getAffineDimExpr(1), b.getAffineDimExpr(4)}, ctx);
    if (parameterType.getRank() == 1)
      return AffineMap::get(4, 0, {b.getAffineDimExpr(1)}, ctx);
    return broadcastMap(b, parameterType, type);
  };
  auto read = [&](Value parameter) {
    return rank == 5 ? channelsInBlocks(b, loc, parameter, type.getDimSize(4)) : parameter;
  };
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  Value epsilon =
      floatConstant(b, loc, element, op.getEpsilon().convertToDouble());
  // sqrt(variance + epsilon) once per channel (the same correctly rounded
  // value the element loop would compute for each element).
  auto varianceType = cast<RankedTensorType>(op.getVariance().getType());
  AffineMap perChannel = b.getMultiDimIdentityMap(varianceType.getRank());
  Value deviation = generic(
      b, loc, varianceType,
      tensor::EmptyOp::create(b, loc, varianceType.getShape(), element),
      {op.getVariance()}, {perChannel, perChannel},
      SmallVector<utils::IteratorType>(varianceType.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l,
            math::SqrtOp::create(nb, l, arith::AddFOp::create(nb, l, args[0], epsilon))
                .getResult());
      });
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  return generic(
      b, loc, type, empty,
      {op.getInput(), read(op.getGamma()), read(op.getBeta()), read(op.getMean()),
       read(deviation)},
      {id, channelMap(op.getGamma()), channelMap(op.getBeta()),
       channelMap(op.getMean()), channelMap(op.getVariance()), id},
      parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value centered = arith::SubFOp::create(nb, l, args[0], args[3]);
        Value scaled = arith::MulFOp::create(
            nb, l, args[1], arith::DivFOp::create(nb, l, centered, args[4]));
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, scaled, args[2]).getResult());
      });
}

/// Clones the single block of `region` with its arguments bound to `args`;
/// the value of its `hpvm.tensor.yield` is yielded by linalg.
void cloneElementBody(OpBuilder &b, Location loc, Region &region,
                      ValueRange args) {
  IRMapping mapping;
  Block &block = region.front();
  for (auto [from, to] : llvm::zip(block.getArguments(), args))
    mapping.map(from, to);
  for (Operation &inner : block) {
    if (auto yield = dyn_cast<TensorYieldOp>(inner)) {
      linalg::YieldOp::create(b, loc,
                              mapping.lookupOrDefault(yield.getValue()));
      continue;
    }
    b.clone(inner, mapping);
  }
}

Value lowerMap(OpBuilder &b, TensorMapOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(op.getInputs().size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return generic(b, loc, type, empty, op.getInputs(), maps, parallel,
                 [&](OpBuilder &nb, Location l, ValueRange args) {
                   cloneElementBody(nb, l, op.getMapper(),
                                    args.take_front(op.getInputs().size()));
                 });
}

Value lowerReduce(OpBuilder &b, TensorReduceOp op) {
  Location loc = op.getLoc();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  unsigned rank = inputType.getRank(), axis = op.getAxis();
  Value init = filled(b, loc, type, op.getInit());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  return generic(
      b, loc, type, init, op.getInput(),
      {b.getMultiDimIdentityMap(rank), dropDimMap(b, rank, axis)}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        // The combiner takes (accumulator, element).
        cloneElementBody(nb, l, op.getCombiner(), {args[1], args[0]});
      });
}

/// The lowering `lower` of one tensor op as a pattern: it replaces the op by
/// the value `lower` computes. It refuses dynamic shapes and, as the knobs
/// other than reduction sampling are the kernels' (KernelCalls.cpp), an op
/// with a knob.
template <typename OpTy, Value (*lower)(OpBuilder &, OpTy)>
struct LinalgLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "dynamically shaped tensors");
    if (op->hasAttr(HPVMDialect::getKnobAttrName()))
      return rewriter.notifyMatchFailure(op, "a knob needs the kernels");
    rewriter.replaceOp(op, lower(rewriter, op));
    return success();
  }
};

/// A reduction with a sample_reduction knob (SampledReduce.cpp).
struct SampledReduceLowering : OpRewritePattern<TensorReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TensorReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
    if (!knob || !hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "no knob, or dynamic shapes");
    rewriter.replaceOp(op, lowerSampledReduce(rewriter, op, knob));
    return success();
  }
};
} // namespace

bool mlir::hpvm::hasStaticShapes(Operation *op) {
  return llvm::all_of(
      llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()),
      [](Type type) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        return !tensor || tensor.hasStaticShape();
      });
}

void mlir::hpvm::populateHPVMTensorToLinalgPatterns(RewritePatternSet &patterns,
                                                    bool useKernels) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LinalgLowering<TensorAddOp, lowerAdd>,
               LinalgLowering<TensorMulOp, lowerMul>,
               LinalgLowering<TensorConv2DOp, lowerConv>,
               LinalgLowering<TensorPoolOp, lowerPool>,
               LinalgLowering<TensorToBlockedOp, lowerToBlocked>,
               LinalgLowering<TensorFromBlockedOp, lowerFromBlocked>,
               LinalgLowering<TensorReluOp, lowerActivation<TensorReluOp>>,
               LinalgLowering<TensorClippedReluOp,
                              lowerActivation<TensorClippedReluOp>>,
               LinalgLowering<TensorTanhOp, lowerActivation<TensorTanhOp>>,
               LinalgLowering<TensorSigmoidOp, lowerActivation<TensorSigmoidOp>>,
               LinalgLowering<TensorSoftmaxOp, lowerSoftmax>,
               LinalgLowering<TensorBatchNormOp, lowerBatchNorm>,
               LinalgLowering<TensorMapOp, lowerMap>,
               LinalgLowering<TensorReduceOp, lowerReduce>,
               SampledReduceLowering>(context);
  if (useKernels)
    populateKernelCallPatterns(patterns, /*benefit=*/2);
}

void mlir::hpvm::configureHPVMTensorToLinalgTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                         linalg::LinalgDialect, LLVM::LLVMDialect,
                         math::MathDialect, memref::MemRefDialect,
                         tensor::TensorDialect>();
  target.addIllegalOp<TensorAddOp, TensorMulOp, TensorConv2DOp, TensorPoolOp,
                      TensorToBlockedOp, TensorFromBlockedOp, TensorReluOp, TensorClippedReluOp, TensorTanhOp,
                      TensorSigmoidOp, TensorSoftmaxOp, TensorBatchNormOp,
                      TensorMapOp, TensorReduceOp>();
}

InFlightDiagnostic mlir::hpvm::emitUnloweredTensorOpError(Operation *op,
                                                          bool useKernels) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && !tensor.hasStaticShape())
      return op->emitOpError()
             << "on dynamically shaped tensors is not supported by "
                "convert-hpvm-tensor-to-linalg yet (expected static shapes, "
                "found "
             << type << ")";
  // The convolution and precision knobs are implemented by the runtime's
  // kernels only; reduction sampling by SampledReduceLowering.
  if (auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName()))
    return op->emitOpError()
           << "with " << knob
           << " needs the runtime's kernels (f32 operands, "
              "convert-hpvm-tensor-to-linalg kernels=true); found "
           << (useKernels ? "non-f32 operands" : "kernels=false");
  return op->emitOpError()
         << "is not supported by convert-hpvm-tensor-to-linalg yet";
}
