//===- LaneWidening.cpp - Consecutive instances of a leaf as vector lanes -===//
// The emitter half of hpvm-vectorize's lane variants: from the shapes
// of LaneAnalysis, lane l of the variant being instance x + l of the leaf. An
// access at a strided address whose stride is the accessed size is one vector
// load or store; other varying addresses gather and scatter; uniform ones
// stay scalar. Arithmetic on varying values is the same op on vectors; ops
// that have no vector form (calls, atomics) run once per lane, in lane order.
// Divergent branches check that the lanes agree, decline (before any side
// effect) or run masked regions (after one). Block variants emit each op that
// differs between rows once per row; remainder variants run under the mask
// of their first n lanes.
#include "LaneWidening.h"

#include "LaneAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/RegionGraphTraits.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/PostOrderIterator.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::lanes;

namespace {

/// Values of the variant by source value: one per row for the values that
/// differ between rows (block variants), else one.
class RowMap {
public:
  RowMap(const LaneAnalysis &analysis, const unsigned &row)
      : analysis(analysis), row(row) {}
  Value &operator[](Value value) { return map[{value, rowOf(value)}]; }
  Value lookup(Value value) const { return map.lookup({value, rowOf(value)}); }
  void erase(Value value) {
    for (unsigned r = 0; r <= maxRow; ++r)
      map.erase({value, r});
  }
  void setRows(unsigned rows) { maxRow = rows - 1; }

private:
  unsigned rowOf(Value value) const {
    return analysis.isRowDependent(value) ? row : 0;
  }
  const LaneAnalysis &analysis;
  const unsigned &row;
  unsigned maxRow = 0;
  DenseMap<std::pair<Value, unsigned>, Value> map;
};

/// Writes the variant from the analysis.
class LaneEmitter {
public:
  LaneEmitter(LaneAnalysis &analysis, unsigned lanes, unsigned rows,
              bool masked, MLIRContext *context)
      : analysis(analysis), lanes(lanes), rows(rows), masked(masked),
        context(context) {
    scalars.setRows(rows);
    vectors.setRows(rows);
    offsetValues.setRows(rows);
  }

  void emit(LeafOp leaf, LeafOp variant);

private:
  VectorType vectorOf(Type type) { return VectorType::get({lanes}, type); }
  Shape shapeOf(Value value) { return analysis.shapeOf(value); }
  /// The scalar of a uniform value, the base of a strided one.
  Value scalar(Value value) {
    Value mapped = scalars.lookup(value);
    assert(mapped && "value without a scalar form");
    return mapped;
  }
  /// `value` as a vector of the lanes (built once, after its definition).
  Value vector(Value value);
  /// Lane `lane` of `value`, at `b`.
  Value laneValue(OpBuilder &b, Location loc, Value value, unsigned lane);
  /// Lane offsets k * stride for k < lanes as a constant vector of `type`.
  Value offsets(OpBuilder &b, Location loc, Type type, int64_t stride);
  /// An integer constant of `type`, a splat when `type` is a vector.
  Value constant(OpBuilder &b, Location loc, Type type, int64_t value) {
    auto element = IntegerAttr::get(getElementTypeOrSelf(type), value);
    if (auto vectorType = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vectorType, ArrayRef<Attribute>{element}));
    return arith::ConstantOp::create(b, loc, type, element);
  }
  /// A value of `type` that nobody reads (poison; 0 for index).
  Value placeholder(Location loc, Type type) {
    if (type.isIndex())
      return arith::ConstantIndexOp::create(builder, loc, 0);
    return LLVM::PoisonOp::create(builder, loc, type);
  }
  /// Whether an access of `type` at `address` is one vector access: the
  /// address steps by the access's size from lane to lane.
  bool isContiguous(Value address, Type type) {
    Shape shape = shapeOf(address);
    int64_t size = analysis.sizeOf(type);
    return shape.kind == Kind::Strided && shape.stride == size &&
           type.isIntOrFloat() && type.getIntOrFloatBitWidth() == size * 8;
  }
  /// `value` (its source shape) as the argument of shape `target` receives it.
  Value forward(Value value, Shape target) {
    return target.isVarying() ? vector(value) : scalar(value);
  }
  SmallVector<Value> forwardAll(OperandRange values, Block *successor) {
    SmallVector<Value> result;
    unsigned current = row;
    for (auto [value, argument] : llvm::zip(values, successor->getArguments())) {
      // An argument that differs between rows takes one value per row.
      unsigned count = analysis.isRowDependent(argument) ? rows : 1;
      for (unsigned r = 0; r < count; ++r) {
        row = count > 1 ? r : current;
        result.push_back(forward(value, shapeOf(argument)));
      }
    }
    row = current;
    return result;
  }
  void emitOp(Operation &op);
  void emitTerminator(Operation &op);
  /// A load or store whose address or value is not uniform, for the lanes
  /// of `mask` only when it is set.
  void emitLoad(LLVM::LoadOp load, Value mask);
  void emitStore(LLVM::StoreOp store, Value mask);
  /// Runs `op` once per lane (per lane of `mask` when it is set), in lane
  /// order.
  void emitPerLane(Operation &op, Value mask);
  /// if (`condition`) the values `then` builds, else `otherwise`: continues
  /// after the join and returns the values.
  SmallVector<Value> emitIf(Location loc, Value condition, ValueRange otherwise,
                            function_ref<SmallVector<Value>()> then);
  void emitAlloca(LLVM::AllocaOp alloca);
  /// Runs the masked region of the divergent `branch` with every lane, each
  /// block under the mask of the lanes that reach it, then branches to the
  /// region's join.
  void emitMaskedRegion(LLVM::CondBrOp branch,
                        const LaneAnalysis::MaskedRegion &region);
  /// `op` for the lanes of `mask` only: memory accesses masked, per-lane ops
  /// skipped in inactive lanes, divisors of inactive lanes 1.
  void emitMaskedOp(Operation &op, Value mask);
  Value allLanes(Location loc, bool value) {
    return arith::ConstantOp::create(
        builder, loc, DenseElementsAttr::get(vectorOf(builder.getI1Type()), value));
  }
  Value anyLane(Location loc, Value mask) {
    return vector::ReductionOp::create(builder, loc, vector::CombiningKind::OR,
                                       mask);
  }
  /// Continues in a new block after the current one.
  Block *splitHere();
  void emitPrivateGEP(LLVM::GEPOp gep);
  /// `value` (i64 or vector of i64) times `factor`.
  Value scaleI64(Location loc, Value value, int64_t factor);
  /// Branches to `bail` unless `ok`, continuing in a new block.
  void bailUnless(Location loc, Value ok);
  /// Checks that the lanes of operand 0 of the strided `op` do not wrap.
  void emitWrapCheck(Operation &op, WrapCheck kind);

  LaneAnalysis &analysis;
  unsigned lanes;
  /// Rows of a block variant (1 for a lane variant).
  unsigned rows;
  /// A remainder variant: lanes n and up (n its trailing input) masked off.
  bool masked;
  MLIRContext *context;
  OpBuilder builder{context};
  /// The row (y offset in a block variant) being emitted.
  unsigned row = 0;
  RowMap scalars{analysis, row}, vectors{analysis, row};
  /// Private pointers: their byte offset from the alloca (lane 0's as an
  /// i64, or every lane's as a vector when the offset varies).
  RowMap offsetValues{analysis, row};
  DenseMap<Block *, Block *> blocks;
  Block *bail = nullptr;
  /// In a remainder variant, the lanes that run (the first n); else null.
  Value entryMask;
};

Value LaneEmitter::offsets(OpBuilder &b, Location loc, Type type,
                           int64_t stride) {
  SmallVector<APInt> values;
  unsigned width = type.isIndex() ? 64 : cast<IntegerType>(type).getWidth();
  for (unsigned lane = 0; lane < lanes; ++lane)
    values.push_back(APInt(width, static_cast<uint64_t>(stride * lane),
                           /*isSigned=*/true, /*implicitTrunc=*/true));
  return arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(vectorOf(type), values));
}

Value LaneEmitter::vector(Value value) {
  if (Value existing = vectors.lookup(value))
    return existing;
  Shape shape = shapeOf(value);
  assert(!shape.isVarying() && "varying value without a vector");
  Value base = scalar(value);
  OpBuilder b(context);
  b.setInsertionPointAfterValue(base);
  Location loc = base.getLoc();
  Type type = base.getType();
  Value result;
  if (isa<LLVM::LLVMPointerType>(type)) {
    // base + k * stride bytes (k * 0 for a uniform pointer).
    Value byteOffsets = offsets(b, loc, b.getI64Type(), shape.stride);
    result = LLVM::GEPOp::create(b, loc, vectorOf(type), b.getI8Type(), base,
                                 ValueRange{byteOffsets});
  } else {
    result = vector::BroadcastOp::create(b, loc, vectorOf(type), base);
    if (shape.kind == Kind::Strided)
      result = arith::AddIOp::create(b, loc, result,
                                     offsets(b, loc, type, shape.stride));
  }
  vectors[value] = result;
  return result;
}

Value LaneEmitter::laneValue(OpBuilder &b, Location loc, Value value,
                             unsigned lane) {
  Shape shape = shapeOf(value);
  if (shape.isUniform())
    return scalar(value);
  if (shape.isVarying())
    return vector::ExtractOp::create(b, loc, vector(value),
                                     ArrayRef<int64_t>{lane});
  Value base = scalar(value);
  int64_t offset = shape.stride * lane;
  if (isa<LLVM::LLVMPointerType>(base.getType()))
    return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                               ArrayRef<LLVM::GEPArg>{offset});
  return arith::AddIOp::create(b, loc, base,
                               constant(b, loc, base.getType(), offset));
}

void LaneEmitter::bailUnless(Location loc, Value ok) {
  Block *next = splitHere();
  LLVM::CondBrOp::create(builder, loc, ok, next, ValueRange{}, bail,
                         ValueRange{});
  builder.setInsertionPointToStart(next);
}

void LaneEmitter::emitWrapCheck(Operation &op, WrapCheck kind) {
  // The operand's lanes base + k * stride (k < lanes) must not wrap in its
  // own width: base <= MAX - spread for positive strides, >= MIN - spread
  // for negative ones.
  Location loc = op.getLoc();
  Value operand = op.getOperand(0);
  Value base = scalar(operand);
  Type type = base.getType();
  unsigned width = bitWidth(type);
  int64_t spread = shapeOf(operand).stride * static_cast<int64_t>(lanes - 1);
  if (kind == WrapCheck::LowBits) {
    // x & mask: the first lane's low bits leave room for the spread below
    // the mask (above 0 for negative strides).
    Value mask = scalar(op.getOperand(1));
    Value low = arith::AndIOp::create(builder, loc, base, mask);
    APInt maskBits(width, static_cast<uint64_t>(*constantInt(op.getOperand(1))));
    APInt bound = spread > 0 ? maskBits - APInt(width, spread)
                             : APInt(width, -spread);
    Value limit = arith::ConstantOp::create(builder, loc, type,
                                            IntegerAttr::get(type, bound));
    bailUnless(loc, arith::CmpIOp::create(builder, loc,
                                          spread > 0 ? arith::CmpIPredicate::ule
                                                     : arith::CmpIPredicate::uge,
                                          low, limit));
    return;
  }
  bool isSigned = kind == WrapCheck::Signed;
  APInt bound;
  if (isSigned)
    bound = spread > 0 ? APInt::getSignedMaxValue(width) - APInt(width, spread)
                       : APInt::getSignedMinValue(width) -
                             APInt(width, spread, /*isSigned=*/true);
  else
    bound = spread > 0 ? APInt::getMaxValue(width) - APInt(width, spread)
                       : APInt(width, -spread);
  Value limit = arith::ConstantOp::create(builder, loc, type,
                                          IntegerAttr::get(type, bound));
  arith::CmpIPredicate predicate =
      spread > 0 ? (isSigned ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule)
                 : (isSigned ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge);
  bailUnless(loc, arith::CmpIOp::create(builder, loc, predicate, base, limit));
}

void LaneEmitter::emitLoad(LLVM::LoadOp load, Value mask) {
  Location loc = load.getLoc();
  Type type = load.getType();
  Value address = load.getAddr();
  // Without an alignment, the element's (a vector's own would be wider).
  IntegerAttr alignment = builder.getI32IntegerAttr(
      load.getAlignment().value_or(analysis.sizeOf(type)));
  if (shapeOf(address).isUniform()) {
    // Under a mask: one scalar load, when some lane runs this block (lane 0
    // runs every block that the entry mask alone covers).
    if (!mask || mask == entryMask) {
      IRMapping mapping;
      mapping.map(address, scalar(address));
      scalars[load.getResult()] = builder.clone(*load, mapping)->getResult(0);
      return;
    }
    scalars[load.getResult()] =
        emitIf(loc, anyLane(loc, mask), placeholder(loc, type), [&] {
          IRMapping mapping;
          mapping.map(address, scalar(address));
          return SmallVector<Value>{builder.clone(*load, mapping)->getResult(0)};
        })
            .front();
    return;
  }
  if (isContiguous(address, type)) {
    vectors[load.getResult()] =
        mask ? LLVM::MaskedLoadOp::create(builder, loc, vectorOf(type),
                                          scalar(address), mask, Value(),
                                          alignment)
                   .getResult()
             : LLVM::LoadOp::create(builder, loc, vectorOf(type), scalar(address),
                                    alignment.getInt())
                   .getResult();
    return;
  }
  vectors[load.getResult()] = LLVM::masked_gather::create(
      builder, loc, vectorOf(type), vector(address),
      mask ? mask : allLanes(loc, true), ValueRange{}, alignment);
}

void LaneEmitter::emitStore(LLVM::StoreOp store, Value mask) {
  Location loc = store.getLoc();
  Value value = store.getValue(), address = store.getAddr();
  Type type = value.getType();
  IntegerAttr alignment = builder.getI32IntegerAttr(
      store.getAlignment().value_or(analysis.sizeOf(type)));
  if (!mask && shapeOf(address).isUniform()) {
    // Instances store in order: the last lane's value is what remains.
    IRMapping mapping;
    mapping.map(value, laneValue(builder, loc, value, lanes - 1));
    mapping.map(address, scalar(address));
    builder.clone(*store, mapping);
    return;
  }
  if (isContiguous(address, type)) {
    if (!mask) {
      LLVM::StoreOp::create(builder, loc, vector(value), scalar(address),
                            alignment.getInt());
      return;
    }
    LLVM::MaskedStoreOp::create(builder, loc,
                                ValueRange{vector(value), scalar(address), mask})
        ->setAttr("alignment", alignment);
    return;
  }
  // Overlapping lanes are written in lane order, as the instances would (a
  // uniform address under a mask: the last active lane's value remains).
  LLVM::masked_scatter::create(builder, loc,
                               ValueRange{vector(value), vector(address),
                                          mask ? mask : allLanes(loc, true)})
      ->setAttr("alignment", alignment);
}

SmallVector<Value>
LaneEmitter::emitIf(Location loc, Value condition, ValueRange otherwise,
                    function_ref<SmallVector<Value>()> then) {
  Block *run = splitHere();
  builder.setInsertionPointToStart(run);
  Block *join = splitHere();
  for (Value value : otherwise)
    join->addArgument(value.getType(), loc);
  builder.setInsertionPointToEnd(run->getPrevNode());
  LLVM::CondBrOp::create(builder, loc, condition, run, ValueRange{}, join,
                         otherwise);
  builder.setInsertionPointToStart(run);
  LLVM::BrOp::create(builder, loc, then(), join);
  builder.setInsertionPointToStart(join);
  return SmallVector<Value>(join->getArguments());
}

void LaneEmitter::emitPerLane(Operation &op, Value mask) {
  Location loc = op.getLoc();
  SmallVector<Value> results;
  for (Value result : op.getResults())
    results.push_back(placeholder(loc, vectorOf(result.getType())));
  for (unsigned lane = 0; lane < lanes; ++lane) {
    auto runLane = [&] {
      IRMapping mapping;
      for (Value operand : op.getOperands())
        mapping.map(operand, laneValue(builder, loc, operand, lane));
      Operation *copy = builder.clone(op, mapping);
      SmallVector<Value> updated;
      for (auto [index, result] : llvm::enumerate(copy->getResults()))
        updated.push_back(vector::InsertOp::create(
            builder, loc, result, results[index], ArrayRef<int64_t>{lane}));
      return updated;
    };
    // Under a mask: if (mask[lane]) { ... }.
    results = mask ? emitIf(loc,
                            vector::ExtractOp::create(builder, loc, mask,
                                                      ArrayRef<int64_t>{lane}),
                            results, runLane)
                   : runLane();
  }
  for (auto [result, vectorValue] : llvm::zip(op.getResults(), results))
    vectors[result] = vectorValue;
}

Value LaneEmitter::scaleI64(Location loc, Value value, int64_t factor) {
  if (factor == 1)
    return value;
  return arith::MulIOp::create(builder, loc, value,
                               constant(builder, loc, value.getType(), factor));
}

void LaneEmitter::emitAlloca(LLVM::AllocaOp alloca) {
  // Room for every lane's copy, interleaved element by element.
  Location loc = alloca.getLoc();
  std::optional<int64_t> count = constantInt(alloca.getArraySize());
  Type countType = alloca.getArraySize().getType();
  Value size = constant(builder, loc, countType, *count * lanes);
  auto copy = LLVM::AllocaOp::create(builder, loc, alloca.getType(),
                                     alloca.getElemType(), size,
                                     alloca.getAlignment().value_or(0));
  scalars[alloca.getResult()] = copy;
  offsetValues[alloca.getResult()] = constant(builder, loc, builder.getI64Type(), 0);
}

void LaneEmitter::emitPrivateGEP(LLVM::GEPOp gep) {
  Location loc = gep.getLoc();
  Type i64 = builder.getI64Type();
  Value pointer = gep.getResult();
  Operation *root = analysis.privateRootOf(pointer);
  bool asVector = analysis.offsetShapeOf(pointer).isVarying();
  Value offset = offsetValues.lookup(gep.getBase());
  if (asVector && !isa<VectorType>(offset.getType())) {
    // A uniform or strided offset spread over the lanes.
    Shape base = analysis.offsetShapeOf(gep.getBase());
    offset = arith::AddIOp::create(
        builder, loc, vector::BroadcastOp::create(builder, loc, vectorOf(i64), offset),
        offsets(builder, loc, i64, base.stride));
  }
  forEachGEPIndex(gep, analysis.dataLayout(), /*structs=*/false,
                  [&](GEPIndex index, int64_t scale) {
    Value term;
    if (Value dynamic = llvm::dyn_cast_if_present<Value>(index)) {
      // Lane 0's index, or every lane's; GEP indices are sign-extended.
      term = asVector ? vector(dynamic) : scalar(dynamic);
      Type wide = offset.getType();
      if (term.getType() != wide)
        term = getElementTypeOrSelf(term.getType()).isIndex()
                   ? arith::IndexCastOp::create(builder, loc, wide, term).getResult()
                   : arith::ExtSIOp::create(builder, loc, wide, term).getResult();
      term = scaleI64(loc, term, scale);
    } else {
      int64_t bytes = cast<IntegerAttr>(index).getInt() * scale;
      if (!bytes)
        return;
      term = constant(builder, loc, offset.getType(), bytes);
    }
    offset = arith::AddIOp::create(builder, loc, offset, term);
  });
  offsetValues[pointer] = offset;
  // Lane l of offset o: o * lanes + l * size bytes into the copy.
  Value memory = scalars.lookup(root->getResult(0));
  Value bytes = scaleI64(loc, offset, lanes);
  if (!asVector) {
    scalars[pointer] = LLVM::GEPOp::create(builder, loc, memory.getType(),
                                           builder.getI8Type(), memory,
                                           ValueRange{bytes});
    return;
  }
  int64_t size = analysis.privateAccessSize(root);
  bytes = arith::AddIOp::create(builder, loc, bytes, offsets(builder, loc, i64, size));
  vectors[pointer] = LLVM::GEPOp::create(builder, loc, vectorOf(memory.getType()),
                                         builder.getI8Type(), memory,
                                         ValueRange{bytes});
}

Block *LaneEmitter::splitHere() {
  Block *current = builder.getInsertionBlock();
  Block *next = new Block();
  current->getParent()->getBlocks().insertAfter(current->getIterator(), next);
  return next;
}

void LaneEmitter::emitMaskedOp(Operation &op, Value mask) {
  Location loc = op.getLoc();
  if (isa<LLVM::AllocaOp>(op) ||
      (isa<LLVM::GEPOp>(op) && analysis.privateRootOf(op.getResult(0))))
    return emitOp(op); // every lane's copy, in or out of the mask
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return emitLoad(load, mask);
  if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
    // A value equal in every lane, stored where every lane stores: once,
    // when lane 0 runs the block.
    if (mask == entryMask && shapeOf(store.getAddr()).isUniform() &&
        shapeOf(store.getValue()).isUniform())
      return emitOp(op);
    return emitStore(store, mask);
  }
  if (isa<LLVM::AssumeOp>(op))
    return; // may not hold in the lanes that do not run this block
  if (runsPerLane(&op) ||
      (!isElementwise(&op) && llvm::any_of(op.getResults(), [&](Value result) {
        return shapeOf(result).isVarying();
      })) ||
      (op.getNumResults() == 0 && !isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(op) &&
       !isMemoryEffectFree(&op)))
    return emitPerLane(op, mask);
  if (isa<LLVM::SDivOp, LLVM::UDivOp, LLVM::SRemOp, LLVM::URemOp, arith::DivSIOp,
          arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
          arith::CeilDivUIOp, arith::FloorDivSIOp>(op)) {
    // Lanes that do not run this block divide by 1, not by what they hold.
    Value divisor = op.getOperand(1);
    bool varying = shapeOf(op.getResult(0)).isVarying();
    Type type = divisor.getType();
    Value safe;
    if (varying) {
      safe = arith::SelectOp::create(builder, loc, mask, vector(divisor),
                                     constant(builder, loc, vectorOf(type), 1));
    } else {
      safe = arith::SelectOp::create(builder, loc, anyLane(loc, mask),
                                     scalar(divisor), constant(builder, loc, type, 1));
    }
    IRMapping mapping;
    mapping.map(op.getOperand(0),
                varying ? vector(op.getOperand(0)) : scalar(op.getOperand(0)));
    mapping.map(divisor, safe);
    Operation *copy = builder.clone(op, mapping);
    if (varying) {
      copy->getResult(0).setType(vectorOf(op.getResult(0).getType()));
      vectors[op.getResult(0)] = copy->getResult(0);
    } else {
      scalars[op.getResult(0)] = copy->getResult(0);
    }
    return;
  }
  emitOp(op);
}

void LaneEmitter::emitMaskedRegion(LLVM::CondBrOp branch,
                                   const LaneAnalysis::MaskedRegion &region) {
  Location loc = branch.getLoc();
  // Per block, the edges into it: the lanes taking each and what they bring.
  struct Edge {
    Value mask;
    SmallVector<Value> values;
  };
  DenseMap<Block *, SmallVector<Edge>> incoming;
  auto addEdge = [&](Block *dest, Value mask, OperandRange operands) {
    incoming[dest].push_back({mask, forwardAll(operands, dest)});
  };
  auto negate = [&](Value mask) {
    return arith::XOrIOp::create(builder, loc, mask, allLanes(loc, true));
  };
  // The arguments of `dest` from its edges: a select per lane where several.
  auto mergeArguments = [&](Block *dest) {
    SmallVector<Value> merged;
    ArrayRef<Edge> edges = incoming[dest];
    for (auto [index, argument] : llvm::enumerate(dest->getArguments())) {
      Value value = edges.front().values[index];
      for (const Edge &edge : edges.drop_front())
        value = arith::SelectOp::create(builder, loc, edge.mask,
                                        edge.values[index], value);
      merged.push_back(value);
    }
    return merged;
  };
  Value taken = vector(branch.getCondition());
  Value notTaken = negate(taken);
  if (entryMask) {
    taken = arith::AndIOp::create(builder, loc, taken, entryMask);
    notTaken = arith::AndIOp::create(builder, loc, notTaken, entryMask);
  }
  addEdge(branch.getTrueDest(), taken, branch.getTrueDestOperands());
  addEdge(branch.getFalseDest(), notTaken, branch.getFalseDestOperands());
  for (Block *block : region.blocks) {
    ArrayRef<Edge> edges = incoming[block];
    Value mask = edges.front().mask;
    for (const Edge &edge : edges.drop_front())
      mask = arith::OrIOp::create(builder, loc, mask, edge.mask);
    for (auto [argument, value] :
         llvm::zip(block->getArguments(), mergeArguments(block)))
      (shapeOf(argument).isVarying() ? vectors : scalars)[argument] = value;
    for (Operation &op : block->without_terminator())
      emitMaskedOp(op, mask);
    Operation *terminator = block->getTerminator();
    if (auto br = dyn_cast<LLVM::BrOp>(terminator)) {
      addEdge(br.getDest(), mask, br.getDestOperands());
      continue;
    }
    auto inner = cast<LLVM::CondBrOp>(terminator);
    Value condition = vector(inner.getCondition());
    addEdge(inner.getTrueDest(),
            arith::AndIOp::create(builder, loc, mask, condition),
            inner.getTrueDestOperands());
    addEdge(inner.getFalseDest(),
            arith::AndIOp::create(builder, loc, mask, negate(condition)),
            inner.getFalseDestOperands());
  }
  LLVM::BrOp::create(builder, loc, mergeArguments(region.join),
                     blocks.lookup(region.join));
  // The blocks run again unmasked when the lanes agree: forget this copy.
  for (Block *block : region.blocks) {
    for (BlockArgument argument : block->getArguments()) {
      scalars.erase(argument);
      vectors.erase(argument);
    }
    for (Operation &op : *block)
      for (Value result : op.getResults()) {
        scalars.erase(result);
        vectors.erase(result);
        offsetValues.erase(result);
      }
  }
}

void LaneEmitter::emitOp(Operation &op) {
  if (auto alloca = dyn_cast<LLVM::AllocaOp>(op))
    return emitAlloca(alloca);
  if (auto gep = dyn_cast<LLVM::GEPOp>(op);
      gep && analysis.privateRootOf(gep.getResult()))
    return emitPrivateGEP(gep);
  if (isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp>(op) &&
      analysis.privateRootOf(op.getOperand(0))) {
    // On the alloca itself (LLVM requires it): the copy of every lane.
    IRMapping mapping;
    mapping.map(op.getOperand(0), scalar(op.getOperand(0)));
    builder.clone(op, mapping);
    return;
  }
  if (auto load = dyn_cast<LLVM::LoadOp>(op); load && !shapeOf(load.getAddr()).isUniform())
    return emitLoad(load, Value());
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    if (!shapeOf(store.getAddr()).isUniform() || !shapeOf(store.getValue()).isUniform())
      return emitStore(store, Value());
  if (isa<LLVM::AssumeOp>(op) && !shapeOf(op.getOperand(0)).isUniform())
    return; // holds in every lane; nothing to say about the vector
  if (runsPerLane(&op))
    return emitPerLane(op, Value());

  bool varying = llvm::any_of(op.getResults(), [&](Value result) {
    return shapeOf(result).isVarying();
  });
  bool anyVaryingOperand = llvm::any_of(op.getOperands(), [&](Value operand) {
    return !shapeOf(operand).isUniform();
  });
  if (!varying && (op.getNumResults() || !anyVaryingOperand)) {
    // Uniform, or strided: the op on the lanes' first values.
    if (WrapCheck kind = analysis.wrapCheckOf(&op); kind != WrapCheck::None)
      emitWrapCheck(op, kind);
    IRMapping mapping;
    for (Value operand : op.getOperands())
      mapping.map(operand, scalar(operand));
    Operation *copy = builder.clone(op, mapping);
    for (auto [result, value] : llvm::zip(op.getResults(), copy->getResults()))
      scalars[result] = value;
    // Row r of a block variant is instance y + r.
    if (auto id = dyn_cast<InstanceIdOp>(op);
        id && row > 0 && id.getLevel() == 0 && id.getDim() == Dim::y)
      scalars[id.getResult()] = arith::AddIOp::create(
          builder, op.getLoc(), copy->getResult(0),
          arith::ConstantIndexOp::create(builder, op.getLoc(), row));
    return;
  }
  if (isElementwise(&op) && op.getNumResults() == 1) {
    IRMapping mapping;
    for (Value operand : op.getOperands())
      mapping.map(operand, vector(operand));
    // A uniform base stays scalar: LLVM then sees base + vector of indices,
    // which gathers and scatters address directly (32-bit indices too).
    if (auto gep = dyn_cast<LLVM::GEPOp>(op);
        gep && shapeOf(gep.getBase()).isUniform())
      mapping.map(gep.getBase(), scalar(gep.getBase()));
    Operation *copy = builder.clone(op, mapping);
    copy->getResult(0).setType(vectorOf(op.getResult(0).getType()));
    vectors[op.getResult(0)] = copy->getResult(0);
    return;
  }
  emitPerLane(op, Value());
}

void LaneEmitter::emitTerminator(Operation &op) {
  Location loc = op.getLoc();
  if (isa<ReturnOp>(op)) {
    // Outputs are equal in every instance (docs/Rationale.md §3.2): lane 0 gives them.
    SmallVector<Value> results{
        arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true))};
    for (Value output : op.getOperands())
      results.push_back(laneValue(builder, loc, output, 0));
    ReturnOp::create(builder, loc, results);
    return;
  }
  if (auto branch = dyn_cast<LLVM::BrOp>(op)) {
    Block *dest = branch.getDest();
    LLVM::BrOp::create(builder, loc, forwardAll(branch.getDestOperands(), dest),
                       blocks.lookup(dest));
    return;
  }
  if (auto branch = dyn_cast<LLVM::CondBrOp>(op)) {
    Block *trueDest = branch.getTrueDest(), *falseDest = branch.getFalseDest();
    SmallVector<Value> trueArgs = forwardAll(branch.getTrueDestOperands(), trueDest);
    SmallVector<Value> falseArgs =
        forwardAll(branch.getFalseDestOperands(), falseDest);
    Value condition = branch.getCondition();
    if (shapeOf(condition).isUniform()) {
      auto copy = LLVM::CondBrOp::create(builder, loc, scalar(condition),
                                         blocks.lookup(trueDest), trueArgs,
                                         blocks.lookup(falseDest), falseArgs);
      if (auto loopAnnotation = branch.getLoopAnnotationAttr())
        copy.setLoopAnnotationAttr(loopAnnotation);
      return;
    }
    // Divergent: all lanes true, all false, or, when they disagree, both
    // sides under masks (a masked region) or back to the scalar code. In a
    // remainder variant, the lanes that run decide.
    Value lanesTaken = vector(condition);
    Value allTaken = lanesTaken, anyTaken = lanesTaken;
    if (entryMask) {
      allTaken = arith::OrIOp::create(
          builder, loc, lanesTaken,
          arith::XOrIOp::create(builder, loc, entryMask, allLanes(loc, true)));
      anyTaken = arith::AndIOp::create(builder, loc, lanesTaken, entryMask);
    }
    Value all = vector::ReductionOp::create(
        builder, loc, vector::CombiningKind::AND, allTaken);
    Value any = vector::ReductionOp::create(
        builder, loc, vector::CombiningKind::OR, anyTaken);
    Block *check = splitHere();
    LLVM::CondBrOp::create(builder, loc, all, blocks.lookup(trueDest), trueArgs,
                           check, ValueRange{});
    builder.setInsertionPointToStart(check);
    const LaneAnalysis::MaskedRegion *region = analysis.maskedRegionOf(branch);
    Block *mixed = bail;
    if (region) {
      mixed = new Block();
      check->getParent()->getBlocks().insertAfter(check->getIterator(), mixed);
    }
    LLVM::CondBrOp::create(builder, loc, any, mixed, ValueRange{},
                           blocks.lookup(falseDest), falseArgs);
    if (region) {
      builder.setInsertionPointToStart(mixed);
      emitMaskedRegion(branch, *region);
    }
    return;
  }
  if (auto branch = dyn_cast<LLVM::SwitchOp>(op)) {
    SmallVector<Block *> caseDests;
    SmallVector<SmallVector<Value>> caseArgs;
    for (unsigned i = 0; i < branch.getCaseDestinations().size(); ++i) {
      Block *dest = branch.getCaseDestinations()[i];
      caseDests.push_back(blocks.lookup(dest));
      caseArgs.push_back(forwardAll(branch.getCaseOperands(i), dest));
    }
    SmallVector<ValueRange> caseArgRanges(caseArgs.begin(), caseArgs.end());
    LLVM::SwitchOp::create(
        builder, loc, scalar(branch.getValue()),
        blocks.lookup(branch.getDefaultDestination()),
        forwardAll(branch.getDefaultOperands(), branch.getDefaultDestination()),
        branch.getCaseValuesAttr(), caseDests, caseArgRanges);
    return;
  }
  builder.clone(op); // llvm.unreachable
}

void LaneEmitter::emit(LeafOp leaf, LeafOp variant) {
  Region &region = variant.getBody();
  // Blocks first, so that branches can name them.
  for (Block *source : analysis.blockOrder()) {
    Block *block = new Block();
    region.push_back(block);
    blocks[source] = block;
    for (BlockArgument argument : source->getArguments()) {
      Shape shape = shapeOf(argument);
      Type type = argument.getType();
      unsigned count = analysis.isRowDependent(argument) ? rows : 1;
      for (row = 0; row < count; ++row) {
        BlockArgument mapped = block->addArgument(
            shape.isVarying() ? vectorOf(type) : type, argument.getLoc());
        (shape.isVarying() ? vectors : scalars)[argument] = mapped;
      }
      row = 0;
    }
  }
  if (masked) {
    // The lane count, after the leaf's inputs.
    Block *entry = blocks.lookup(analysis.blockOrder().front());
    Value count = entry->addArgument(IntegerType::get(context, 64), leaf.getLoc());
    builder.setInsertionPointToStart(entry);
    entryMask = vector::CreateMaskOp::create(
        builder, leaf.getLoc(), vectorOf(builder.getI1Type()),
        ValueRange{arith::IndexCastOp::create(builder, leaf.getLoc(),
                                              builder.getIndexType(), count)});
  }
  // Declined: false, and outputs nobody reads.
  bail = new Block();
  region.push_back(bail);
  builder.setInsertionPointToStart(bail);
  Location loc = leaf.getLoc();
  SmallVector<Value> results{
      arith::ConstantOp::create(builder, loc, builder.getBoolAttr(false))};
  for (Type type : leaf.getResultTypes())
    results.push_back(placeholder(loc, type));
  ReturnOp::create(builder, loc, results);

  for (Block *source : analysis.blockOrder()) {
    Block *block = blocks.lookup(source);
    if (entryMask && entryMask.getParentBlock() == block)
      builder.setInsertionPointAfterValue(entryMask);
    else
      builder.setInsertionPointToStart(block);
    for (Operation &op : *source) {
      if (op.hasTrait<::mlir::OpTrait::IsTerminator>()) {
        emitTerminator(op);
        continue;
      }
      // Ops whose values or effects differ between rows run once per row
      // (jammed: row after row for each op); the others once.
      bool perRow =
          rows > 1 &&
          (runsPerLane(&op) || isa<LLVM::AllocaOp>(op) ||
           llvm::any_of(op.getResults(),
                        [&](Value v) { return analysis.isRowDependent(v); }) ||
           (op.getNumResults() == 0 &&
            llvm::any_of(op.getOperands(),
                         [&](Value v) { return analysis.isRowDependent(v); })));
      for (row = 0; row < (perRow ? rows : 1); ++row)
        entryMask ? emitMaskedOp(op, entryMask) : emitOp(op);
      row = 0;
    }
  }
}

} // namespace

/// A variant of `leaf` emitted from `analysis`: `rows` > 1 for a block,
/// `masked` for the remainder variant.
static LeafOp emitVariant(LeafOp leaf, LaneAnalysis &analysis, unsigned lanes,
                          unsigned rows, bool masked = false) {
  OpBuilder b(leaf);
  b.setInsertionPointAfter(leaf);
  MLIRContext *context = leaf.getContext();
  SmallVector<Type> results{IntegerType::get(context, 1)};
  llvm::append_range(results, leaf.getResultTypes());
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  if (masked)
    inputs.push_back(IntegerType::get(context, 64));
  auto type = FunctionType::get(context, inputs, results);
  std::string name = (leaf.getSymName() + "__lanes" + Twine(lanes) +
                      (rows > 1 ? "x" + Twine(rows) : Twine()) +
                      (masked ? "_masked" : ""))
                         .str();
  auto variant = LeafOp::create(b, leaf.getLoc(), name, type);
  variant.getBody().getBlocks().clear(); // the emitter makes every block
  variant.setPrivate();
  if (ArrayAttr argAttrs = leaf.getArgAttrsAttr()) {
    SmallVector<Attribute> attrs(argAttrs.getValue());
    if (masked)
      attrs.push_back(b.getDictionaryAttr({}));
    variant.setArgAttrsAttr(b.getArrayAttr(attrs));
  }
  variant->setAttr(HPVMDialect::getLanesAttrName(), b.getI64IntegerAttr(lanes));
  if (rows > 1)
    variant->setAttr(HPVMDialect::getRowsAttrName(), b.getI64IntegerAttr(rows));
  variant->setAttr(HPVMDialect::getTargetsAttrName(),
                   b.getArrayAttr({TargetAttr::get(context, Target::cpu)}));
  LaneEmitter emitter(analysis, lanes, rows, masked, context);
  emitter.emit(leaf, variant);
  return variant;
}

LaneVariants mlir::hpvm::buildLaneVariants(LeafOp leaf, unsigned lanes,
                                           unsigned rows) {
  LaneVariants variants;
  for (Type type : leaf.getResultTypes())
    if (!isStorableScalar(type)) {
      llvm::raw_string_ostream(variants.reason) << "an output of type " << type;
      return variants;
    }
  LaneAnalysis analysis(leaf, lanes);
  if (failed(analysis.run(variants.reason, variants.where)))
    return variants;
  bool readsX = false;
  leaf.walk([&](InstanceIdOp id) {
    readsX |= id.getLevel() == 0 && id.getDim() == Dim::x;
  });
  if (!readsX) {
    variants.reason = "its instances do not read their x id";
    return variants;
  }
  variants.lanes = emitVariant(leaf, analysis, lanes, 1);
  variants.remainder = emitVariant(leaf, analysis, lanes, 1, /*masked=*/true);
  if (rows > 1) {
    variants.blockReason = analysis.rowRefusal();
    if (variants.blockReason.empty())
      variants.block = emitVariant(leaf, analysis, lanes, rows);
  }
  return variants;
}

unsigned mlir::hpvm::getLaneElementBits(LeafOp leaf) {
  unsigned narrowest = 0;
  leaf.walk([&](Operation *op) {
    Type moved;
    if (auto load = dyn_cast<LLVM::LoadOp>(op))
      moved = load.getType();
    else if (auto store = dyn_cast<LLVM::StoreOp>(op))
      moved = store.getValue().getType();
    if (moved && isa<FloatType>(moved)) {
      unsigned width = moved.getIntOrFloatBitWidth();
      narrowest = narrowest ? std::min(narrowest, width) : width;
    }
  });
  return narrowest ? narrowest : 32;
}

unsigned mlir::hpvm::getDefaultLaneCount(unsigned elementBits,
                                         unsigned vectorBits) {
  constexpr unsigned cacheLineBits = 512;
  return std::max(2u, std::max(vectorBits, cacheLineBits) / elementBits);
}

unsigned mlir::hpvm::getDefaultRowCount(unsigned lanes, unsigned elementBits,
                                        unsigned vectorBits) {
  unsigned registers = vectorBits >= 512 ? 32 : 16;
  unsigned perRow = std::max(1u, (lanes * elementBits + vectorBits - 1) / vectorBits);
  return std::clamp(registers / perRow, 1u, 8u);
}
