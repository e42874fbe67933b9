//===- TileLanes.cpp - Tile rows of structured leaves in lock-step --------===//
// Builds, for a structured leaf (memref, scf, arith in one block) whose grids
// all have the same constant x extent W (a tile), its tile variant: a leaf
// running the W instances of one row of the tile at once. Values that differ
// between instances become vector<W x T>, uniform values stay scalars,
// divergent control flow runs under masks.
#include "TileLanes.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// How the W lanes see a value: one scalar for all (uniform), base + lane
/// (consecutive, index values only), or one vector element each (varying).
enum class Shape { Uniform, Consecutive, Varying };
struct Lanes {
  Shape shape;
  Value value; // the scalar, the base, or the vector
};

class InstanceVectorizer {
public:
  InstanceVectorizer(unsigned width) : width(width) {}

  /// Vectorizes the ops of `source` but its terminator into `b`; `mask` is
  /// null when every lane is active.
  LogicalResult vectorizeBlock(Block &source, OpBuilder &b, Value mask);
  void setUniform(Value from, Value to) { lanes[from] = {Shape::Uniform, to}; }
  void setConsecutive(Value from, Value base) {
    lanes[from] = {Shape::Consecutive, base};
  }
  /// The yielded values of `terminator` as vectors.
  SmallVector<Value> vectorOperands(OpBuilder &b, Operation *terminator);

private:
  LogicalResult vectorizeOp(Operation &op, OpBuilder &b, Value mask);
  LogicalResult vectorizeLoad(memref::LoadOp load, OpBuilder &b, Value mask);
  LogicalResult vectorizeStore(memref::StoreOp store, OpBuilder &b, Value mask);
  LogicalResult vectorizeFor(scf::ForOp loop, OpBuilder &b, Value mask);
  LogicalResult vectorizeIf(scf::IfOp branch, OpBuilder &b, Value mask);

  VectorType vectorOf(Type scalar) { return VectorType::get({width}, scalar); }
  /// `value` as a vector of W lanes.
  Value toVector(OpBuilder &b, Location loc, Value value);
  /// Lane `lane` of `value` as a scalar.
  Value laneOf(OpBuilder &b, Location loc, Value value, unsigned lane);
  /// The lanes of a vector-shaped access: true when the last index is
  /// consecutive and the others uniform on a memref with unit innermost stride.
  bool isContiguous(MemRefType type, ValueRange indices);
  /// Runs `body` for each lane (under its mask bit) and returns the lanes'
  /// values as a vector (when `resultType` is set).
  Value perLane(OpBuilder &b, Location loc, Value mask, Type resultType,
                function_ref<Value(OpBuilder &, unsigned)> body);
  Value anyActive(OpBuilder &b, Location loc, Value mask) {
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, mask);
  }

  unsigned width;
  DenseMap<Value, Lanes> lanes;
};
} // namespace

static bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

Value InstanceVectorizer::toVector(OpBuilder &b, Location loc, Value value) {
  Lanes l = lanes.lookup(value);
  if (l.shape == Shape::Varying)
    return l.value;
  VectorType type = vectorOf(l.value.getType());
  Value splat = vector::BroadcastOp::create(b, loc, type, l.value);
  if (l.shape == Shape::Uniform)
    return splat;
  SmallVector<Attribute> steps;
  for (unsigned i = 0; i < width; ++i)
    steps.push_back(b.getIndexAttr(i));
  Value step = arith::ConstantOp::create(b, loc, type,
                                         DenseElementsAttr::get(type, steps));
  return arith::AddIOp::create(b, loc, splat, step);
}

Value InstanceVectorizer::laneOf(OpBuilder &b, Location loc, Value value,
                                 unsigned lane) {
  Lanes l = lanes.lookup(value);
  switch (l.shape) {
  case Shape::Uniform:
    return l.value;
  case Shape::Consecutive:
    return arith::AddIOp::create(
        b, loc, l.value, arith::ConstantIndexOp::create(b, loc, lane));
  case Shape::Varying:
    return vector::ExtractOp::create(b, loc, l.value,
                                     ArrayRef<int64_t>{lane});
  }
  llvm_unreachable("unknown shape");
}

bool InstanceVectorizer::isContiguous(MemRefType type, ValueRange indices) {
  if (indices.empty() || !type.getLayout().isIdentity() ||
      !isa<IntegerType, FloatType>(type.getElementType()))
    return false;
  for (Value index : indices.drop_back())
    if (lanes.lookup(index).shape != Shape::Uniform)
      return false;
  return lanes.lookup(indices.back()).shape == Shape::Consecutive;
}

Value InstanceVectorizer::perLane(
    OpBuilder &b, Location loc, Value mask, Type resultType,
    function_ref<Value(OpBuilder &, unsigned)> body) {
  SmallVector<Value> elements;
  for (unsigned lane = 0; lane < width; ++lane) {
    if (!mask) {
      Value v = body(b, lane);
      if (resultType)
        elements.push_back(v);
      continue;
    }
    Value active =
        vector::ExtractOp::create(b, loc, mask, ArrayRef<int64_t>{lane});
    TypeRange types = resultType ? TypeRange(resultType) : TypeRange();
    auto branch = scf::IfOp::create(b, loc, types, active, /*withElse=*/bool(resultType));
    OpBuilder tb = OpBuilder::atBlockBegin(branch.thenBlock());
    Value v = body(tb, lane);
    if (resultType) {
      // scf.if built with results has no terminators yet.
      scf::YieldOp::create(tb, loc, v);
      OpBuilder eb = OpBuilder::atBlockBegin(branch.elseBlock());
      scf::YieldOp::create(
          eb, loc,
          arith::ConstantOp::create(eb, loc, cast<TypedAttr>(eb.getZeroAttr(resultType)))
              .getResult());
      elements.push_back(branch.getResult(0));
    }
  }
  if (!resultType)
    return Value();
  return vector::FromElementsOp::create(b, loc, vectorOf(resultType), elements);
}

LogicalResult InstanceVectorizer::vectorizeLoad(memref::LoadOp load,
                                                OpBuilder &b, Value mask) {
  Location loc = load.getLoc();
  if (lanes.lookup(load.getMemRef()).shape != Shape::Uniform)
    return failure();
  Value memref = lanes.lookup(load.getMemRef()).value;
  Type element = load.getType();
  if (!isScalar(element))
    return failure();
  SmallVector<Value> indices(load.getIndices());
  bool uniform = llvm::all_of(indices, [&](Value index) {
    return lanes.lookup(index).shape == Shape::Uniform;
  });
  SmallVector<Value> scalarIndices;
  if (uniform || isContiguous(load.getMemRefType(), indices))
    for (Value index : indices)
      scalarIndices.push_back(lanes.lookup(index).value);
  if (uniform) {
    // Every lane reads the same element; under a mask this runs only when
    // some lane is active (see vectorizeIf), for which the address is valid.
    setUniform(load, memref::LoadOp::create(b, loc, memref, scalarIndices));
    return success();
  }
  if (isContiguous(load.getMemRefType(), indices)) {
    VectorType type = vectorOf(element);
    Value result;
    if (mask) {
      Value zero = arith::ConstantOp::create(
          b, loc, type, cast<TypedAttr>(b.getZeroAttr(type)));
      result = vector::MaskedLoadOp::create(b, loc, type, memref, scalarIndices,
                                            mask, zero);
    } else {
      result = vector::LoadOp::create(b, loc, type, memref, scalarIndices);
    }
    lanes[load] = {Shape::Varying, result};
    return success();
  }
  Value result = perLane(b, loc, mask, element, [&](OpBuilder &lb, unsigned lane) {
    SmallVector<Value> laneIndices;
    for (Value index : indices)
      laneIndices.push_back(laneOf(lb, loc, index, lane));
    return memref::LoadOp::create(lb, loc, memref, laneIndices).getResult();
  });
  lanes[load] = {Shape::Varying, result};
  return success();
}

LogicalResult InstanceVectorizer::vectorizeStore(memref::StoreOp store,
                                                 OpBuilder &b, Value mask) {
  Location loc = store.getLoc();
  if (lanes.lookup(store.getMemRef()).shape != Shape::Uniform ||
      !isScalar(store.getValueToStore().getType()))
    return failure();
  Value memref = lanes.lookup(store.getMemRef()).value;
  SmallVector<Value> indices(store.getIndices());
  if (isContiguous(store.getMemRefType(), indices)) {
    SmallVector<Value> scalarIndices;
    for (Value index : indices)
      scalarIndices.push_back(lanes.lookup(index).value);
    Value value = toVector(b, loc, store.getValueToStore());
    if (mask)
      vector::MaskedStoreOp::create(b, loc, memref, scalarIndices, mask, value);
    else
      vector::StoreOp::create(b, loc, value, memref, scalarIndices);
    return success();
  }
  // Lane by lane, in lane order (instances are unordered; any order is valid).
  perLane(b, loc, mask, Type(), [&](OpBuilder &lb, unsigned lane) {
    SmallVector<Value> laneIndices;
    for (Value index : indices)
      laneIndices.push_back(laneOf(lb, loc, index, lane));
    memref::StoreOp::create(lb, loc, laneOf(lb, loc, store.getValueToStore(), lane),
                            memref, laneIndices);
    return Value();
  });
  return success();
}

SmallVector<Value> InstanceVectorizer::vectorOperands(OpBuilder &b,
                                                      Operation *terminator) {
  SmallVector<Value> values;
  for (Value operand : terminator->getOperands())
    values.push_back(toVector(b, terminator->getLoc(), operand));
  return values;
}

LogicalResult InstanceVectorizer::vectorizeFor(scf::ForOp loop, OpBuilder &b,
                                               Value mask) {
  Location loc = loop.getLoc();
  for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    if (lanes.lookup(bound).shape != Shape::Uniform)
      return failure(); // lanes would run different trip counts
  SmallVector<Value> inits;
  for (Value init : loop.getInitArgs()) {
    if (!isScalar(init.getType()))
      return failure();
    inits.push_back(toVector(b, loc, init));
  }
  auto vectorLoop = scf::ForOp::create(
      b, loc, lanes.lookup(loop.getLowerBound()).value,
      lanes.lookup(loop.getUpperBound()).value,
      lanes.lookup(loop.getStep()).value, inits);
  Block *body = vectorLoop.getBody();
  if (body->mightHaveTerminator())
    body->getTerminator()->erase();
  setUniform(loop.getInductionVar(), vectorLoop.getInductionVar());
  for (auto [from, to] :
       llvm::zip(loop.getRegionIterArgs(), vectorLoop.getRegionIterArgs()))
    lanes[from] = {Shape::Varying, to};
  OpBuilder bb = OpBuilder::atBlockEnd(body);
  if (failed(vectorizeBlock(*loop.getBody(), bb, mask)))
    return failure();
  SmallVector<Value> yielded = vectorOperands(bb, loop.getBody()->getTerminator());
  scf::YieldOp::create(bb, loc, yielded);
  for (auto [from, to] : llvm::zip(loop.getResults(), vectorLoop.getResults()))
    lanes[from] = {Shape::Varying, to};
  return success();
}

LogicalResult InstanceVectorizer::vectorizeIf(scf::IfOp branch, OpBuilder &b,
                                              Value mask) {
  Location loc = branch.getLoc();
  SmallVector<Type> types;
  for (Type type : branch.getResultTypes()) {
    if (!isScalar(type))
      return failure();
    types.push_back(vectorOf(type));
  }
  Lanes condition = lanes.lookup(branch.getCondition());
  // Runs `region` under `regionMask` inside an scf.if on `guard`, yielding
  // vectors (zeros where the region did not run).
  auto emitRegion = [&](Region &region, Value guard,
                        Value regionMask) -> FailureOr<SmallVector<Value>> {
    auto inner = scf::IfOp::create(b, loc, types, guard, /*withElse=*/true);
    for (Block *block : {inner.thenBlock(), inner.elseBlock()})
      if (block->mightHaveTerminator())
        block->getTerminator()->erase();
    OpBuilder tb = OpBuilder::atBlockEnd(inner.thenBlock());
    SmallVector<Value> yielded;
    if (!region.empty()) {
      if (failed(vectorizeBlock(region.front(), tb, regionMask)))
        return failure();
      yielded = vectorOperands(tb, region.front().getTerminator());
    }
    scf::YieldOp::create(tb, loc, yielded);
    OpBuilder eb = OpBuilder::atBlockEnd(inner.elseBlock());
    SmallVector<Value> zeros;
    for (Type type : types)
      zeros.push_back(arith::ConstantOp::create(
          eb, loc, type, cast<TypedAttr>(eb.getZeroAttr(type))));
    scf::YieldOp::create(eb, loc, zeros);
    return SmallVector<Value>(inner.getResults());
  };

  if (condition.shape == Shape::Uniform) {
    // Every lane takes the same side: one branch, the mask unchanged.
    auto thenValues = emitRegion(branch.getThenRegion(), condition.value, mask);
    if (failed(thenValues))
      return failure();
    if (branch.getElseRegion().empty() && types.empty())
      return success();
    Value notTaken = arith::XOrIOp::create(
        b, loc, condition.value,
        arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    auto elseValues = emitRegion(branch.getElseRegion(), notTaken, mask);
    if (failed(elseValues))
      return failure();
    for (auto [result, a, c] : llvm::zip(branch.getResults(), *thenValues, *elseValues))
      lanes[result] = {Shape::Varying,
                       arith::SelectOp::create(b, loc, condition.value, a, c)};
    return success();
  }
  // Divergent: each side under its lanes' mask, run when any lane takes it.
  Value taken = toVector(b, loc, branch.getCondition());
  VectorType maskType = vectorOf(b.getI1Type());
  Value ones = arith::ConstantOp::create(
      b, loc, maskType, DenseElementsAttr::get(maskType, llvm::ArrayRef<bool>{true}));
  Value notTaken = arith::XOrIOp::create(b, loc, taken, ones);
  Value thenMask = mask ? arith::AndIOp::create(b, loc, mask, taken) : taken;
  Value elseMask = mask ? arith::AndIOp::create(b, loc, mask, notTaken) : notTaken;
  auto thenValues = emitRegion(branch.getThenRegion(),
                               anyActive(b, loc, thenMask), thenMask);
  if (failed(thenValues))
    return failure();
  if (branch.getElseRegion().empty() && types.empty())
    return success();
  auto elseValues = emitRegion(branch.getElseRegion(),
                               anyActive(b, loc, elseMask), elseMask);
  if (failed(elseValues))
    return failure();
  for (auto [result, a, c] : llvm::zip(branch.getResults(), *thenValues, *elseValues))
    lanes[result] = {Shape::Varying, arith::SelectOp::create(b, loc, taken, a, c)};
  return success();
}

/// Integer divisions and remainders: inactive lanes must not divide by zero.
static bool isDivision(Operation &op) {
  return isa<arith::DivUIOp, arith::DivSIOp, arith::RemUIOp, arith::RemSIOp,
             arith::CeilDivUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp>(op);
}

LogicalResult InstanceVectorizer::vectorizeOp(Operation &op, OpBuilder &b,
                                              Value mask) {
  Location loc = op.getLoc();
  if (auto id = dyn_cast<InstanceIdOp>(op);
      id && id.getLevel() == 0 && id.getDim() == Dim::x)
    return success(lanes.count(id.getResult())); // mapped up front
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return vectorizeLoad(load, b, mask);
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return vectorizeStore(store, b, mask);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return vectorizeFor(loop, b, mask);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return vectorizeIf(branch, b, mask);
  if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
    return failure();
  for (Value operand : op.getOperands())
    if (!lanes.count(operand))
      return failure();
  bool allUniform = llvm::all_of(op.getOperands(), [&](Value operand) {
    return lanes.lookup(operand).shape == Shape::Uniform;
  });
  if (allUniform) {
    IRMapping mapping;
    for (Value operand : op.getOperands())
      mapping.map(operand, lanes.lookup(operand).value);
    Operation *copy = b.clone(op, mapping);
    for (auto [from, to] : llvm::zip(op.getResults(), copy->getResults()))
      setUniform(from, to);
    return success();
  }
  // base + uniform stays consecutive: contiguous accesses stay vector loads.
  if (isa<arith::AddIOp, arith::SubIOp>(op)) {
    Lanes lhs = lanes.lookup(op.getOperand(0)), rhs = lanes.lookup(op.getOperand(1));
    bool isAdd = isa<arith::AddIOp>(op);
    if (lhs.shape == Shape::Consecutive && rhs.shape == Shape::Uniform) {
      setConsecutive(op.getResult(0),
                     isAdd ? arith::AddIOp::create(b, loc, lhs.value, rhs.value)
                                 .getResult()
                           : arith::SubIOp::create(b, loc, lhs.value, rhs.value)
                                 .getResult());
      return success();
    }
    if (isAdd && lhs.shape == Shape::Uniform && rhs.shape == Shape::Consecutive) {
      setConsecutive(op.getResult(0),
                     arith::AddIOp::create(b, loc, lhs.value, rhs.value));
      return success();
    }
  }
  if (!op.hasTrait<mlir::OpTrait::Elementwise>() ||
      !llvm::all_of(op.getOperandTypes(), isScalar) ||
      !llvm::all_of(op.getResultTypes(), isScalar))
    return failure();
  IRMapping mapping;
  for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
    Value vector = toVector(b, loc, operand);
    if (mask && isDivision(op) && index == 1) {
      Value ones = arith::ConstantOp::create(
          b, loc, vector.getType(),
          DenseElementsAttr::get(cast<ShapedType>(vector.getType()),
                                 b.getOneAttr(operand.getType())));
      vector = arith::SelectOp::create(b, loc, mask, vector, ones);
    }
    mapping.map(operand, vector);
  }
  Operation *copy = b.clone(op, mapping);
  for (auto [from, to] : llvm::zip(op.getResults(), copy->getResults())) {
    to.setType(vectorOf(from.getType()));
    lanes[from] = {Shape::Varying, to};
  }
  return success();
}

LogicalResult InstanceVectorizer::vectorizeBlock(Block &source, OpBuilder &b,
                                                 Value mask) {
  for (Operation &op : source.without_terminator())
    if (failed(vectorizeOp(op, b, mask)))
      return failure();
  return success();
}

LeafOp mlir::hpvm::buildTileVariant(LeafOp leaf, unsigned width) {
  // Outputs that are inputs passed on need no instance; the lowering takes
  // them from the node's inputs.
  if (!leaf.getBody().hasOneBlock() || !leaf.getPassedOnInputs())
    return {};
  MLIRContext *context = leaf.getContext();
  OpBuilder b(leaf);
  b.setInsertionPointAfter(leaf);
  // The leaf's inputs; i1 true, as every lane variant says whether it ran.
  auto type = FunctionType::get(context, leaf.getArgumentTypes(),
                                {IntegerType::get(context, 1)});
  auto variant = LeafOp::create(
      b, leaf.getLoc(), (leaf.getSymName() + "__tile" + Twine(width)).str(), type);
  variant.setPrivate();
  if (ArrayAttr argAttrs = leaf.getArgAttrsAttr())
    variant.setArgAttrsAttr(argAttrs);
  variant->setAttr(HPVMDialect::getLanesAttrName(), b.getI64IntegerAttr(width));
  variant->setAttr(HPVMDialect::getTargetsAttrName(),
                   b.getArrayAttr({TargetAttr::get(context, Target::cpu)}));
  Block *entry = &variant.getBody().front();
  if (entry->mightHaveTerminator())
    entry->getTerminator()->erase();
  OpBuilder fb = OpBuilder::atBlockEnd(entry);
  InstanceVectorizer vectorizer(width);
  Block &body = leaf.getBodyBlock();
  for (auto [from, to] : llvm::zip(body.getArguments(), entry->getArguments()))
    vectorizer.setUniform(from, to);
  // The variant's own x id is the first lane's; the other grid queries are
  // uniform across a row of the tile and copied as they are.
  Value firstLane = InstanceIdOp::create(fb, leaf.getLoc(), Dim::x);
  leaf.walk([&](InstanceIdOp id) {
    if (id.getLevel() == 0 && id.getDim() == Dim::x)
      vectorizer.setConsecutive(id, firstLane);
  });
  if (failed(vectorizer.vectorizeBlock(body, fb, /*mask=*/Value()))) {
    variant.erase();
    return {};
  }
  ReturnOp::create(fb, leaf.getLoc(),
                   ValueRange{arith::ConstantOp::create(fb, leaf.getLoc(),
                                                        fb.getBoolAttr(true))});
  return variant;
}
