//===- TensorElements.cpp - Elements of tensor ops in kernels -------------===//
// One tensor op's element as scalar code over its operands' elements
// (TensorElements.h).
#include "TensorElements.h"

#include "HPVM/Conversion/TensorScalars.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::tensor_kernels {

bool isElementwise(Value value, ElementwiseValues &known) {
  if (auto it = known.find(value); it != known.end())
    return it->second;
  Operation *def = value.getDefiningOp();
  bool elementwise = true;
  if (def && !isa<arith::ConstantOp>(def)) {
    elementwise = isa<TensorAddOp, TensorBatchNormOp, TensorMapOp,
                      tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) ||
                  scalars::isActivation(def);
    for (Value operand : def->getOperands())
      if (elementwise && isa<RankedTensorType>(operand.getType()))
        elementwise = isElementwise(operand, known);
  }
  known[value] = elementwise;
  return elementwise;
}

std::optional<KnobKind> getPrecision(Operation *op) {
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  if (knob && (knob.getKind() == KnobKind::fp16 || knob.getKind() == KnobKind::bf16))
    return knob.getKind();
  return std::nullopt;
}

KnobAttr getSampling(Operation *op, KnobKind kind) {
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  return knob && knob.getKind() == kind ? knob : KnobAttr();
}

TensorMulOp getRoundedProduct(Value value) {
  Operation *def = value.getDefiningOp();
  if (def && scalars::isActivation(def))
    def = def->getOperand(0).getDefiningOp();
  if (auto add = dyn_cast_or_null<TensorAddOp>(def)) {
    auto lhs = add.getLhs().getDefiningOp<TensorMulOp>();
    def = lhs ? lhs.getOperation() : add.getRhs().getDefiningOp();
  }
  auto mul = dyn_cast_or_null<TensorMulOp>(def);
  return mul && getPrecision(mul) ? mul : TensorMulOp();
}

bool isTableConstant(arith::ConstantOp constant) {
  if (!isa<RankedTensorType>(constant.getType()))
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  return !dense || !dense.isSplat();
}

int64_t countKept(int64_t extent, KnobAttr sampling) {
  int64_t rate = sampling.getRate(), offset = sampling.getOffset();
  return extent - (offset < extent ? (extent - offset + rate - 1) / rate : 0);
}

Value ElementEmitter::keptElement(Value kept, KnobAttr sampling) {
  // Each run of rate elements keeps rate - 1: the m-th kept one of a run is
  // element m, or m + 1 from the skipped offset on.
  int64_t rate = sampling.getRate();
  Value run = arith::DivUIOp::create(b, loc, kept, index(rate - 1));
  Value m = arith::RemUIOp::create(b, loc, kept, index(rate - 1));
  Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, m,
                                     index(sampling.getOffset()));
  Value element = addIndex(mulIndex(run, rate), m);
  return addIndex(element, arith::SelectOp::create(b, loc, past, index(1), index(0)));
}

Value ElementEmitter::fold(int64_t count, Value init,
                           function_ref<Value(Value, Value)> step) {
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(count), index(1), ValueRange{init},
      [&](OpBuilder &nested, Location, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, step(iv, carried.front()));
      });
  return loop.getResult(0);
}

Value ElementEmitter::select(Value condition, Value outside,
                             function_ref<Value()> inside) {
  auto branch = scf::IfOp::create(b, loc, TypeRange{outside.getType()},
                                  condition, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  auto fill = [&](Region &region, function_ref<Value()> value) {
    Block &block = region.front();
    if (!block.empty() && block.back().hasTrait<::mlir::OpTrait::IsTerminator>())
      block.back().erase();
    b.setInsertionPointToEnd(&block);
    scf::YieldOp::create(b, loc, value());
  };
  fill(branch.getThenRegion(), inside);
  fill(branch.getElseRegion(), [&] { return outside; });
  return branch.getResult(0);
}

Value ElementEmitter::padded(Value image, ArrayRef<Value> nchw, bool padding,
                             Value outside) {
  if (!padding)
    return emit(image, nchw);
  RankedTensorType type = tensorType(image);
  Value inside = arith::AndIOp::create(
      b, loc, within(nchw[2], type.getDimSize(2)), within(nchw[3], type.getDimSize(3)));
  return select(inside, outside, [&] { return emit(image, nchw); });
}

Value ElementEmitter::within(Value at, int64_t size) {
  Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, at, index(0));
  Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at, index(size));
  return arith::AndIOp::create(b, loc, low, high);
}

SmallVector<Value> ElementEmitter::broadcast(RankedTensorType type,
                                             ValueRange indices) {
  SmallVector<Value> result;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    result.push_back(size == 1 ? index(0) : indices[d]);
  return result;
}

Value ElementEmitter::applyRegion(Region &region, ValueRange arguments) {
  IRMapping mapping;
  Block &block = region.front();
  for (auto [from, to] : llvm::zip(block.getArguments(), arguments))
    mapping.map(from, to);
  for (Operation &op : block) {
    if (auto yield = dyn_cast<TensorYieldOp>(op))
      return mapping.lookup(yield.getValue());
    // Constants from outside the region are copied in (checkScalarRegion).
    for (Value operand : op.getOperands())
      if (!mapping.contains(operand) && operand.getParentRegion() != &region)
        b.clone(*operand.getDefiningOp(), mapping);
    b.clone(op, mapping);
  }
  llvm_unreachable("a map or reduce region ends with hpvm.tensor.yield");
}

Value ElementEmitter::emit(Value value, ValueRange indices) {
  if (Value element = known.lookup(value))
    return element;
  if (Value table = memory.lookupOrNull(value))
    return memref::LoadOp::create(b, loc, table, indices);
  Operation *def = value.getDefiningOp();
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    // A splat (a table constant is in `memory`).
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    return arith::ConstantOp::create(b, loc, dense.getSplatValue<TypedAttr>());
  }
  return llvm::TypeSwitch<Operation *, Value>(def)
      .Case([&](TensorAddOp add) -> Value {
        Value lhs = emit(add.getLhs(), broadcast(tensorType(add.getLhs()), indices));
        Value rhs = emit(add.getRhs(), broadcast(tensorType(add.getRhs()), indices));
        return arith::AddFOp::create(b, loc, lhs, rhs);
      })
      .Case([&](TensorConv2DOp op) { return conv(op, indices); })
      .Case([&](TensorMulOp op) { return mul(op, indices); })
      .Case([&](TensorPoolOp op) { return pool(op, indices); })
      .Case([&](TensorSoftmaxOp op) { return softmax(op, indices); })
      .Case([&](TensorBatchNormOp op) { return batchNorm(op, indices); })
      .Case([&](TensorReduceOp op) { return reduce(op, indices); })
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>([&](Operation *op) {
        return reshape(op->getOperand(0), tensorType(op->getResult(0)), indices);
      })
      .Case([&](TensorMapOp map) {
        SmallVector<Value> elements = llvm::map_to_vector(
            map.getInputs(), [&](Value input) { return emit(input, indices); });
        return applyRegion(map.getMapper(), elements);
      })
      .Default([&](Operation *activation) {
        return scalars::activation(b, loc, activation,
                                   emit(activation->getOperand(0), indices),
                                   /*markedExp=*/false);
      });
}

Value ElementEmitter::conv(TensorConv2DOp op, ValueRange indices) {
  RankedTensorType filter = tensorType(op.getFilter());
  int64_t channels = filter.getDimSize(1), height = filter.getDimSize(2),
          width = filter.getDimSize(3);
  int64_t filtersPerGroup = tensorType(op.getResult()).getDimSize(1) / op.getGroups();
  SmallVector<int64_t> padding = getInts(op.getPadding());
  SmallVector<int64_t> strides = getInts(op.getStrides());
  Value n = indices[0], f = indices[1];
  // Group g = f / filtersPerGroup reads input channels g * channels + c.
  Value firstChannel;
  if (op.getGroups() != 1)
    firstChannel = mulIndex(
        arith::DivUIOp::create(b, loc, f, index(filtersPerGroup)), channels);
  Value zero = scalars::floatConstant(b, loc, filter.getElementType(), 0.0);
  // The term of tap (c, r, s).
  auto term = [&](Value c, Value r, Value s) {
    Value channel = firstChannel ? addIndex(firstChannel, c) : c;
    Value h = windowPosition(indices[2], strides[0], padding[0], r);
    Value w = windowPosition(indices[3], strides[1], padding[1], s);
    Value x = padded(op.getInput(), {n, channel, h, w}, isPadded(padding), zero);
    return std::make_pair(x, emit(op.getFilter(), ValueRange{f, c, r, s}));
  };
  // sample_filter: the taps k = (c * height + r) * width + s with k mod rate
  // = offset are skipped (the loop runs over the kept ones only), the kept
  // weights scaled by rate / (rate - 1).
  if (KnobAttr sampling = getSampling(op, KnobKind::sample_filter)) {
    Value scale = scalars::floatConstant(
        b, loc, filter.getElementType(),
        double(sampling.getRate()) / double(sampling.getRate() - 1));
    int64_t taps = channels * height * width;
    return fold(countKept(taps, sampling), zero, [&](Value kept, Value sum) {
      SmallVector<Value> tap = delinearize(keptElement(kept, sampling),
                                           {channels, height, width});
      auto [x, weight] = term(tap[0], tap[1], tap[2]);
      weight = arith::MulFOp::create(b, loc, weight, scale);
      return arith::AddFOp::create(b, loc, sum,
                                   arith::MulFOp::create(b, loc, x, weight));
    });
  }
  return fold(channels, zero, [&](Value c, Value sum) {
    return fold(height, sum, [&](Value r, Value sum) {
      return fold(width, sum, [&](Value s, Value sum) {
        auto [x, weight] = term(c, r, s);
        return arith::AddFOp::create(b, loc, sum,
                                     arith::MulFOp::create(b, loc, x, weight));
      });
    });
  });
}

Value ElementEmitter::mul(TensorMulOp op, ValueRange indices) {
  // [..., M, K] x [..., K, N]: lhs at (..., i, k), rhs at (..., k, j). A
  // precision knob stores the operands in its format; the sum is f32.
  std::optional<KnobKind> precision = getPrecision(op);
  auto stored = [&](Value x) { return precision ? roundTo(*precision, x) : x; };
  RankedTensorType lhs = tensorType(op.getLhs());
  Value zero = scalars::floatConstant(b, loc, lhs.getElementType(), 0.0);
  Value sum = fold(lhs.getShape().back(), zero, [&](Value k, Value sum) {
    SmallVector<Value> lhsIndices(indices.drop_back());
    lhsIndices.push_back(k);
    SmallVector<Value> rhsIndices(indices.drop_back(2));
    rhsIndices.append({k, indices.back()});
    Value product =
        arith::MulFOp::create(b, loc, stored(emit(op.getLhs(), lhsIndices)),
                              stored(emit(op.getRhs(), rhsIndices)));
    return arith::AddFOp::create(b, loc, sum, product);
  });
  return op == roundedAtStore ? sum : stored(sum);
}

Value ElementEmitter::roundTo(KnobKind format, Value x) {
  auto i32 = b.getI32Type();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  // Round the f32 fraction to `kept` bits, to nearest with ties to even.
  auto roundBits = [&](Value bits, unsigned dropped) -> Value {
    Value lsb = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits, constant(dropped)),
        constant(1));
    Value bias = arith::AddIOp::create(b, loc, constant((1 << (dropped - 1)) - 1), lsb);
    Value sum = arith::AddIOp::create(b, loc, bits, bias);
    return arith::AndIOp::create(b, loc, sum, constant(~((1 << dropped) - 1)));
  };
  if (format == KnobKind::bf16)
    return arith::BitcastOp::create(b, loc, x.getType(), roundBits(bits, 16));
  // fp16: 10 fraction bits in its normal range; below 2^-14 multiples of
  // 2^-24 (its subnormals: adding and taking away 0.5, whose f32 ulp is
  // 2^-24, rounds there); from 65520 (half-way to 2^16) on, infinity.
  Value magnitude = math::AbsFOp::create(b, loc, x);
  Value normal = arith::BitcastOp::create(b, loc, x.getType(), roundBits(bits, 13));
  Value half = scalars::floatConstant(b, loc, x.getType(), 0.5);
  Value tiny = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, magnitude, half), half);
  Value subnormal = math::CopySignOp::create(b, loc, tiny, x);
  Value isSubnormal = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, magnitude,
      scalars::floatConstant(b, loc, x.getType(), 0x1p-14));
  Value rounded = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  Value overflows = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGE, magnitude,
      scalars::floatConstant(b, loc, x.getType(), 65520.0));
  Value infinity = math::CopySignOp::create(
      b, loc,
      scalars::floatConstant(b, loc, x.getType(),
                             std::numeric_limits<double>::infinity()),
      x);
  return arith::SelectOp::create(b, loc, overflows, infinity, rounded);
}

Value ElementEmitter::pool(TensorPoolOp op, ValueRange indices) {
  SmallVector<int64_t> strides = getInts(op.getStrides());
  SmallVector<int64_t> padding = getInts(op.getPadding());
  // A pool padded after the image only (ceil_mode) checks its bounds too.
  bool anyPadding = isPadded(padding) || isPadded(op.getEndPadding());
  return poolWindow(op, [&](Value r, Value s, Value identity) {
    Value h = windowPosition(indices[2], strides[0], padding[0], r);
    Value w = windowPosition(indices[3], strides[1], padding[1], s);
    return padded(op.getInput(), {indices[0], indices[1], h, w}, anyPadding,
                  identity);
  });
}

Value ElementEmitter::poolWindow(
    TensorPoolOp op, function_ref<Value(Value, Value, Value)> tap) {
  Type element = tensorType(op.getResult()).getElementType();
  SmallVector<int64_t> window = getInts(op.getWindow());
  PoolKind kind = op.getKind();
  Value start = scalars::floatConstant(b, loc, element, scalars::poolIdentity(kind));
  Value reduced = fold(window[0], start, [&](Value r, Value acc) {
    return fold(window[1], acc, [&](Value s, Value acc) {
      return scalars::poolCombine(b, loc, kind, acc, tap(r, s, start));
    });
  });
  if (kind != PoolKind::mean)
    return reduced;
  Value count = scalars::floatConstant(b, loc, element, double(window[0] * window[1]));
  return arith::DivFOp::create(b, loc, reduced, count);
}

Value ElementEmitter::softmax(TensorSoftmaxOp op, ValueRange indices) {
  RankedTensorType type = tensorType(op.getResult());
  Type element = type.getElementType();
  unsigned axis = op.getAxis();
  int64_t extent = type.getDimSize(axis);
  SmallVector<Value> along(indices);
  auto elementAt = [&](Value j) {
    along[axis] = j;
    return emit(op.getInput(), along);
  };
  Value lowest = scalars::floatConstant(
      b, loc, element, -std::numeric_limits<double>::infinity());
  Value max = fold(extent, lowest, [&](Value j, Value acc) {
    return arith::MaximumFOp::create(b, loc, acc, elementAt(j));
  });
  auto shiftedExp = [&](Value x) {
    return scalars::exp(b, loc, arith::SubFOp::create(b, loc, x, max),
                        /*marked=*/false);
  };
  Value zero = scalars::floatConstant(b, loc, element, 0.0);
  Value sum = fold(extent, zero, [&](Value j, Value acc) {
    return arith::AddFOp::create(b, loc, acc, shiftedExp(elementAt(j)));
  });
  return arith::DivFOp::create(b, loc, shiftedExp(emit(op.getInput(), indices)),
                               sum);
}

Value ElementEmitter::batchNorm(TensorBatchNormOp op, ValueRange indices) {
  auto parameter = [&](Value tensor) {
    RankedTensorType type = tensorType(tensor);
    if (type.getRank() == 1)
      return emit(tensor, ValueRange{indices[1]});
    return emit(tensor, broadcast(type, indices));
  };
  Type element = tensorType(op.getResult()).getElementType();
  Value epsilon =
      scalars::floatConstant(b, loc, element, op.getEpsilon().convertToDouble());
  Value deviation = math::SqrtOp::create(
      b, loc, arith::AddFOp::create(b, loc, parameter(op.getVariance()), epsilon));
  Value centered = arith::SubFOp::create(b, loc, emit(op.getInput(), indices),
                                         parameter(op.getMean()));
  Value scaled = arith::MulFOp::create(
      b, loc, parameter(op.getGamma()),
      arith::DivFOp::create(b, loc, centered, deviation));
  return arith::AddFOp::create(b, loc, scaled, parameter(op.getBeta()));
}

Value ElementEmitter::reshape(Value source, RankedTensorType type,
                              ValueRange indices) {
  // The row-major position in the result, then the source's indices there.
  Value position = index(0);
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    position = addIndex(mulIndex(position, size), indices[d]);
  return emit(source, delinearize(position, tensorType(source).getShape()));
}

SmallVector<Value> ElementEmitter::delinearize(Value position,
                                               ArrayRef<int64_t> shape) {
  SmallVector<Value> indices(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value size = index(shape[d]);
    indices[d] = arith::RemUIOp::create(b, loc, position, size);
    position = arith::DivUIOp::create(b, loc, position, size);
  }
  return indices;
}

Value ElementEmitter::reduce(TensorReduceOp op, ValueRange indices) {
  unsigned axis = op.getAxis();
  int64_t extent = tensorType(op.getInput()).getDimSize(axis);
  IRMapping mapping;
  Value init = b.clone(*op.getInit().getDefiningOp(), mapping)->getResult(0);
  // sample_reduction: the elements j with j mod rate = offset are skipped; a
  // sum (the verifier allows one addf, or a max or min) is init + (the sum
  // of the kept) * extent / kept, init when nothing is kept.
  KnobAttr sampling = getSampling(op, KnobKind::sample_reduction);
  bool sum = sampling && llvm::any_of(op.getCombiner().front(), [](Operation &inner) {
               return isa<arith::AddFOp>(inner);
             });
  Value start = init;
  if (sum)
    start = scalars::floatConstant(b, loc, init.getType(), 0.0);
  // The loop runs over the kept elements only.
  int64_t count = sampling ? countKept(extent, sampling) : extent;
  Value reduced = fold(count, start, [&](Value j, Value acc) {
    SmallVector<Value> along(indices);
    along.insert(along.begin() + axis, sampling ? keptElement(j, sampling) : j);
    // The combiner takes (accumulator, element).
    return applyRegion(op.getCombiner(), {acc, emit(op.getInput(), along)});
  });
  if (!sum)
    return reduced;
  int64_t kept = countKept(extent, sampling);
  if (kept == 0)
    return init;
  Value scale = scalars::floatConstant(b, loc, init.getType(),
                                       double(extent) / double(kept));
  return arith::AddFOp::create(b, loc, init,
                               arith::MulFOp::create(b, loc, reduced, scale));
}

} // namespace mlir::hpvm::tensor_kernels
