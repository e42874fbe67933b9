//===- ElementwiseForms.cpp - Tensor maps the kernels compute themselves ------===//
#include "HPVM/Dialect/HPVM/Analysis/ElementwiseForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/bit.h"

#include <optional>

using namespace mlir;
using namespace mlir::hpvm;

/// The value of `value` when it is an f32 arith.constant.
static std::optional<float> f32Constant(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  if (!attr || !attr.getType().isF32())
    return std::nullopt;
  return attr.getValue().convertToFloat();
}

/// The operand of the two-operand `op` beside the f32 constant `want` (bit for bit: +0 is
/// not -0), or null.
static Value besideConstant(Operation *op, float want) {
  if (!op)
    return {};
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<float> c = f32Constant(op->getOperand(i));
    if (c && llvm::bit_cast<uint32_t>(*c) == llvm::bit_cast<uint32_t>(want))
      return op->getOperand(1 - i);
  }
  return {};
}

/// Whether `op` rounds as written: no fast-math flag.
static bool exact(Operation *op) {
  auto flags = op->getAttrOfType<arith::FastMathFlagsAttr>("fastmath");
  return !flags || flags.getValue() == arith::FastMathFlags::none;
}

/// The op of type T that defines `value`, or null (null values too).
template <typename T> static T definedBy(Value value) {
  return value ? value.getDefiningOp<T>() : T();
}

bool mlir::hpvm::isHardSwishMap(TensorMapOp map) {
  Block &body = map.getMapper().front();
  if (map->getNumOperands() != 1 || body.getNumArguments() != 1 ||
      !map.getType().getElementType().isF32())
    return false;
  Value x = body.getArgument(0);
  auto yield = dyn_cast<TensorYieldOp>(body.getTerminator());
  auto product = yield ? definedBy<arith::MulFOp>(yield.getValue()) : arith::MulFOp();
  if (!product || (product.getLhs() != x && product.getRhs() != x))
    return false;
  Value clamp = product.getLhs() == x ? product.getRhs() : product.getLhs();
  auto maximum = definedBy<arith::MaximumFOp>(clamp);
  auto minimum = definedBy<arith::MinimumFOp>(besideConstant(maximum, 0.0f));
  auto add = definedBy<arith::AddFOp>(besideConstant(minimum, 1.0f));
  auto scale = definedBy<arith::MulFOp>(besideConstant(add, 0.5f));
  if (!scale || besideConstant(scale, 1.0f / 6.0f) != x)
    return false;
  return exact(product) && exact(maximum) && exact(minimum) && exact(add) && exact(scale);
}
