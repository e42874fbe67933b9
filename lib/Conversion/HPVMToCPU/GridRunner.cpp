//===- GridRunner.cpp - A node over its grid ------------------------------===//
// A grid runs as one runtime parallel-for over an outlined range function
// (GridRunner.h): the range functions run a box of instances one by one, in
// lanes or in lock-step tiles; a lock-step tile runs on the thread that runs
// it, a contraction through its plan. Sees only the shared state.
#include "GridRunner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

/// A grid small enough to be one tile: constant extents, at most this many
/// instances (hpvm-tile-nodes makes such grids).
static constexpr int64_t kMaxTileInstances = 4096;

static bool isSmallConstantGrid(ValueRange dims) {
  int64_t count = 1;
  for (Value dim : dims) {
    APInt extent;
    if (!matchPattern(dim, m_ConstantInt(&extent)) || extent.isNegative() ||
        extent.getSExtValue() > kMaxTileInstances)
      return false;
    count *= extent.getSExtValue();
    if (count > kMaxTileInstances)
      return false;
  }
  return true;
}

SmallVector<Value> GridRunner::runGrid(OpBuilder &b, Location loc, NodeOpInterface node,
                                       ValueRange dims, ValueRange inputs,
                                       Value parentFrame, PerInstancePorts perInstance,
                                       ArrayRef<Value> givenArrays) {
  TypeRange outputTypes = node.getOutputTypes();
  unsigned rank = dims.size();
  LLVM::LLVMStructType outputType = cg.getStorageStruct(outputTypes);
  Value outputs = outputTypes.empty() ? cg.nullPointer(b, loc)
                                      : cg.allocaInEntry(b, loc, outputType);
  Value context = allocateRangeContext(b, loc, node, inputs, parentFrame, outputs,
                                       perInstance.inputs);
  // Per-instance outputs: one array each, indexed by the linear instance id.
  SmallVector<Value> outputArrays(givenArrays);
  if (perInstance.outputs)
    outputArrays = storeOutputArrays(b, loc, node, dims, perInstance,
                                     givenArrays, context);

  auto extentsType = Uint64Array::get(b.getContext());
  Value extents = cg.allocaInEntry(b, loc, extentsType);
  for (int32_t d = 0; d < static_cast<int32_t>(rank); ++d) {
    Value address = Uint64Array::getElementAddress(b, loc, extentsType, extents, d);
    LLVM::StoreOp::create(b, loc, cg.toI64(b, loc, dims[d]), address);
  }
  auto leaf = dyn_cast<LeafOp>(node.getOperation());
  if (leaf && hasPhases(leaf)) {
    runPhases(b, loc, leaf, dims, extents, context);
  } else if (leaf && laneFunctions.count(leaf) && !perInstance.any() &&
             isSmallConstantGrid(dims)) {
    // A tile: its instances run in lock-step on the thread that runs the
    // tile, as a GPU thread block runs on one multiprocessor; the grid of
    // tiles around it is what runs in parallel.
    runTileInLockStep(b, loc, node, dims, context);
  } else if (!leaf || !contractions.count(leaf) || rank != 2 ||
             perInstance.any()) {
    // One parallel-for over the grid.
    launchRange(b, loc, node, rank, perInstance, extents, context);
  } else {
    // A leaf whose instances sum products, as one grid (not tiles): the
    // plan's tile ids are the parent's instance ids, which it takes to run
    // over the whole tiles x tiles grid from 0. A parent of one instance
    // (the usual root) is that grid with tiles 1 x 1; any other runs the
    // leaf as it is.
    runContractionGrid(b, loc, leaf, dims, inputs, parentFrame, outputs,
                       extents, context);
  }
  if (leaf)
    state.traceNodeDone(b, loc, node);
  // Inputs passed on as outputs are the node's inputs: no instance need
  // publish them (the tile, block and contraction variants do not), and a
  // grid without instances still has them.
  SmallVector<Value> results;
  for (unsigned index = 0, e = outputTypes.size(); index < e; ++index) {
    std::optional<unsigned> passedOn = state.getPassedOnInput(node.getOperation(), index);
    if ((perInstance.outputs >> index) & 1)
      results.push_back(outputArrays[index]);
    else if (passedOn && ((perInstance.inputs >> *passedOn) & 1))
      // Passed on from an input given per instance: one value each, not one.
      results.push_back(cg.fromStorage(b, loc,
                                    cg.loadField(b, loc, outputType, outputs, index),
                                    outputTypes[index]));
    else
      results.push_back(state.readGridOutput(b, loc, node.getOperation(), index, inputs,
                                       outputs, outputTypes));
  }
  return results;
}

Value GridRunner::instanceArrayBytes(OpBuilder &b, Location loc,
                                      ValueRange dims, Type type) {
  return LLVM::MulOp::create(b, loc, instanceCount(b, loc, dims),
                             cg.sizeOf(b, loc, cg.getStorageType(type)));
}

SmallVector<Value> GridRunner::allocateOutputArrays(
    OpBuilder &b, Location loc, NodeOpInterface node, ValueRange dims,
    PerInstancePorts perInstance) {
  TypeRange outputTypes = node.getOutputTypes();
  SmallVector<Value> arrays(outputTypes.size());
  for (auto [port, type] : llvm::enumerate(outputTypes)) {
    if (!((perInstance.outputs >> port) & 1))
      continue;
    arrays[port] = cg.callRuntime(b, loc, RuntimeFn::Malloc,
                                  {instanceArrayBytes(b, loc, dims, type)});
  }
  return arrays;
}

SmallVector<Value> GridRunner::storeOutputArrays(
    OpBuilder &b, Location loc, NodeOpInterface node, ValueRange dims,
    PerInstancePorts perInstance, ArrayRef<Value> givenArrays, Value context) {
  TypeRange outputTypes = node.getOutputTypes();
  LLVM::LLVMStructType contextType = getRangeContextType(node, perInstance.inputs);
  LLVM::LLVMStructType arraysType = getOutputArraysType(node);
  SmallVector<Value> outputArrays(givenArrays);
  if (outputArrays.empty())
    outputArrays = allocateOutputArrays(b, loc, node, dims, perInstance);
  Value arrays = cg.allocaInEntry(b, loc, arraysType);
  for (auto [port, array] : llvm::enumerate(outputArrays)) {
    if (!array)
      continue;
    cg.storeField(b, loc, arraysType, arrays, port, array);
    // Arrays from runNode are tracked (a kernel could have filled them):
    // the host writes them now.
    if (!givenArrays.empty())
      cg.checkStatus(
          b, loc,
          cg.callRuntime(b, loc, RuntimeFn::RequestHost,
                         {array, instanceArrayBytes(b, loc, dims, outputTypes[port]),
                          cg.i32Constant(b, loc, HPVM_RT_ACCESS_OUT)}),
          ("writing the outputs of @" + nodeName(node) + " on the host").str());
  }
  cg.storeField(b, loc, contextType, context, node.getInputTypes().size() + 3,
             arrays);
  return outputArrays;
}

void GridRunner::runTileInLockStep(OpBuilder &b, Location loc,
                                    NodeOpInterface node, ValueRange dims,
                                    Value context) {
  unsigned rank = dims.size();
  Value range = cg.allocaInEntry(b, loc, rangeType);
  for (int32_t d = 0; d < 3; ++d) {
    Value extent = d < static_cast<int32_t>(rank) ? cg.toI64(b, loc, dims[d])
                                                  : cg.i64Constant(b, loc, 1);
    abi::storeField<InstanceRange>(b, loc, range, InstanceRange::Begin,
                                   cg.i64Constant(b, loc, 0), d);
    abi::storeField<InstanceRange>(b, loc, range, InstanceRange::End, extent, d);
    abi::storeField<InstanceRange>(b, loc, range, InstanceRange::Extent, extent, d);
  }
  abi::storeField<InstanceRange>(b, loc, range, InstanceRange::Rank,
                                 cg.i32Constant(b, loc, rank));
  abi::storeField<InstanceRange>(b, loc, range, InstanceRange::WorkerIndex,
                                 cg.i32Constant(b, loc, 0));
  LLVM::CallOp::create(b, loc, getRangeFunction(node, rank),
                       ValueRange{context, range});
}

void GridRunner::launchRange(OpBuilder &b, Location loc, NodeOpInterface runs,
                              unsigned rank, PerInstancePorts perInstance,
                              Value extents, Value runContext) {
  Value body = LLVM::AddressOfOp::create(
      b, loc, getRangeFunction(runs, rank, std::nullopt, perInstance));
  Value status =
      cg.callRuntime(b, loc, RuntimeFn::ParallelFor,
                     {cg.i32Constant(b, loc, rank), extents, body, runContext});
  cg.checkStatus(b, loc, status,
              ("running the instances of @" + nodeName(runs)).str());
}

void GridRunner::runContractionGrid(OpBuilder &b, Location loc, LeafOp leaf,
                                     ValueRange dims, ValueRange inputs,
                                     Value parentFrame, Value outputs,
                                     Value extents, Value context) {
  LeafOp sums = contractions.lookup(leaf).first;
  LLVM::LLVMFuncOp plan = contractions.lookup(leaf).second;
  Value one = cg.i64Constant(b, loc, 1);
  auto parentExtentIsOne = [&](int32_t d) {
    Value extent = LLVM::LoadOp::create(
        b, loc, b.getI64Type(),
        cg.fieldAddress(b, loc, frameType, parentFrame, {FrameExtents, d}));
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, extent, one);
  };
  Value single = LLVM::AndOp::create(b, loc, parentExtentIsOne(0),
                                     parentExtentIsOne(1));
  auto planned = scf::IfOp::create(b, loc, TypeRange{pointerType}, single,
                                   /*withElseRegion=*/true);
  OpBuilder tb = planned.getThenBodyBuilder();
  SmallVector<Value> planArgs(inputs);
  planArgs.append({cg.toI64(tb, loc, dims[0]), cg.toI64(tb, loc, dims[1]), one, one});
  scf::YieldOp::create(
      tb, loc, LLVM::CallOp::create(tb, loc, plan, planArgs).getResults());
  OpBuilder eb = planned.getElseBodyBuilder();
  scf::YieldOp::create(eb, loc, cg.nullPointer(eb, loc));
  runContracted(
      b, loc, planned.getResult(0),
      [&](OpBuilder &lb) {
        launchRange(lb, loc, leaf, /*rank=*/2, {}, extents, context);
      },
      [&](OpBuilder &sb, Value buffer) {
        SmallVector<Value> sumsInputs(inputs);
        sumsInputs.append({buffer, cg.toI64(sb, loc, dims[0])});
        launchRange(sb, loc, sums, /*rank=*/2, {}, extents,
                    allocateRangeContext(sb, loc, sums, sumsInputs, parentFrame,
                                         outputs, /*perInstanceInputs=*/0));
      });
}

void GridRunner::runContracted(OpBuilder &b, Location loc, Value buffer,
                                function_ref<void(OpBuilder &)> runLeaf,
                                function_ref<void(OpBuilder &, Value)> runSums) {
  // Every instance's sum first (null: the plan declined), then the grid
  // reading them; the leaf as it is otherwise.
  Value declined = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, buffer,
                                        cg.nullPointer(b, loc));
  auto choice = scf::IfOp::create(b, loc, declined, /*withElseRegion=*/true);
  OpBuilder leafBuilder = choice.getThenBodyBuilder();
  runLeaf(leafBuilder);
  OpBuilder sumsBuilder = choice.getElseBodyBuilder();
  runSums(sumsBuilder, buffer);
  cg.callRuntime(sumsBuilder, loc, RuntimeFn::MemrefFree, {buffer});
}

LLVM::LLVMFuncOp GridRunner::createParallelForBody(Location loc,
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

Value GridRunner::instanceCount(OpBuilder &b, Location loc, ValueRange dims) {
  Value count = cg.i64Constant(b, loc, 1);
  for (Value dim : dims)
    count = LLVM::MulOp::create(b, loc, count, cg.toI64(b, loc, dim));
  return count;
}

LLVM::LLVMStructType GridRunner::getOutputArraysType(NodeOpInterface node) {
  return LLVM::LLVMStructType::getLiteral(
      context,
      SmallVector<Type>(std::max<size_t>(node.getOutputTypes().size(), 1),
                        pointerType));
}

LLVM::LLVMStructType GridRunner::getRangeContextType(NodeOpInterface node,
                                                      uint64_t perInstanceInputs) {
  SmallVector<Type> fields;
  for (auto [port, type] : llvm::enumerate(node.getInputTypes()))
    fields.push_back((perInstanceInputs >> port) & 1 ? Type(pointerType)
                                                    : cg.getStorageType(type));
  fields.append({pointerType, pointerType, pointerType, pointerType});
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

Value GridRunner::allocateRangeContext(OpBuilder &b, Location loc,
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
struct GridRunner::RangeBody {
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

void GridRunner::storeFrameId(OpBuilder &b, Location loc, Value frame,
                               int32_t d, Value id) {
  LLVM::StoreOp::create(b, loc, cg.toI64(b, loc, id),
                        cg.fieldAddress(b, loc, frameType, frame, {FrameIds, d}));
}

Value GridRunner::loadRangeBound(OpBuilder &b, Location loc, Value instances,
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

GridRunner::RangeBody
GridRunner::loadRangeBody(OpBuilder &b, Location loc, NodeOpInterface node,
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

void GridRunner::runLockStepRows(OpBuilder &b, Location loc,
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

void GridRunner::runRangeInLanes(OpBuilder &b, Location loc, LeafOp leaf,
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

void GridRunner::runRangeByInstance(OpBuilder &b, Location loc,
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
  func::FuncOp callee = state.nodeFunctions.lookup(node.getOperation());
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

LLVM::LLVMFuncOp GridRunner::getRangeFunction(NodeOpInterface node,
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

unsigned GridRunner::getBlockRows(LeafOp leaf) {
  auto found = blockVariants.find(leaf.getOperation());
  return found == blockVariants.end() ? 0 : found->second.second;
}

void GridRunner::runInstanceBlockInLanes(
    OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to, Value y,
    function_ref<SmallVector<Value>(OpBuilder &, Value, Value)> argsFor) {
  auto [block, rows] = blockVariants.lookup(leaf.getOperation());
  unsigned lanes = laneVariants.lookup(leaf.getOperation()).second;
  func::FuncOp scalar = state.nodeFunctions.lookup(leaf.getOperation());
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

void GridRunner::runRemainderInLanes(
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

void GridRunner::runGroup(
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
  auto instance = func::CallOp::create(eb, loc, state.nodeFunctions.lookup(leaf),
                                       argsFor(eb, each.getInductionVar()));
  useResults(eb, each.getInductionVar(), instance.getResults());
}

Value GridRunner::allZero(OpBuilder &b, Location loc, ValueRange ids) {
  Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value id : ids) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    all = arith::AndIOp::create(
        b, loc, all,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, id, zero));
  }
  return all;
}

void GridRunner::publishOutputs(OpBuilder &b, Location loc, Value isFirst,
                                 Value outputs, TypeRange types,
                                 ValueRange results) {
  auto ifFirst = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  OpBuilder thenBuilder = ifFirst.getThenBodyBuilder();
  LLVM::LLVMStructType outputType = cg.getStorageStruct(types);
  for (auto [index, result] : llvm::enumerate(results))
    cg.storeField(thenBuilder, loc, outputType, outputs, index,
               cg.toStorage(thenBuilder, loc, result));
}

bool GridRunner::isPlainGrid(LeafOp leaf, unsigned rank) {
  return !state.noCPUVersion.count(leaf) && !phaseFunctions.count(leaf) &&
         !laneFunctions.count(leaf) && !(rank == 2 && contractions.count(leaf));
}

bool GridRunner::runInstanceRowInLanes(
    OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
    function_ref<void(OpBuilder &, Value, ValueRange)> useResults) {
  auto found = laneVariants.find(leaf.getOperation());
  if (found == laneVariants.end())
    return false;
  auto [variant, lanes] = found->second;
  func::FuncOp scalar = state.nodeFunctions.lookup(leaf.getOperation());
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
