//===- TensorPerforation.cpp - Perforated convolutions in kernels ---------===//
// The kernels of perforated convolutions (TensorPerforation.h).
#include "TensorPerforation.h"

#include "HPVM/Conversion/TensorScalars.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <set>

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::tensor_kernels {

/// Outputs along the perforated dimension per thread, in runs of `rate`.
static constexpr int64_t kRunsPerThread = 4;

int64_t PerforatedConv::getThreads() const {
  ArrayRef<int64_t> shape = tensorType(output).getShape();
  int64_t threads = 1;
  for (auto [d, size] : llvm::enumerate(shape))
    threads *= d == axis ? llvm::divideCeil(size, run) : size;
  return threads;
}

/// The perforation knob of `op`, if any.
static KnobAttr getPerforation(Operation *op) {
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  return knob && (knob.getKind() == KnobKind::perforate_rows ||
                  knob.getKind() == KnobKind::perforate_cols)
             ? knob
             : KnobAttr();
}

std::string checkPerforation(LeafOp leaf, std::optional<PerforatedConv> &plan) {
  plan.reset();
  TensorConv2DOp conv;
  for (auto op : leaf.getBody().front().getOps<TensorConv2DOp>())
    if (getPerforation(op)) {
      if (conv)
        return "it has two perforated convolutions (a kernel interpolates "
               "its one output)";
      conv = op;
    }
  if (!conv)
    return "";
  // The output: act?(add?(conv, bias)), what the runtime's kernels absorb
  // and interpolate with the convolution.
  auto ret = cast<ReturnOp>(leaf.getBody().front().getTerminator());
  Value output = ret.getNumOperands() == 1 ? ret.getOperand(0) : Value();
  Value value = output;
  Operation *def = value ? value.getDefiningOp() : nullptr;
  if (def && scalars::isActivation(def))
    def = def->getOperand(0).getDefiningOp();
  if (auto add = dyn_cast_or_null<TensorAddOp>(def)) {
    Value bias = add.getLhs().getDefiningOp() == conv ? add.getRhs() : add.getLhs();
    ElementwiseValues known;
    def = isElementwise(bias, known) ? conv.getOperation() : nullptr;
    if (def && tensorType(add.getResult()).getShape() !=
                   tensorType(conv.getResult()).getShape())
      def = nullptr;
  }
  if (def != conv.getOperation())
    return "its 'hpvm.tensor.conv2d' has a perforation knob and its result "
           "is not the leaf's one output after a bias add and an activation "
           "(a kernel interpolates the leaf's output)";
  KnobAttr knob = getPerforation(conv);
  PerforatedConv perforated;
  perforated.conv = conv;
  perforated.output = output;
  perforated.axis = knob.getKind() == KnobKind::perforate_rows ? 2 : 3;
  perforated.rate = knob.getRate();
  perforated.offset = knob.getOffset();
  perforated.run = kRunsPerThread * perforated.rate;
  if (tensorType(output).getDimSize(perforated.axis) > 1)
    plan = perforated;
  return "";
}

void emitPerforated(ElementEmitter &e, const PerforatedConv &plan, Value id,
                    Value output) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  RankedTensorType type = tensorType(plan.output);
  int64_t extent = type.getDimSize(plan.axis);
  SmallVector<int64_t> threadShape(type.getShape());
  threadShape[plan.axis] = llvm::divideCeil(extent, plan.run);
  SmallVector<Value> indices = e.delinearize(id, threadShape);
  Value base = e.mulIndex(indices[plan.axis], plan.run);
  auto positionOf = [&](int64_t i) { return e.addIndex(base, e.index(i)); };
  auto indicesOf = [&](Value position) {
    SmallVector<Value> at(indices);
    at[plan.axis] = position;
    return at;
  };
  auto isKept = [&](int64_t i) { return i % plan.rate != plan.offset; };
  // The outputs the run needs, each computed once: its kept ones and the
  // neighbours of its skipped ones (always kept: rate >= 2), one of which
  // may lie just before or after the run.
  std::set<int64_t> needed;
  for (int64_t i = 0; i < plan.run; ++i) {
    if (isKept(i))
      needed.insert(i);
    else
      needed.insert({i - 1, i + 1});
  }
  Type element = type.getElementType();
  Value zero = scalars::floatConstant(b, loc, element, 0.0);
  DenseMap<int64_t, Value> values;
  for (int64_t i : needed) {
    Value position = positionOf(i);
    Value inside =
        i < 0 ? Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            base, e.index(1)))
              : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            position, e.index(extent)));
    values[i] = e.select(inside, zero, [&] {
      return e.emit(plan.output, indicesOf(position));
    });
  }
  Value half = scalars::floatConstant(b, loc, element, 0.5);
  for (int64_t i = 0; i < plan.run; ++i) {
    Value position = positionOf(i);
    auto store = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, position,
                              e.index(extent)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    Value value = values.lookup(i);
    if (!isKept(i)) {
      // The mean of both neighbours; at an edge a copy of the one there.
      Value before = values.lookup(i - 1), after = values.lookup(i + 1);
      Value mean = arith::MulFOp::create(
          b, loc, half, arith::AddFOp::create(b, loc, before, after));
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          position, e.index(0));
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         position, e.index(extent - 1));
      value = arith::SelectOp::create(
          b, loc, first, after,
          arith::SelectOp::create(b, loc, last, before, mean));
    }
    memref::StoreOp::create(b, loc, value, output, indicesOf(position));
  }
}

} // namespace mlir::hpvm::tensor_kernels
