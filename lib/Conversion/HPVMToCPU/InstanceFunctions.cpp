//===- InstanceFunctions.cpp - Frames, instance and range functions ------===//
// The layer every node lowering builds on: instance functions (allocations
// and grid queries lowered, linkage), frames of internal-node instances,
// parallel-for bodies and the range functions that run a node's instances
// over a box of its grid. Calls only CPULowering.cpp; the files that run
// nodes (LowerNodes, LowerBarriers, CollapseGrids, LowerConcurrency, ...)
// call into it, never the other way.

#include "CPULowering.h"
#include "HPVM/Conversion/GridQueries.h"
#include "HPVM/Conversion/ApplyPatternsOnce.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

void CPULowering::markAlwaysInline(func::FuncOp function) {
  // An instance function runs once per instance inside a range loop: inlined,
  // the loop sees the body (hoisting, vectorization across instances).
  function->setAttr("passthrough",
                    ArrayAttr::get(context, {StringAttr::get(context, "alwaysinline")}));
}

void CPULowering::markNoInline(func::FuncOp function) {
  function->setAttr("passthrough",
                    ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
}

void CPULowering::markInternal(func::FuncOp function) {
  // Private to this module in LLVM too: programs linked together must not
  // clash on node names, and inlined copies can be dropped.
  function.setPrivate();
  function->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
}

void CPULowering::lowerAllocs(func::FuncOp function) {
  function.walk([&](AllocOp alloc) {
    OpBuilder b(alloc);
    Location loc = alloc.getLoc();
    // HPVM-C's __hpvm__malloc: a pointer to the given number of bytes.
    Value memory =
        isa<LLVM::LLVMPointerType>(alloc.getType())
            ? cg.callRuntime(b, loc, RuntimeFn::Malloc,
                             {cg.toI64(b, loc, alloc.getDynamicSizes().front())})
            : memref::AllocOp::create(b, loc, cast<MemRefType>(alloc.getType()),
                                      alloc.getDynamicSizes())
                  .getResult();
    alloc.replaceAllUsesWith(memory);
    alloc.erase();
  });
}

namespace {
/// The CPU's grid: the leaf's own ids and extents are arguments of its
/// instance function; an ancestor's are in its frame, `level` - 1 parent hops
/// from the function's parent frame argument.
struct FrameGridQueries : GridQueryStrategy {
  FrameGridQueries(CPUCodeGen &lowering, Block &entry, unsigned first)
      : lowering(lowering) {
    for (unsigned d = 0; d < 3; ++d) {
      ids[d] = entry.getArgument(first + d);
      extents[d] = entry.getArgument(first + 3 + d);
    }
    parentFrame = entry.getArgument(first + 6);
  }

  Value lowerGridQuery(OpBuilder &b, Operation *query, bool isId, unsigned dim,
                       unsigned level) override {
    if (level == 0)
      return isId ? ids[dim] : extents[dim];
    Location loc = query->getLoc();
    LLVM::LLVMStructType frameType = lowering.getFrameType();
    // Level 1 is the parent's frame; each further level one more hop.
    Value frame = parentFrame;
    for (unsigned k = 1; k < level; ++k)
      frame = LLVM::LoadOp::create(
          b, loc, lowering.getPointerType(),
          lowering.fieldAddress(b, loc, frameType, frame, {FrameParent}));
    Value address =
        lowering.fieldAddress(b, loc, frameType, frame,
                              {isId ? FrameIds : FrameExtents, static_cast<int32_t>(dim)});
    return lowering.toIndex(b, loc,
                            LLVM::LoadOp::create(b, loc, b.getI64Type(), address));
  }

  CPUCodeGen &lowering;
  Value ids[3], extents[3], parentFrame;
};
} // namespace

void CPULowering::lowerGridQueries(func::FuncOp function, unsigned first) {
  SmallVector<Operation *> queries;
  function.walk([&](Operation *op) {
    if (isa<InstanceIdOp, NumInstancesOp>(op))
      queries.push_back(op);
  });
  if (queries.empty())
    return;
  FrameGridQueries strategy(cg, function.front(), first);
  RewritePatternSet patterns(context);
  populateGridQueryPatterns(patterns, strategy);
  (void)applyPatternsOncePerOp(queries, FrozenRewritePatternSet(std::move(patterns)),
                               [](Operation *) {}, /*stopAtFailure=*/false);
}

LLVM::LLVMFuncOp CPULowering::createParallelForBody(Location loc,
                                                    const Twine &name) {
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  // void (ptr context, ptr hpvm_rt_instance_range_t)
  auto type = abi::getFunctionType(context, RuntimeCallback::ParallelForFn);
  auto body = LLVM::LLVMFuncOp::create(b, loc, cg.uniqueName(name.str()), type,
                                       LLVM::Linkage::Internal);
  body.addEntryBlock(b);
  return body;
}

Value CPULowering::instanceCount(OpBuilder &b, Location loc, ValueRange dims) {
  Value count = cg.i64Constant(b, loc, 1);
  for (Value dim : dims)
    count = LLVM::MulOp::create(b, loc, count, cg.toI64(b, loc, dim));
  return count;
}

LLVM::LLVMStructType CPULowering::getOutputArraysType(NodeOpInterface node) {
  return LLVM::LLVMStructType::getLiteral(
      context,
      SmallVector<Type>(std::max<size_t>(node.getOutputTypes().size(), 1),
                        pointerType));
}

LLVM::LLVMStructType CPULowering::getRangeContextType(NodeOpInterface node,
                                                      uint64_t perInstanceInputs) {
  SmallVector<Type> fields;
  for (auto [port, type] : llvm::enumerate(node.getInputTypes()))
    fields.push_back((perInstanceInputs >> port) & 1 ? Type(pointerType)
                                                    : cg.getStorageType(type));
  fields.append({pointerType, pointerType, pointerType, pointerType});
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

Value CPULowering::allocateRangeContext(OpBuilder &b, Location loc,
                                        NodeOpInterface node, ValueRange inputs,
                                        Value parentFrame, Value outputs,
                                        uint64_t perInstanceInputs) {
  LLVM::LLVMStructType type = getRangeContextType(node, perInstanceInputs);
  Value rangeContext = cg.allocaInEntry(b, loc, type);
  unsigned numInputs = inputs.size();
  for (auto [index, input] : llvm::enumerate(inputs))
    cg.storeField(b, loc, type, rangeContext, index,
               (perInstanceInputs >> index) & 1 ? input : cg.toStorage(b, loc, input));
  cg.storeField(b, loc, type, rangeContext, numInputs, parentFrame);
  cg.storeField(b, loc, type, rangeContext, numInputs + 1, outputs);
  cg.storeField(b, loc, type, rangeContext, numInputs + 2, cg.nullPointer(b, loc));
  cg.storeField(b, loc, type, rangeContext, numInputs + 3, cg.nullPointer(b, loc));
  return rangeContext;
}

/// The end of the whole steps of `step` from `from` toward `to`:
/// from + floor(max(to - from, 0) / step) * step.
static Value wholeStepsEnd(OpBuilder &b, Location loc, Value from, Value to,
                           Value step) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value count = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, to, from), zero);
  return arith::AddIOp::create(
      b, loc, from,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, count, step),
                            step));
}

/// What a range function reads on entry (getRangeFunction): the fields of
/// its context and the box of instances it runs.
struct CPULowering::RangeBody {
  /// The inputs (arrays where per instance), parent frame, outputs, spill
  /// and per-instance output arrays of the context.
  SmallVector<Value> inputs;
  Value parentFrame, outputs, spill, outputArrays;
  /// Index constants 0 and 1.
  Value zero, one;
  /// The box [begin, end) of a grid of `extent` (0, 1 and 1 beyond the rank).
  Value begin[3], end[3], extent[3];
  /// An internal node's frame, which each instance gives its ids.
  Value frame;
};

void CPULowering::storeFrameId(OpBuilder &b, Location loc, Value frame,
                               int32_t d, Value id) {
  LLVM::StoreOp::create(b, loc, cg.toI64(b, loc, id),
                        cg.fieldAddress(b, loc, frameType, frame, {FrameIds, d}));
}

Value CPULowering::loadRangeBound(OpBuilder &b, Location loc, Value instances,
                                  InstanceRange::Field field, int32_t d) {
  return cg.toIndex(b, loc, abi::loadField<InstanceRange>(b, loc, b.getI64Type(), instances,
                                                       field, d));
}

/// Loops from dimension `rank` - 1 down to `lowest` over [begin, end) (x is
/// the fastest dimension: it gets the innermost loop); leaves `b` in the
/// innermost body and sets `ids` of those dimensions to their induction
/// variables.
static void buildInstanceLoops(OpBuilder &b, Location loc, unsigned rank,
                               int32_t lowest, ArrayRef<Value> begin,
                               ArrayRef<Value> end, Value step,
                               MutableArrayRef<Value> ids) {
  for (int32_t d = static_cast<int32_t>(rank) - 1; d >= lowest; --d) {
    auto loop = scf::ForOp::create(b, loc, begin[d], end[d], step);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ids[d] = loop.getInductionVar();
  }
}

CPULowering::RangeBody
CPULowering::loadRangeBody(OpBuilder &b, Location loc, NodeOpInterface node,
                           unsigned rank, Value context, Value instances,
                           PerInstancePorts perInstance) {
  RangeBody body;
  ArrayRef<Type> inputTypes = node.getInputTypes();
  LLVM::LLVMStructType contextType =
      getRangeContextType(node, perInstance.inputs);
  // Per-instance inputs stay arrays here; each instance loads its element.
  for (auto [index, inputType] : llvm::enumerate(inputTypes)) {
    Value field = cg.loadField(b, loc, contextType, context, index);
    body.inputs.push_back((perInstance.inputs >> index) & 1
                              ? field
                              : cg.fromStorage(b, loc, field, inputType));
  }
  unsigned numInputs = inputTypes.size();
  body.parentFrame = cg.loadField(b, loc, contextType, context, numInputs);
  body.outputs = cg.loadField(b, loc, contextType, context, numInputs + 1);
  body.spill = cg.loadField(b, loc, contextType, context, numInputs + 2);
  body.outputArrays = cg.loadField(b, loc, contextType, context, numInputs + 3);

  body.zero = arith::ConstantIndexOp::create(b, loc, 0);
  body.one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int32_t d = 0; d < 3; ++d) {
    body.begin[d] = body.zero;
    body.end[d] = body.extent[d] = body.one;
  }
  for (int32_t d = 0; d < static_cast<int32_t>(rank); ++d) {
    body.begin[d] = loadRangeBound(b, loc, instances, InstanceRange::Begin, d);
    body.end[d] = loadRangeBound(b, loc, instances, InstanceRange::End, d);
    body.extent[d] = loadRangeBound(b, loc, instances, InstanceRange::Extent, d);
  }
  if (!isa<LeafOp>(node.getOperation())) {
    // One frame per call: each instance overwrites its ids before running.
    body.frame = cg.allocateFrame(b, loc,
                               {cg.toI64(b, loc, body.extent[0]),
                                cg.toI64(b, loc, body.extent[1]),
                                cg.toI64(b, loc, body.extent[2])},
                               body.parentFrame);
  }
  return body;
}

void CPULowering::runLockStepRows(OpBuilder &b, Location loc,
                                  const RangeBody &body, unsigned rank,
                                  func::FuncOp lanes, unsigned width) {
  Value zero = body.zero;
  Value fromStart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          body.begin[0], zero);
  Value toEnd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, body.end[0],
      arith::ConstantIndexOp::create(b, loc, width));
  auto wholeRows = scf::IfOp::create(
      b, loc, arith::AndIOp::create(b, loc, fromStart, toEnd),
      /*withElseRegion=*/true);
  OpBuilder rb = wholeRows.getThenBodyBuilder();
  Value rowIds[3] = {zero, zero, zero};
  buildInstanceLoops(rb, loc, rank, 1, body.begin, body.end, body.one, rowIds);
  SmallVector<Value> laneArgs(body.inputs);
  laneArgs.append({zero, rowIds[1], rowIds[2], body.extent[0], body.extent[1],
                   body.extent[2], body.parentFrame});
  func::CallOp::create(rb, loc, lanes, laneArgs);
  b.setInsertionPoint(wholeRows.elseBlock()->getTerminator());
}

void CPULowering::runRangeInLanes(OpBuilder &b, Location loc, LeafOp leaf,
                                  const RangeBody &body, unsigned rank) {
  const Value *begin = body.begin, *end = body.end, *extent = body.extent;
  Value zero = body.zero, one = body.one;
  Value rowIds[3] = {zero, zero, zero};
  unsigned blockRows = rank >= 2 ? getBlockRows(leaf) : 0;
  buildInstanceLoops(b, loc, rank, blockRows ? 2 : 1, body.begin, body.end, one,
                     rowIds);
  if (blockRows) {
    // Whole blocks of rows, then the rows left one by one.
    Value rows = arith::ConstantIndexOp::create(b, loc, blockRows);
    Value full = wholeStepsEnd(b, loc, begin[1], end[1], rows);
    auto blocks = scf::ForOp::create(b, loc, begin[1], full, rows);
    {
      OpBuilder bb(blocks.getBody()->getTerminator());
      runInstanceBlockInLanes(
          bb, loc, leaf, begin[0], end[0], blocks.getInductionVar(),
          [&](OpBuilder &, Value x, Value y) {
            SmallVector<Value> args(body.inputs);
            args.append({x, y, rowIds[2], extent[0], extent[1], extent[2],
                         body.parentFrame});
            return args;
          });
    }
    auto left = scf::ForOp::create(b, loc, full, end[1], one);
    b.setInsertionPoint(left.getBody()->getTerminator());
    rowIds[1] = left.getInductionVar();
  }
  runInstanceRowInLanes(
      b, loc, leaf, begin[0], end[0],
      [&](OpBuilder &, Value x) {
        SmallVector<Value> args(body.inputs);
        args.append({x, rowIds[1], rowIds[2], extent[0], extent[1], extent[2],
                     body.parentFrame});
        return args;
      },
      [&](OpBuilder &rb, Value x, ValueRange results) {
        if (results.empty())
          return;
        SmallVector<Value> ids{x};
        for (int32_t d = 1; d < static_cast<int32_t>(rank); ++d)
          ids.push_back(rowIds[d]);
        publishOutputs(rb, loc, allZero(rb, loc, ids), body.outputs,
                       leaf.getResultTypes(), results);
      });
}

void CPULowering::runRangeByInstance(OpBuilder &b, Location loc,
                                     NodeOpInterface node,
                                     const RangeBody &body, unsigned rank,
                                     std::optional<unsigned> phase,
                                     PerInstancePorts perInstance) {
  const Value *extent = body.extent;
  Value zero = body.zero;
  Value ids[3] = {zero, zero, zero};
  buildInstanceLoops(b, loc, rank, 0, body.begin, body.end, body.one, ids);
  // The linear instance id, x fastest: spill slots and per-instance values.
  Value linear;
  if (phase || perInstance.any())
    linear = cg.toI64(
        b, loc,
        arith::AddIOp::create(
            b, loc, ids[0],
            arith::MulIOp::create(
                b, loc, extent[0],
                arith::AddIOp::create(
                    b, loc, ids[1],
                    arith::MulIOp::create(b, loc, extent[1], ids[2])))));
  SmallVector<Value> args(body.inputs);
  for (auto [index, inputType] : llvm::enumerate(node.getInputTypes())) {
    if (!((perInstance.inputs >> index) & 1))
      continue;
    Type storage = cg.getStorageType(inputType);
    Value element = LLVM::GEPOp::create(b, loc, pointerType, storage,
                                        body.inputs[index],
                                        ArrayRef<LLVM::GEPArg>{linear});
    args[index] = cg.fromStorage(
        b, loc, LLVM::LoadOp::create(b, loc, storage, element), inputType);
  }
  func::FuncOp callee = nodeFunctions.lookup(node.getOperation());
  if (isa<LeafOp>(node.getOperation())) {
    args.append({ids[0], ids[1], ids[2], extent[0], extent[1], extent[2],
                 body.parentFrame});
    if (phase) {
      // This instance's spill slot: spill[x + nx * (y + ny * z)].
      callee = phaseFunctions.lookup(node.getOperation())[*phase];
      LLVM::LLVMStructType spillType = spillTypes.lookup(node.getOperation());
      args.push_back(LLVM::GEPOp::create(b, loc, pointerType, spillType,
                                         body.spill,
                                         ArrayRef<LLVM::GEPArg>{linear}));
    }
  } else {
    for (int32_t d = 0; d < static_cast<int32_t>(rank); ++d)
      storeFrameId(b, loc, body.frame, d, ids[d]);
    args.push_back(body.frame);
  }
  auto call = func::CallOp::create(b, loc, callee, args);
  if (perInstance.outputs) {
    LLVM::LLVMStructType arraysType = getOutputArraysType(node);
    for (auto [port, result] : llvm::enumerate(call.getResults())) {
      if (!((perInstance.outputs >> port) & 1))
        continue;
      Value array = cg.loadField(b, loc, arraysType, body.outputArrays, port);
      Type storage = cg.getStorageType(result.getType());
      Value element = LLVM::GEPOp::create(b, loc, pointerType, storage, array,
                                          ArrayRef<LLVM::GEPArg>{linear});
      LLVM::StoreOp::create(b, loc, cg.toStorage(b, loc, result), element);
    }
  }
  if (call.getNumResults() != 0 &&
      perInstance.outputs != (1ull << call.getNumResults()) - 1)
    publishOutputs(b, loc, allZero(b, loc, ArrayRef<Value>(ids, rank)),
                   body.outputs, node.getOutputTypes(), call.getResults());
}

LLVM::LLVMFuncOp CPULowering::getRangeFunction(NodeOpInterface node,
                                               unsigned rank,
                                               std::optional<unsigned> phase,
                                               PerInstancePorts perInstance) {
  RangeFunctionKey key{node.getOperation(), rank,
                       phase ? static_cast<int>(*phase) : -1, perInstance.inputs,
                       perInstance.outputs};
  if (LLVM::LLVMFuncOp existing = rangeFunctions.lookup(key))
    return existing;
  Location loc = node.getLoc();
  auto range = createParallelForBody(
      loc, "__hpvm_range_" + nodeName(node) + "_" + Twine(rank) +
               (phase ? "_phase" + Twine(*phase) : Twine()));
  rangeFunctions.add(key, range);
  Block *entry = &range.front();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  RangeBody body = loadRangeBody(b, loc, node, rank, entry->getArgument(0),
                                 entry->getArgument(1), perInstance);

  // A leaf whose tile rows run in lock-step: whole rows (the x range is the
  // full tile width, as the runtime cuts grids outermost dimension first) go
  // to the lane function; any other box runs instance by instance below.
  if (auto found = laneFunctions.find(node.getOperation());
      found != laneFunctions.end() && !phase && !perInstance.any())
    runLockStepRows(b, loc, body, rank, found->second.first,
                    found->second.second);

  // A leaf with a lane variant: y and z loops, then the x row in lanes.
  auto leaf = dyn_cast<LeafOp>(node.getOperation());
  if (leaf && !phase && !perInstance.any() && laneVariants.count(leaf))
    runRangeInLanes(b, loc, leaf, body, rank);
  else
    runRangeByInstance(b, loc, node, body, rank, phase, perInstance);
  b.setInsertionPointToEnd(entry);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return range;
}

unsigned CPULowering::getBlockRows(LeafOp leaf) {
  auto found = blockVariants.find(leaf.getOperation());
  return found == blockVariants.end() ? 0 : found->second.second;
}

void CPULowering::runInstanceBlockInLanes(
    OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to, Value y,
    function_ref<SmallVector<Value>(OpBuilder &, Value, Value)> argsFor) {
  auto [block, rows] = blockVariants.lookup(leaf.getOperation());
  unsigned lanes = laneVariants.lookup(leaf.getOperation()).second;
  func::FuncOp scalar = nodeFunctions.lookup(leaf.getOperation());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value width = arith::ConstantIndexOp::create(b, loc, lanes);
  Value height = arith::ConstantIndexOp::create(b, loc, rows);
  // Instances (x .. x + count - 1, y .. y + rows - 1) one by one.
  auto eachInstance = [&](OpBuilder &ob, Value x, Value count) {
    auto across = scf::ForOp::create(ob, loc, zero, height, one);
    OpBuilder ab(across.getBody()->getTerminator());
    Value row = arith::AddIOp::create(ab, loc, y, across.getInductionVar());
    auto along = scf::ForOp::create(ab, loc, x,
                                    arith::AddIOp::create(ab, loc, x, count), one);
    OpBuilder lb(along.getBody()->getTerminator());
    func::CallOp::create(lb, loc, scalar, argsFor(lb, along.getInductionVar(), row));
  };
  Value full = wholeStepsEnd(b, loc, from, to, width);
  auto groups = scf::ForOp::create(b, loc, from, full, width);
  {
    OpBuilder gb(groups.getBody()->getTerminator());
    Value x = groups.getInductionVar();
    Value ran = func::CallOp::create(gb, loc, block, argsFor(gb, x, y)).getResult(0);
    auto ifRan = scf::IfOp::create(gb, loc, ran, /*withElseRegion=*/true);
    OpBuilder db = ifRan.getElseBodyBuilder();
    eachInstance(db, x, width);
  }
  Value count = arith::SubIOp::create(b, loc, to, full);
  if (!remainderVariants.count(leaf.getOperation())) {
    eachInstance(b, full, count);
    return;
  }
  // The rest of each row under a mask.
  auto across = scf::ForOp::create(b, loc, zero, height, one);
  OpBuilder ab(across.getBody()->getTerminator());
  Value row = arith::AddIOp::create(ab, loc, y, across.getInductionVar());
  runRemainderInLanes(
      ab, loc, leaf, full, count,
      [&](OpBuilder &rb, Value x) { return argsFor(rb, x, row); },
      [](OpBuilder &, Value, ValueRange) {});
}

void CPULowering::runRemainderInLanes(
    OpBuilder &b, Location loc, LeafOp leaf, Value x, Value count,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
    function_ref<void(OpBuilder &, Value, ValueRange)> useResults) {
  func::FuncOp remainder = remainderVariants.lookup(leaf.getOperation());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto any = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count, zero),
      /*withElseRegion=*/false);
  OpBuilder tb = any.getThenBodyBuilder();
  // The leaf's inputs, the lane count, then the instance's ids.
  SmallVector<Value> args = argsFor(tb, x);
  args.insert(args.begin() + leaf.getNumArguments(),
              arith::IndexCastOp::create(tb, loc, tb.getI64Type(), count));
  runGroup(tb, loc, leaf, remainder, args, x, count, argsFor, useResults);
}

void CPULowering::runGroup(
    OpBuilder &b, Location loc, LeafOp leaf, func::FuncOp variant,
    ValueRange args, Value x, Value count,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
    function_ref<void(OpBuilder &, Value, ValueRange)> useResults) {
  auto group = func::CallOp::create(b, loc, variant, args);
  auto ifRan = scf::IfOp::create(b, loc, group.getResult(0),
                                 /*withElseRegion=*/true);
  OpBuilder tb = ifRan.getThenBodyBuilder();
  useResults(tb, x, group.getResults().drop_front());
  // Declined: the group instance by instance.
  OpBuilder db = ifRan.getElseBodyBuilder();
  Value one = arith::ConstantIndexOp::create(db, loc, 1);
  auto each = scf::ForOp::create(db, loc, x,
                                 arith::AddIOp::create(db, loc, x, count), one);
  OpBuilder eb(each.getBody()->getTerminator());
  auto instance = func::CallOp::create(eb, loc, nodeFunctions.lookup(leaf),
                                       argsFor(eb, each.getInductionVar()));
  useResults(eb, each.getInductionVar(), instance.getResults());
}

Value CPULowering::allZero(OpBuilder &b, Location loc, ValueRange ids) {
  Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value id : ids) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    all = arith::AndIOp::create(
        b, loc, all,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, id, zero));
  }
  return all;
}

void CPULowering::publishOutputs(OpBuilder &b, Location loc, Value isFirst,
                                 Value outputs, TypeRange types,
                                 ValueRange results) {
  auto ifFirst = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  OpBuilder thenBuilder = ifFirst.getThenBodyBuilder();
  LLVM::LLVMStructType outputType = cg.getStorageStruct(types);
  for (auto [index, result] : llvm::enumerate(results))
    cg.storeField(thenBuilder, loc, outputType, outputs, index,
               cg.toStorage(thenBuilder, loc, result));
}

bool CPULowering::runInstanceRowInLanes(
    OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
    function_ref<void(OpBuilder &, Value, ValueRange)> useResults) {
  auto found = laneVariants.find(leaf.getOperation());
  if (found == laneVariants.end())
    return false;
  auto [variant, lanes] = found->second;
  func::FuncOp scalar = nodeFunctions.lookup(leaf.getOperation());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value width = arith::ConstantIndexOp::create(b, loc, lanes);
  // [from, full) in whole groups, [full, to) one by one.
  Value full = wholeStepsEnd(b, loc, from, to, width);
  auto groups = scf::ForOp::create(b, loc, from, full, width);
  {
    OpBuilder gb(groups.getBody()->getTerminator());
    Value x = groups.getInductionVar();
    runGroup(gb, loc, leaf, variant, argsFor(gb, x), x, width, argsFor,
             useResults);
  }
  if (remainderVariants.count(leaf.getOperation())) {
    runRemainderInLanes(b, loc, leaf, full,
                        arith::SubIOp::create(b, loc, to, full), argsFor,
                        useResults);
    return true;
  }
  auto rest = scf::ForOp::create(b, loc, full, to, one);
  OpBuilder rb(rest.getBody()->getTerminator());
  auto instance = func::CallOp::create(rb, loc, scalar,
                                       argsFor(rb, rest.getInductionVar()));
  useResults(rb, rest.getInductionVar(), instance.getResults());
  return true;
}

/// Whether inlining `function` (a leaf function) into a loop over instances
/// keeps what it means and what the later passes can lower: only functions
/// LLVM would inline anyway (alwaysinline, as createNodeFunctions marks them;
/// a remainder variant is noinline), without argument attributes inlining
/// would lose, with one block (an scf.for body is one block), without stack
/// allocations (in the loop, an alloca would grow the stack with every
/// instance), and in dialects that every later pass lowers inside any
/// function (linalg, say, is lowered in func.func only).
static bool isInlinableLeafFunction(func::FuncOp function) {
  auto passthrough = function->getAttrOfType<ArrayAttr>("passthrough");
  if (function.isExternal() || !function.getBody().hasOneBlock() ||
      function.getArgAttrs() || function.getResAttrs() || !passthrough ||
      passthrough.size() != 1 ||
      passthrough[0] != StringAttr::get(function.getContext(), "alwaysinline"))
    return false;
  return !function
              .walk([](Operation *op) {
                bool allocates =
                    isa<memref::AllocaOp, memref::AllocaScopeOp, LLVM::AllocaOp>(op);
                bool loweredEverywhere =
                    isa<arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                        scf::SCFDialect, LLVM::LLVMDialect, vector::VectorDialect,
                        index::IndexDialect, func::FuncDialect>(op->getDialect());
                return allocates || !loweredEverywhere ? WalkResult::interrupt()
                                                       : WalkResult::advance();
              })
              .wasInterrupted();
}

void CPULowering::inlineSingleCallLeaves() {
  // The calls of every function. Leaf functions are private, and the
  // lowering refers to them only by calls.
  DenseMap<StringAttr, unsigned> uses;
  DenseMap<StringAttr, func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    StringAttr callee = call.getCalleeAttr().getAttr();
    ++uses[callee];
    calls[callee] = call;
  });
  for (auto &[node, function] : nodeFunctions) {
    if (!isa<LeafOp>(node) || !function)
      continue;
    StringAttr name = function.getSymNameAttr();
    func::CallOp call = calls.lookup(name);
    if (!call || uses.lookup(name) != 1 || !isInlinableLeafFunction(function))
      continue;
    // The body in place of the call; the returned values replace its results.
    Block &body = function.front();
    IRMapping mapping;
    mapping.map(body.getArguments(), call.getOperands());
    OpBuilder b(call);
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    for (auto [result, returned] :
         llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
    call.erase();
    function.erase();
    function = {};
  }
}
