//===- TensorScalars.cpp - One element of a tensor op, as scalars ---------===//
#include "HPVM/Conversion/TensorScalars.h"
#include "LowerTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::hpvm;

Value scalars::floatConstant(OpBuilder &b, Location loc, Type type,
                             double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value scalars::exp(OpBuilder &b, Location loc, Value x, bool marked) {
  auto exp = math::ExpOp::create(b, loc, x);
  if (marked)
    exp->setAttr(kLoweredExpAttr, b.getUnitAttr());
  return exp;
}

bool scalars::isActivation(Operation *op) {
  return isa<TensorReluOp, TensorClippedReluOp, TensorTanhOp, TensorSigmoidOp>(
      op);
}

Value scalars::activation(OpBuilder &b, Location loc, Operation *op, Value x,
                          bool markedExp) {
  Type type = x.getType();
  if (isa<TensorReluOp, TensorClippedReluOp>(op)) {
    Value relu = arith::MaximumFOp::create(b, loc, x,
                                           floatConstant(b, loc, type, 0.0));
    auto clipped = dyn_cast<TensorClippedReluOp>(op);
    if (!clipped)
      return relu;
    Value max = floatConstant(b, loc, type, clipped.getMax().convertToDouble());
    return arith::MinimumFOp::create(b, loc, relu, max);
  }
  Value one = floatConstant(b, loc, type, 1.0);
  if (isa<TensorTanhOp>(op)) {
    Value two = floatConstant(b, loc, type, 2.0);
    Value e = exp(b, loc, arith::MulFOp::create(b, loc, two, x), markedExp);
    Value quotient =
        arith::DivFOp::create(b, loc, two, arith::AddFOp::create(b, loc, e, one));
    return arith::SubFOp::create(b, loc, one, quotient);
  }
  assert(isa<TensorSigmoidOp>(op) && "not an activation");
  Value e = exp(b, loc, arith::NegFOp::create(b, loc, x), markedExp);
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

double scalars::poolIdentity(PoolKind kind) {
  if (kind == PoolKind::max)
    return -std::numeric_limits<double>::infinity();
  if (kind == PoolKind::min)
    return std::numeric_limits<double>::infinity();
  return 0.0;
}

Value scalars::poolCombine(OpBuilder &b, Location loc, PoolKind kind,
                           Value accumulator, Value element) {
  if (kind == PoolKind::max)
    return arith::MaximumFOp::create(b, loc, accumulator, element);
  if (kind == PoolKind::min)
    return arith::MinimumFOp::create(b, loc, accumulator, element);
  return arith::AddFOp::create(b, loc, accumulator, element);
}
