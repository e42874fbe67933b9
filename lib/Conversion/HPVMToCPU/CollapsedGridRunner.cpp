//===- CollapsedGridRunner.cpp - Nested grids as one parallel-for ---------===//
// A replicated internal node whose only child is a replicated leaf (the
// Parboil shape: a grid of tiles, each a grid of instances) would otherwise
// call the runtime once per tile. When nothing ties a tile's instances
// together (no barrier, no per-tile memory), the two grids run as
// one parallel-for over the combined space: dimension d has extent
// tiles[d] * tile[d], and combined index c is tile c / tile[d], instance
// c % tile[d]. The runtime chunks that space like any grid, and each chunk
// walks whole tile rows with the leaf inlined, x innermost, as an OpenMP
// loop nest over the same grids would.
#include "CollapsedGridRunner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

/// Fields of the collapsed context after the leaf's inputs.
enum CollapsedField : unsigned {
  CollapsedParent = 0,  // ptr: the parent frame of the tiles
  CollapsedTiles = 1,   // i64[3] (three fields): the grid of tiles
  CollapsedTile = 4,    // i64[3] (three fields): the grid of one tile
  CollapsedOutputs = 7, // ptr: the leaf's outputs, written by the first instance
};

LeafOp CollapsedGridRunner::getCollapsibleLeaf(NodeOpInterface node,
                                       PerInstancePorts perInstance) {
  if (!collapseGrids || perInstance.any())
    return {};
  auto internal = dyn_cast<InternalOp>(node.getOperation());
  if (!internal)
    return {};
  CreateNodeOp child;
  for (Operation &op : internal.getBodyBlock()) {
    if (auto create = dyn_cast<CreateNodeOp>(op)) {
      if (child)
        return {}; // siblings: scheduled as a graph per tile
      child = create;
    } else if (isa<EdgeOp>(op)) {
      return {};
    }
  }
  if (!child || child.getRank() == 0)
    return {};
  auto leaf = state.symbolTables.lookupNearestSymbolFrom<LeafOp>(internal,
                                                           child.getNodeAttr());
  // Barriers and lock-step tiles need the tile as a unit; hpvm.alloc memory
  // is the tile's to free. Outputs are equal in every instance
  // (docs/Rationale.md §3.2): the first instance of the first tile publishes them.
  if (!leaf || gridRunner.hasPhases(leaf) || gridRunner.hasLockStepTiles(leaf) ||
      state.allocatedOutputs.count(leaf))
    return {};
  return leaf;
}

SmallVector<Value> CollapsedGridRunner::runCollapsed(OpBuilder &b, Location loc,
                                             InternalOp internal, LeafOp leaf,
                                             ValueRange outerDims,
                                             ValueRange inputs,
                                             Value parentFrame) {
  // The tile's extents, from the internal node's extent arithmetic on its
  // inputs (equal in every tile: the inputs are).
  IRMapping mapping;
  for (auto [argument, input] :
       llvm::zip(internal.getBodyBlock().getArguments(), inputs))
    mapping.map(argument, input);
  CreateNodeOp child;
  SmallVector<Value> leafInputs(leaf.getNumArguments());
  // Which output of the leaf each output of the internal node is.
  SmallVector<unsigned> boundPorts(internal.getNumResults());
  for (Operation &op : internal.getBodyBlock()) {
    if (auto create = dyn_cast<CreateNodeOp>(op))
      child = create;
    else if (auto bind = dyn_cast<BindInOp>(op))
      leafInputs[bind.getDestPort()] = mapping.lookup(bind.getInput());
    else if (auto bind = dyn_cast<BindOutOp>(op))
      boundPorts[bind.getOutput()] = bind.getSourcePort();
    else
      b.clone(op, mapping);
  }
  unsigned rank = std::max<unsigned>(outerDims.size(), child.getRank());
  Value one = cg.i64Constant(b, loc, 1);
  SmallVector<Value> outer(3, one), inner(3, one);
  for (auto [d, dim] : llvm::enumerate(outerDims))
    outer[d] = cg.toI64(b, loc, dim);
  SmallVector<Value> tileDims;
  for (auto [d, dim] : llvm::enumerate(child.getDims())) {
    tileDims.push_back(mapping.lookup(dim));
    inner[d] = cg.toI64(b, loc, tileDims.back());
  }
  // The leaf's own ids run over the tile: its arrays must hold the tile.
  state.checkGridFitsInputs(b, loc, leaf, tileDims, leafInputs, /*perInstanceInputs=*/0);

  LLVM::LLVMStructType outputType = cg.getStorageStruct(leaf.getResultTypes());
  Value outputs = leaf.getNumResults() ? cg.allocaInEntry(b, loc, outputType)
                                       : cg.nullPointer(b, loc);
  // One parallel-for over the combined grid, running `runs` (the leaf or
  // its sums variant) with `runInputs`.
  auto launch = [&](OpBuilder &b, LeafOp runs, ArrayRef<Value> runInputs) {
    LLVM::LLVMStructType contextType = getCollapsedContextType(runs);
    Value context = cg.allocaInEntry(b, loc, contextType);
    for (auto [index, input] : llvm::enumerate(runInputs))
      cg.storeField(b, loc, contextType, context, index, cg.toStorage(b, loc, input));
    unsigned first = runInputs.size();
    cg.storeField(b, loc, contextType, context, first + CollapsedParent,
               parentFrame);
    cg.storeField(b, loc, contextType, context, first + CollapsedOutputs, outputs);
    auto extentsType = Uint64Array::get(b.getContext());
    Value extents = cg.allocaInEntry(b, loc, extentsType);
    for (int32_t d = 0; d < 3; ++d) {
      cg.storeField(b, loc, contextType, context, first + CollapsedTiles + d,
                 outer[d]);
      cg.storeField(b, loc, contextType, context, first + CollapsedTile + d,
                 inner[d]);
      Value address = Uint64Array::getElementAddress(b, loc, extentsType, extents, d);
      LLVM::StoreOp::create(
          b, loc, LLVM::MulOp::create(b, loc, outer[d], inner[d]), address);
    }
    Value body = LLVM::AddressOfOp::create(
        b, loc, getCollapsedRangeFunction(internal, runs, rank));
    Value status =
        cg.callRuntime(b, loc, RuntimeFn::ParallelFor,
                       {cg.i32Constant(b, loc, rank), extents, body, context});
    cg.checkStatus(b, loc, status,
                "running the instances of " + atName(runs.getSymName()) + " in " +
                    atName(internal.getSymName()));
  };
  std::pair<LeafOp, LLVM::LLVMFuncOp> contraction = gridRunner.getContraction(leaf);
  if (!contraction.first || rank != 2) {
    launch(b, leaf, leafInputs);
  } else {
    // Every instance's sum first (the plan declines with a null buffer),
    // then the grid reading them; the leaf as it is otherwise.
    LeafOp sums = contraction.first;
    LLVM::LLVMFuncOp plan = contraction.second;
    SmallVector<Value> planArgs(leafInputs);
    planArgs.append({inner[0], inner[1], outer[0], outer[1]});
    gridRunner.runContracted(
        b, loc, LLVM::CallOp::create(b, loc, plan, planArgs).getResult(),
        [&](OpBuilder &tb) { launch(tb, leaf, leafInputs); },
        [&](OpBuilder &eb, Value buffer) {
          SmallVector<Value> sumsInputs(leafInputs);
          sumsInputs.append(
              {buffer, LLVM::MulOp::create(eb, loc, outer[0], inner[0])});
          launch(eb, sums, sumsInputs);
        });
  }
  SmallVector<Value> results;
  for (unsigned port : boundPorts)
    results.push_back(state.readGridOutput(b, loc, leaf, port, leafInputs, outputs,
                                     leaf.getResultTypes()));
  return results;
}


LLVM::LLVMStructType CollapsedGridRunner::getCollapsedContextType(LeafOp leaf) {
  // { leaf inputs..., ptr parent frame, i64 tiles[3], i64 tile[3],
  //   ptr outputs }
  SmallVector<Type> fields;
  for (Type type : leaf.getArgumentTypes())
    fields.push_back(cg.getStorageType(type));
  fields.push_back(pointerType);
  fields.append(6, IntegerType::get(context, 64));
  fields.push_back(pointerType);
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

/// What the body of a collapsed grid reads on entry, and the ids its loops
/// reach (getCollapsedRangeFunction).
struct CollapsedGridRunner::CollapsedBody {
  /// The leaf's inputs, the tile's frame and the leaf's outputs (null
  /// without).
  SmallVector<Value> args;
  Value frame, outputs;
  /// Index constants 0 and 1.
  Value zero, unit;
  /// The grid of one tile, and the box [begin, end) of the combined space.
  Value inner[3], begin[3], end[3];
  /// The leaf's instance ids within the tile (0 where no loop set them).
  Value ids[3];
  /// The combined indices of z and y the loops reached.
  SmallVector<Value> combinedIds;
};

CollapsedGridRunner::CollapsedBody
CollapsedGridRunner::loadCollapsedBody(OpBuilder &b, Location loc, LeafOp leaf,
                               unsigned rank, Value contextPtr,
                               Value instances) {
  CollapsedBody body;
  LLVM::LLVMStructType contextType = getCollapsedContextType(leaf);
  for (auto [index, inputType] : llvm::enumerate(leaf.getArgumentTypes()))
    body.args.push_back(cg.fromStorage(
        b, loc, cg.loadField(b, loc, contextType, contextPtr, index), inputType));
  unsigned first = leaf.getNumArguments();
  Value parentFrame =
      cg.loadField(b, loc, contextType, contextPtr, first + CollapsedParent);
  Value tileGrid[3];
  for (int32_t d = 0; d < 3; ++d) {
    tileGrid[d] = cg.loadField(b, loc, contextType, contextPtr, first + CollapsedTiles + d);
    body.inner[d] = cg.toIndex(b, loc, cg.loadField(b, loc, contextType, contextPtr,
                                              first + CollapsedTile + d));
  }
  // The tile's frame, seen by the leaf as its parent (level 1).
  body.frame = cg.allocateFrame(b, loc, tileGrid, parentFrame);

  body.zero = arith::ConstantIndexOp::create(b, loc, 0);
  body.unit = arith::ConstantIndexOp::create(b, loc, 1);
  for (int32_t d = 0; d < 3; ++d) {
    body.begin[d] = body.ids[d] = body.zero;
    body.end[d] = body.unit;
  }
  for (int32_t d = 0; d < static_cast<int32_t>(rank); ++d) {
    body.begin[d] = gridRunner.loadRangeBound(b, loc, instances, InstanceRange::Begin, d);
    body.end[d] = gridRunner.loadRangeBound(b, loc, instances, InstanceRange::End, d);
  }
  return body;
}

void CollapsedGridRunner::emitCollapsedRows(OpBuilder &rb, Location loc, LeafOp leaf,
                                    CollapsedBody &body, unsigned rows) {
  const Value *begin = body.begin, *end = body.end, *inner = body.inner;
  Value firstTile = arith::DivUIOp::create(rb, loc, begin[0], inner[0]);
  Value lastTile = arith::CeilDivUIOp::create(rb, loc, end[0], inner[0]);
  auto tiles = scf::ForOp::create(rb, loc, firstTile, lastTile, body.unit);
  OpBuilder tb(tiles.getBody()->getTerminator());
  Value tile = tiles.getInductionVar();
  gridRunner.storeFrameId(tb, loc, body.frame, 0, tile);
  Value base = arith::MulIOp::create(tb, loc, tile, inner[0]);
  Value from = arith::MaxSIOp::create(
      tb, loc, arith::SubIOp::create(tb, loc, begin[0], base), body.zero);
  Value to = arith::MinSIOp::create(
      tb, loc, arith::SubIOp::create(tb, loc, end[0], base), inner[0]);
  auto argsForXY = [&](OpBuilder &, Value x, Value y) {
    SmallVector<Value> rowArgs(body.args);
    rowArgs.append(
        {x, y, body.ids[2], inner[0], inner[1], inner[2], body.frame});
    return rowArgs;
  };
  if (rows > 1) {
    gridRunner.runInstanceBlockInLanes(tb, loc, leaf, from, to, body.ids[1], argsForXY);
    return;
  }
  auto argsFor = [&](OpBuilder &ab, Value x) {
    return argsForXY(ab, x, body.ids[1]);
  };
  auto useResults = [&](OpBuilder &ub, Value x, ValueRange results) {
    if (results.empty())
      return;
    SmallVector<Value> combined(body.combinedIds);
    combined.push_back(arith::AddIOp::create(ub, loc, base, x));
    gridRunner.publishOutputs(ub, loc, gridRunner.allZero(ub, loc, combined), body.outputs,
                   leaf.getResultTypes(), results);
  };
  // A leaf with a lane variant runs the row in groups of lanes.
  if (!gridRunner.runInstanceRowInLanes(tb, loc, leaf, from, to, argsFor, useResults)) {
    auto row = scf::ForOp::create(tb, loc, from, to, body.unit);
    OpBuilder ib(row.getBody()->getTerminator());
    Value x = row.getInductionVar();
    auto call = func::CallOp::create(ib, loc, state.nodeFunctions.lookup(leaf),
                                     argsFor(ib, x));
    useResults(ib, x, call.getResults());
  }
}

void CollapsedGridRunner::emitCollapsedBlockRows(OpBuilder &b, Location loc,
                                         LeafOp leaf, CollapsedBody &body,
                                         unsigned blockRows) {
  // while (c < end) { a block of rows from c if it fits in the tile and
  // the range, else the row c }
  Type index = b.getIndexType();
  auto loop =
      scf::WhileOp::create(b, loc, TypeRange{index}, ValueRange{body.begin[1]});
  {
    Block *before = b.createBlock(&loop.getBefore(), {}, {index}, {loc});
    Value c = before->getArgument(0);
    scf::ConditionOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, c, body.end[1]),
        ValueRange{c});
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, {index}, {loc});
  Value c = after->getArgument(0);
  body.combinedIds.push_back(c);
  Value inner = body.inner[1];
  Value tile = arith::DivUIOp::create(b, loc, c, inner);
  body.ids[1] = arith::SubIOp::create(b, loc, c,
                                      arith::MulIOp::create(b, loc, tile, inner));
  gridRunner.storeFrameId(b, loc, body.frame, 1, tile);
  Value rows = arith::ConstantIndexOp::create(b, loc, blockRows);
  Value fits = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                            arith::AddIOp::create(b, loc, body.ids[1], rows),
                            inner),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                            arith::AddIOp::create(b, loc, c, rows),
                            body.end[1]));
  auto choice = scf::IfOp::create(
      b, loc, fits,
      [&](OpBuilder &tb, Location) {
        emitCollapsedRows(tb, loc, leaf, body, blockRows);
        scf::YieldOp::create(tb, loc,
                             ValueRange{arith::AddIOp::create(tb, loc, c, rows)});
      },
      [&](OpBuilder &eb, Location) {
        emitCollapsedRows(eb, loc, leaf, body, 1);
        scf::YieldOp::create(
            eb, loc, ValueRange{arith::AddIOp::create(eb, loc, c, body.unit)});
      });
  scf::YieldOp::create(b, loc, choice.getResults());
}

LLVM::LLVMFuncOp CollapsedGridRunner::getCollapsedRangeFunction(InternalOp internal,
                                                        LeafOp leaf,
                                                        unsigned rank) {
  CollapsedFunctionKey key{internal.getOperation(), leaf.getOperation(), rank};
  if (LLVM::LLVMFuncOp existing = collapsedFunctions.lookup(key))
    return existing;
  Location loc = leaf.getLoc();
  auto range = gridRunner.createParallelForBody(loc, "__hpvm_collapsed_" +
                                              internal.getSymName() + "_" +
                                              leaf.getSymName());
  collapsedFunctions.add(key, range);
  Block *entry = &range.front();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value contextPtr = entry->getArgument(0);
  CollapsedBody body = loadCollapsedBody(b, loc, leaf, rank, contextPtr,
                                         entry->getArgument(1));

  // z and y: one combined index at a time, split into tile and instance.
  // With a block variant, y advances by whole blocks of rows of one tile
  // where they fit.
  unsigned blockRows = rank >= 2 ? gridRunner.getBlockRows(leaf) : 0;
  for (int32_t d = 2; d >= (blockRows ? 2 : 1); --d) {
    auto loop = scf::ForOp::create(b, loc, body.begin[d], body.end[d], body.unit);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value combined = loop.getInductionVar();
    body.combinedIds.push_back(combined);
    Value tile = arith::DivUIOp::create(b, loc, combined, body.inner[d]);
    body.ids[d] = arith::SubIOp::create(
        b, loc, combined, arith::MulIOp::create(b, loc, tile, body.inner[d]));
    gridRunner.storeFrameId(b, loc, body.frame, d, tile);
  }
  // Instance (0, 0, 0) of tile (0, 0, 0), combined index 0 in every
  // dimension, publishes the outputs.
  if (leaf.getNumResults())
    body.outputs = cg.loadField(b, loc, getCollapsedContextType(leaf), contextPtr,
                             leaf.getNumArguments() + CollapsedOutputs);
  // x: the tiles the range touches, each over the part of its row (or of
  // `rows` rows from y) inside.
  if (!blockRows)
    emitCollapsedRows(b, loc, leaf, body, 1);
  else
    emitCollapsedBlockRows(b, loc, leaf, body, blockRows);
  b.setInsertionPointToEnd(entry);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return range;
}
