//===- TensorKernels.cpp - Tensor nodes as device kernels -----------------===//
// One thread per element of a tensor leaf's outputs; each tensor op's element
// is built from its operands' elements where it is needed (TensorKernels.h).
#include "TensorKernels.h"

#include "HPVM/Conversion/TensorScalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::hpvm;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

SmallVector<int64_t> getInts(ArrayAttr attr) {
  return llvm::map_to_vector(
      attr, [](Attribute a) { return cast<IntegerAttr>(a).getInt(); });
}

std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A constant tensor the kernel reads from memory (its weights), rather than
/// a splat it folds into a scalar.
bool isTableConstant(arith::ConstantOp constant) {
  if (!isa<RankedTensorType>(constant.getType()))
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  return !dense || !dense.isSplat();
}

/// What is known of the leaf's values: whether each element costs a few
/// operations (no reduction computes it), each value decided once.
using ElementwiseValues = DenseMap<Value, bool>;

/// Whether each element of `value` (a tensor of the leaf) costs a few
/// operations: no reduction computes it.
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

/// The storage format of a precision knob (fp16, bf16) on `op`, if any.
std::optional<KnobKind> getPrecision(Operation *op) {
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  if (knob && (knob.getKind() == KnobKind::fp16 || knob.getKind() == KnobKind::bf16))
    return knob.getKind();
  return std::nullopt;
}

/// The sampling knob of `kind` on `op`, if any.
KnobAttr getSampling(Operation *op, KnobKind kind) {
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  return knob && knob.getKind() == kind ? knob : KnobAttr();
}

/// The product whose precision knob rounds `value`, a leaf's output: the
/// runtime's kernels round a product's result after the bias add and the
/// activation they absorb, so the kernel does where the output is stored.
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

/// Why the region of a map or reduce has no element form, or "".
std::string checkScalarRegion(Region &region) {
  for (Operation &op : region.front()) {
    if (isa<TensorYieldOp>(op))
      continue;
    Dialect *dialect = op.getDialect();
    if (op.getNumRegions() || !dialect ||
        !isa<arith::ArithDialect, math::MathDialect>(dialect))
      return "its region computes with '" + op.getName().getStringRef().str() +
             "' (arith and math only)";
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (operand.getParentRegion() != &region &&
          !(def && def->hasTrait<::mlir::OpTrait::ConstantLike>()))
        return "its region reads a value defined outside it";
    }
  }
  return "";
}

/// Why the tensor op `op` has no element form in a kernel, or "".
std::string checkTensorOp(Operation *op, ElementwiseValues &known) {
  std::string name = op->getName().getStringRef().str();
  if (auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
      knob && !getPrecision(op) && knob.getKind() != KnobKind::sample_filter &&
      knob.getKind() != KnobKind::sample_reduction)
    return "its '" + name + "' has the approximation knob " +
           stringifyKnobKind(knob.getKind()).str() +
           " (tensor kernels implement the precision and sampling knobs; the "
           "runtime's CPU kernels perforation)";
  auto elementwiseOperands = [&](ValueRange operands) -> std::string {
    for (Value operand : operands)
      if (isa<RankedTensorType>(operand.getType()) && !isElementwise(operand, known))
        return "its '" + name +
               "' reads the result of a reduction (a kernel would compute it "
               "again for every use)";
    return "";
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<TensorConv2DOp, TensorMulOp, TensorSoftmaxOp>(
          [&](Operation *reducing) {
            return elementwiseOperands(reducing->getOperands());
          })
      .Case([&](TensorReduceOp reduce) {
        std::string reason = elementwiseOperands(reduce.getInput());
        Operation *init = reduce.getInit().getDefiningOp();
        if (reason.empty() &&
            !(init && init->hasTrait<::mlir::OpTrait::ConstantLike>()))
          reason = "its 'hpvm.tensor.reduce' starts from a value that is not "
                   "a constant";
        return reason.empty() ? checkScalarRegion(reduce.getCombiner()) : reason;
      })
      .Case([&](TensorPoolOp pool) -> std::string {
        // A pool of a reduction computes an element of it once per window
        // that holds it: per dimension ceil(window / stride), or fewer when
        // there are fewer windows (a global pool: one). At most 4 in all
        // (a 3x3 stride-2 max pool after a convolution: 2.25 on average).
        if (isElementwise(pool.getInput(), known))
          return "";
        SmallVector<int64_t> window = getInts(pool.getWindow());
        SmallVector<int64_t> strides = getInts(pool.getStrides());
        ArrayRef<int64_t> out = tensorType(pool.getResult()).getShape();
        int64_t windows = 1;
        for (unsigned d = 0; d < 2; ++d)
          windows *= std::min<int64_t>(
              llvm::divideCeilSigned(window[d], strides[d]), out[2 + d]);
        if (windows <= 4)
          return "";
        return "its 'hpvm.tensor.pool' reads the result of a reduction in up "
               "to " + std::to_string(windows) +
               " overlapping windows (a kernel would compute it again for "
               "every window; at most 4)";
      })
      .Case([&](TensorMapOp map) { return checkScalarRegion(map.getMapper()); })
      .Case<TensorAddOp, TensorBatchNormOp>([](Operation *) { return ""; })
      .Default([&](Operation *other) -> std::string {
        if (scalars::isActivation(other))
          return "";
        return "it computes with '" + name + "' (no element form on devices)";
      });
}

/// Builds the element of a leaf's tensor values at given indices.
class ElementEmitter {
public:
  /// `memory` maps the leaf's inputs and table constants to the kernel's
  /// memrefs.
  ElementEmitter(OpBuilder &b, Location loc, const IRMapping &memory)
      : b(b), loc(loc), memory(memory) {}

  /// The element of the tensor `value` at `indices`.
  Value emit(Value value, ValueRange indices);
  /// `x` (f32) rounded to `format` (fp16 or bf16, to nearest, ties to even)
  /// and widened back, in f32 integer arithmetic (devices need no half
  /// types): what the runtime's half-precision products store.
  Value roundTo(KnobKind format, Value x);
  /// The product whose result the caller rounds itself (at the store).
  TensorMulOp roundedAtStore;
  /// The row-major indices in `shape` of the element at `position`.
  SmallVector<Value> delinearize(Value position, ArrayRef<int64_t> shape);

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value addIndex(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value mulIndex(Value lhs, int64_t rhs) {
    return rhs == 1 ? lhs : Value(arith::MulIOp::create(b, loc, lhs, index(rhs)));
  }
  /// The input position of tap `tap` of a window at output position `out`
  /// (a convolution's or a pool's), before padding `pad` is taken away.
  Value windowPosition(Value out, int64_t stride, int64_t pad, Value tap) {
    Value position = addIndex(mulIndex(out, stride), tap);
    return pad ? Value(arith::SubIOp::create(b, loc, position, index(pad)))
               : position;
  }
  /// Whether a sampling knob skips element `k` (k mod rate = offset).
  Value isSkipped(Value k, KnobAttr sampling) {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, k, index(sampling.getRate())),
        index(sampling.getOffset()));
  }
  /// Folds `count` steps of `step(i, accumulator)` into `init` (an scf.for).
  Value fold(int64_t count, Value init,
             function_ref<Value(Value, Value)> step);
  /// `inside()` where `condition` holds, else `outside`.
  Value select(Value condition, Value outside, function_ref<Value()> inside);
  /// The element of the NCHW image `image` at (n, c, h, w), which lie
  /// `padding` outside it at most; `outside` there.
  Value padded(Value image, ArrayRef<Value> nchw, ArrayRef<int64_t> padding,
               Value outside);
  /// The indices of an operand of `type` broadcast to the result's indices.
  SmallVector<Value> broadcast(RankedTensorType type, ValueRange indices);
  /// The region of a map or reduce applied to `arguments`.
  Value applyRegion(Region &region, ValueRange arguments);

  Value conv(TensorConv2DOp op, ValueRange indices);
  Value mul(TensorMulOp op, ValueRange indices);
  Value pool(TensorPoolOp op, ValueRange indices);
  Value softmax(TensorSoftmaxOp op, ValueRange indices);
  Value batchNorm(TensorBatchNormOp op, ValueRange indices);
  Value reduce(TensorReduceOp op, ValueRange indices);
  /// The element of a reshape (the same elements, row-major, in a new shape).
  Value reshape(Value source, RankedTensorType type, ValueRange indices);

  OpBuilder &b;
  Location loc;
  const IRMapping &memory;
};

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

Value ElementEmitter::padded(Value image, ArrayRef<Value> nchw,
                             ArrayRef<int64_t> padding, Value outside) {
  if (padding[0] == 0 && padding[1] == 0)
    return emit(image, nchw);
  RankedTensorType type = tensorType(image);
  Value inside;
  for (unsigned d = 0; d < 2; ++d) {
    Value at = nchw[2 + d];
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, at,
                                      index(0));
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at,
                                       index(type.getDimSize(2 + d)));
    Value both = arith::AndIOp::create(b, loc, low, high);
    inside = inside ? Value(arith::AndIOp::create(b, loc, inside, both)) : both;
  }
  return select(inside, outside, [&] { return emit(image, nchw); });
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
  // sample_filter: the taps k = (c * height + r) * width + s with k mod rate
  // = offset are skipped, the kept weights scaled by rate / (rate - 1).
  KnobAttr sampling = getSampling(op, KnobKind::sample_filter);
  Value scale;
  if (sampling)
    scale = scalars::floatConstant(
        b, loc, filter.getElementType(),
        double(sampling.getRate()) / double(sampling.getRate() - 1));
  return fold(channels, zero, [&](Value c, Value sum) {
    Value channel = firstChannel ? addIndex(firstChannel, c) : c;
    return fold(height, sum, [&](Value r, Value sum) {
      Value h = windowPosition(indices[2], strides[0], padding[0], r);
      return fold(width, sum, [&](Value s, Value sum) {
        Value w = windowPosition(indices[3], strides[1], padding[1], s);
        Value x = padded(op.getInput(), {n, channel, h, w}, padding, zero);
        Value weight = emit(op.getFilter(), ValueRange{f, c, r, s});
        if (sampling)
          weight = arith::MulFOp::create(b, loc, weight, scale);
        Value product = arith::MulFOp::create(b, loc, x, weight);
        if (sampling) {
          Value tap = addIndex(mulIndex(addIndex(mulIndex(c, height), r), width), s);
          product = arith::SelectOp::create(b, loc, isSkipped(tap, sampling),
                                            zero, product);
        }
        return arith::AddFOp::create(b, loc, sum, product);
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
  Type element = tensorType(op.getResult()).getElementType();
  SmallVector<int64_t> window = getInts(op.getWindow());
  SmallVector<int64_t> strides = getInts(op.getStrides());
  SmallVector<int64_t> padding = getInts(op.getPadding());
  PoolKind kind = op.getKind();
  Value start = scalars::floatConstant(b, loc, element, scalars::poolIdentity(kind));
  Value reduced = fold(window[0], start, [&](Value r, Value acc) {
    Value h = windowPosition(indices[2], strides[0], padding[0], r);
    return fold(window[1], acc, [&](Value s, Value acc) {
      Value w = windowPosition(indices[3], strides[1], padding[1], s);
      Value x = padded(op.getInput(), {indices[0], indices[1], h, w}, padding,
                       start);
      return scalars::poolCombine(b, loc, kind, acc, x);
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
  Value reduced = fold(extent, start, [&](Value j, Value acc) {
    SmallVector<Value> along(indices);
    along.insert(along.begin() + axis, j);
    // The combiner takes (accumulator, element).
    Value next = applyRegion(op.getCombiner(), {acc, emit(op.getInput(), along)});
    if (!sampling)
      return next;
    return Value(
        arith::SelectOp::create(b, loc, isSkipped(j, sampling), acc, next));
  });
  if (!sum)
    return reduced;
  int64_t rate = sampling.getRate(), offset = sampling.getOffset();
  int64_t skipped = offset < extent ? (extent - offset + rate - 1) / rate : 0;
  int64_t kept = extent - skipped;
  if (kept == 0)
    return init;
  Value scale = scalars::floatConstant(b, loc, init.getType(),
                                       double(extent) / double(kept));
  return arith::AddFOp::create(b, loc, init,
                               arith::MulFOp::create(b, loc, reduced, scale));
}

/// Whether `type` is a scalar a tensor kernel takes or returns as itself:
/// integers of whole bytes and floats.
bool isKernelScalar(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() % 8 == 0;
  return isa<FloatType>(type);
}

/// The most ops the element expression of one output may take.
constexpr uint64_t kMaxEmitted = 4096;

/// How many tensor ops the element of `value` takes, each use of a value
/// counted (as the emitter builds it again), at most kMaxEmitted + 1.
uint64_t emittedSize(Value value, DenseMap<Value, uint64_t> &sizes) {
  if (auto it = sizes.find(value); it != sizes.end())
    return it->second;
  uint64_t size = 1;
  Operation *def = value.getDefiningOp();
  if (def && !isa<arith::ConstantOp>(def))
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        size = std::min(size + emittedSize(operand, sizes), kMaxEmitted + 1);
  sizes[value] = size;
  return size;
}

/// Whether `op` is a reshape a kernel reads through: tensor.collapse_shape
/// or tensor.expand_shape of static shapes.
bool isStaticReshape(Operation *op) {
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return false;
  return cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape() &&
         cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape();
}

/// Why the interface of `leaf` does not suit a tensor kernel, or "". Tensors
/// are statically shaped, of one float type, the outputs of one shape;
/// scalars (HPVM-C passes each tensor with its size in bytes) are inputs the
/// tensor ops do not read and outputs that are constants or inputs.
std::string checkInterface(LeafOp leaf, Type &element) {
  auto check = [&](Type type, const std::string &where) -> std::string {
    if (!isa<TensorType>(type)) {
      if (!isKernelScalar(type))
        return "its " + where + " is a " + describe(type) +
               " (tensor kernels take float tensors, integers of whole bytes "
               "and floats)";
      return "";
    }
    auto tensor = cast<TensorType>(type);
    if (!tensor.hasStaticShape() || !isa<FloatType>(tensor.getElementType()))
      return "its " + where + " is a " + describe(type) +
             " (tensor kernels take statically shaped float tensors)";
    if (!element)
      element = tensor.getElementType();
    if (tensor.getElementType() != element)
      return "its tensors have elements of more than one type (" +
             describe(element) + " and " + describe(tensor.getElementType()) +
             ")";
    return "";
  };
  Block &body = leaf.getBody().front();
  for (auto [index, type] : llvm::enumerate(leaf.getInputTypes())) {
    std::string where = "input " + std::to_string(index);
    if (std::string reason = check(type, where); !reason.empty())
      return reason;
    if (!isa<TensorType>(type) &&
        llvm::any_of(body.getArgument(index).getUsers(),
                     [](Operation *user) { return !isa<ReturnOp>(user); }))
      return "its tensor ops read its scalar " + where;
  }
  auto ret = cast<ReturnOp>(body.getTerminator());
  ArrayRef<int64_t> shape;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    std::string where = "output " + std::to_string(index);
    if (std::string reason = check(value.getType(), where); !reason.empty())
      return reason;
    if (auto tensor = dyn_cast<RankedTensorType>(value.getType())) {
      if (!shape.empty() && tensor.getShape() != shape)
        return "its outputs differ in shape (one thread per element of all)";
      shape = tensor.getShape();
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (def && !(def->hasTrait<::mlir::OpTrait::ConstantLike>() &&
                 def->getNumOperands() == 0))
      return "its scalar " + where +
             " is computed (tensor kernels return constants and inputs)";
  }
  if (shape.empty() && !llvm::any_of(ret.getOperandTypes(), llvm::IsaPred<TensorType>))
    return "it has no tensor output";
  return "";
}

} // namespace

bool mlir::hpvm::isTensorLeaf(LeafOp leaf) {
  return llvm::any_of(
      llvm::concat<const Type>(leaf.getInputTypes(), leaf.getOutputTypes()),
      [](Type type) { return isa<TensorType>(type); });
}

std::string mlir::hpvm::checkTensorLeaf(LeafOp leaf, ModuleOp module) {
  if (!leaf.getBody().hasOneBlock())
    return "its body has more than one block";
  Type element;
  if (std::string reason = checkInterface(leaf, element); !reason.empty())
    return reason;
  std::string reason;
  module.walk([&](CreateNodeOp create) {
    if (reason.empty() && create.getNodeAttr().getAttr() == leaf.getSymNameAttr() &&
        create.getRank() != 0)
      reason = "it is created with a grid (a tensor node runs as one instance)";
  });
  if (!reason.empty())
    return reason;
  ElementwiseValues known;
  for (Operation &op : leaf.getBody().front()) {
    if (isa<ReturnOp>(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isa<RankedTensorType>(constant.getType())) {
      if (cast<RankedTensorType>(constant.getType()).getElementType() != element)
        return "it has a constant of " + describe(constant.getType());
      continue;
    }
    // Scalar constants: a reduction's start, a returned size.
    if (op.hasTrait<::mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0 &&
        op.getNumResults() == 1 && isKernelScalar(op.getResult(0).getType()))
      continue;
    if (isStaticReshape(&op))
      continue;
    if (!isa<HPVMDialect>(op.getDialect()) ||
        !op.getName().getStringRef().starts_with("hpvm.tensor."))
      return "it computes with '" + op.getName().getStringRef().str() +
             "' (tensor ops only)";
    for (Type type : llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.getElementType() != element)
        return "its '" + op.getName().getStringRef().str() +
               "' mixes element types";
    if (std::string why = checkTensorOp(&op, known); !why.empty())
      return why;
  }
  // A value used twice is built twice: a kernel whose element takes more
  // than kMaxEmitted ops (2^n of them after n ops that each use the last
  // twice) is not built.
  DenseMap<Value, uint64_t> sizes;
  auto ret = cast<ReturnOp>(leaf.getBody().front().getTerminator());
  for (Value value : ret.getOperands())
    if (isa<TensorType>(value.getType()) &&
        emittedSize(value, sizes) > kMaxEmitted)
      return "its element would take more than " + std::to_string(kMaxEmitted) +
             " ops (values used more than once are computed again for each "
             "use)";
  return "";
}

SymbolRefAttr mlir::hpvm::buildTensorKernel(LeafOp leaf, ModuleOp module,
                                            gpu::GPUModuleOp kernels) {
  MLIRContext *context = module.getContext();
  Location loc = leaf.getLoc();
  Block &body = leaf.getBody().front();
  auto memrefOf = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };

  // Constant tables (weights) become globals the host passes to the kernel.
  OpBuilder b(context);
  b.setInsertionPoint(leaf);
  SymbolTable symbols(module);
  SmallVector<Value> tables;
  SmallVector<Attribute> globals;
  for (auto constant : body.getOps<arith::ConstantOp>()) {
    if (!isTableConstant(constant))
      continue;
    auto global = memref::GlobalOp::create(
        b, loc,
        ("__hpvm_tensor_constant_" + leaf.getSymName() + "_" +
         Twine(globals.size()))
            .str(),
        b.getStringAttr("private"), memrefOf(constant.getType()),
        constant.getValue(), /*constant=*/true, b.getI64IntegerAttr(64));
    symbols.insert(global);
    tables.push_back(constant);
    globals.push_back(FlatSymbolRefAttr::get(global.getSymNameAttr()));
  }
  leaf->setAttr(HPVMDialect::getTensorKernelAttrName(), b.getArrayAttr(globals));

  // Parameters (RuntimeABI.h, KernelShape::Tensor): the inputs, the
  // constants and the outputs as memrefs, then the grid.
  // Scalars as themselves; after the grid, a pointer to the struct of the
  // scalar outputs, which the first thread stores.
  auto ret = cast<ReturnOp>(body.getTerminator());
  SmallVector<Type> parameters;
  for (Value input : body.getArguments())
    parameters.push_back(isa<TensorType>(input.getType())
                             ? Type(memrefOf(input.getType()))
                             : input.getType());
  for (Value table : tables)
    parameters.push_back(memrefOf(table.getType()));
  SmallVector<Value> tensorOutputs, scalarOutputs;
  for (Value value : ret.getOperands())
    (isa<TensorType>(value.getType()) ? tensorOutputs : scalarOutputs)
        .push_back(value);
  for (Value output : tensorOutputs)
    parameters.push_back(memrefOf(output.getType()));
  parameters.append(3, b.getI64Type());
  if (!scalarOutputs.empty())
    parameters.push_back(LLVM::LLVMPointerType::get(context));
  b.setInsertionPointToEnd(kernels.getBody());
  auto func = gpu::GPUFuncOp::create(b, loc, leaf.getSymName(),
                                     FunctionType::get(context, parameters, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SymbolTable(kernels).insert(func);
  Block *entry = &func.getBody().front();
  IRMapping memory;
  unsigned next = 0;
  IRMapping scalars;
  for (Value input : body.getArguments()) {
    Value parameter = entry->getArgument(next++);
    if (isa<TensorType>(input.getType()))
      memory.map(input, parameter);
    else
      scalars.map(input, parameter);
  }
  for (Value table : tables)
    memory.map(table, entry->getArgument(next++));
  ValueRange outputs = entry->getArguments().slice(next, tensorOutputs.size());
  Value elements = entry->getArgument(next + outputs.size());

  // One thread per element; threads past the last return.
  b.setInsertionPointToStart(entry);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockDim = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block, blockDim), thread);
  Value count = arith::IndexCastOp::create(b, loc, b.getIndexType(), elements);
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, count);
  auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  // The element's indices, row-major.
  ElementEmitter emitter(b, loc, memory);
  SmallVector<Value> indices = emitter.delinearize(
      id, cast<RankedTensorType>(tensorOutputs.front().getType()).getShape());
  for (auto [value, output] : llvm::zip(tensorOutputs, outputs)) {
    // A product with a precision knob, its bias and activation: the result
    // rounded to the format once, as the runtime's kernels round it.
    emitter.roundedAtStore = getRoundedProduct(value);
    Value element = emitter.emit(value, indices);
    if (emitter.roundedAtStore)
      element = emitter.roundTo(*getPrecision(emitter.roundedAtStore), element);
    memref::StoreOp::create(b, loc, element, output, indices);
  }
  b.setInsertionPointToEnd(entry);
  if (!scalarOutputs.empty()) {
    // The first thread stores the scalar outputs (inputs or constants).
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, id,
                                        arith::ConstantIndexOp::create(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    auto fields = LLVM::LLVMStructType::getLiteral(
        context, llvm::map_to_vector(scalarOutputs,
                                     [](Value v) { return v.getType(); }));
    Value base = entry->getArguments().back();
    for (auto [index, value] : llvm::enumerate(scalarOutputs)) {
      Value stored = scalars.lookupOrNull(value);
      if (!stored)
        stored = b.clone(*value.getDefiningOp())->getResult(0);
      Value field = LLVM::GEPOp::create(
          b, loc, LLVM::LLVMPointerType::get(context), fields, base,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
      LLVM::StoreOp::create(b, loc, stored, field);
    }
  }
  gpu::ReturnOp::create(b, loc);
  return SymbolRefAttr::get(kernels.getSymNameAttr(),
                            {FlatSymbolRefAttr::get(func.getNameAttr())});
}
