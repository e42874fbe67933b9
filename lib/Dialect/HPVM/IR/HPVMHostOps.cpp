//===- HPVMHostOps.cpp - Host code: launches, streams, the memory tracker -===//
// hpvm.launch, hpvm.wait, hpvm.push, hpvm.pop and hpvm.track / untrack /
// request.
#include "VerifierSupport.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::verifier;

//===----------------------------------------------------------------------===//
// Host ops
//===----------------------------------------------------------------------===//

/// Resolves the root node of a launch.
static FailureOr<NodeOpInterface> lookupRoot(LaunchOp launch,
                                             SymbolTableCollection &symbols) {
  Operation *symbol = symbols.lookupNearestSymbolFrom(launch, launch.getRootAttr());
  if (!symbol)
    return launch.emitOpError()
           << "refers to @" << launch.getRoot() << ", which is not defined";
  auto node = dyn_cast<NodeOpInterface>(symbol);
  if (!node)
    return launch.emitOpError()
           << "refers to @" << launch.getRoot() << ", a '" << symbol->getName()
           << "'; expected a node definition (hpvm.leaf or hpvm.internal)";
  return node;
}

LogicalResult LaunchOp::verify() {
  if (getPushed() && !getStreaming())
    return emitOpError("with 'pushed' must be 'streaming'");
  if (getPushed() && !getArgs().empty())
    return emitOpError() << "with 'pushed' takes its items from 'hpvm.push' and "
                            "has no operands, found "
                         << getArgs().size();
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<NodeOpInterface> root = lookupRoot(*this, symbolTable);
  if (failed(root))
    return failure();
  if (failed(verifyGridQueriesBelow({*this, 0, InternalOp()},
                                    getRootAttr().getAttr(), symbolTable)))
    return failure();
  if (getPushed())
    return success();
  ArrayRef<Type> inputs = root->getInputTypes();
  if (getArgs().getTypes() != TypeRange(inputs))
    return emitOpError() << "passes " << typeList(getArgs().getTypes())
                         << " but the root " << nodeName(*root)
                         << " expects inputs " << typeList(inputs);
  return success();
}

FailureOr<SmallVector<LaunchOp>> mlir::hpvm::getLaunchesOf(Value graph) {
  SmallVector<LaunchOp> launches;
  SmallVector<Value> worklist{graph};
  llvm::SmallPtrSet<void *, 8> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value.getAsOpaquePointer()).second)
      continue;
    if (auto launch = value.getDefiningOp<LaunchOp>()) {
      launches.push_back(launch);
      continue;
    }
    auto argument = dyn_cast<BlockArgument>(value);
    Block *block = argument ? argument.getOwner() : nullptr;
    if (!block || block->isEntryBlock())
      return failure();
    for (auto it = block->pred_begin(), end = block->pred_end(); it != end; ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch)
        return failure();
      Value incoming = branch.getSuccessorOperands(it.getSuccessorIndex())
                           [argument.getArgNumber()];
      if (!incoming)
        return failure();
      worklist.push_back(incoming);
    }
  }
  if (launches.empty())
    return failure();
  return launches;
}

/// The launches that may have produced a graph handle, with their roots, when
/// every path to the handle is traceable (a handle passed in as a function
/// argument is not).
static std::optional<SmallVector<std::pair<LaunchOp, NodeOpInterface>>>
traceGraph(Value graph, SymbolTableCollection &symbolTable) {
  FailureOr<SmallVector<LaunchOp>> launches = getLaunchesOf(graph);
  if (failed(launches))
    return std::nullopt;
  SmallVector<std::pair<LaunchOp, NodeOpInterface>> traced;
  for (LaunchOp launch : *launches) {
    auto root = dyn_cast_or_null<NodeOpInterface>(
        symbolTable.lookupNearestSymbolFrom(launch, launch.getRootAttr()));
    if (!root)
      return std::nullopt;
    traced.push_back({launch, root});
  }
  return traced;
}

/// Notes where the launch whose root disagrees with a use of its handle is,
/// when the handle may come from several.
static LogicalResult noteLaunch(InFlightDiagnostic diag, LaunchOp launch,
                                size_t launches) {
  if (launches > 1)
    diag.attachNote(launch.getLoc())
        << "the handle may come from this launch (one of " << launches << ")";
  return diag;
}

/// Checks that a push/pop acts on a streaming graph.
static LogicalResult verifyStreamingUse(Operation *op, LaunchOp launch,
                                        NodeOpInterface root) {
  if (launch.getStreaming())
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "needs a streaming graph, but "
                            << nodeName(root)
                            << " was launched without 'streaming'";
  diag.attachNote(launch.getLoc()) << "launched here";
  return diag;
}

/// Whether control can leave `from` and come back to it without passing
/// through `stop` (where the handle is launched again).
static bool reachesItselfAvoiding(Block *from, Block *stop) {
  SmallVector<Block *> worklist(from->getSuccessors());
  llvm::SmallPtrSet<Block *, 16> seen;
  while (!worklist.empty()) {
    Block *block = worklist.pop_back_val();
    if (block == from)
      return true;
    if (block == stop || !seen.insert(block).second)
      continue;
    llvm::append_range(worklist, block->getSuccessors());
  }
  return false;
}

LogicalResult WaitOp::verify() {
  // A wait ends its graph and frees what the launch made: a second wait on
  // the same handle would wait on freed memory.
  Value graph = getGraph();
  Block *launchedIn = isa<BlockArgument>(graph) ? cast<BlockArgument>(graph).getOwner()
                                                : graph.getDefiningOp()->getBlock();
  // A handle outside any block (a parser placeholder) or in a region that
  // does not enclose the wait (another function) is not this verifier's to
  // report: MLIR's dominance and isolation checks say what is wrong.
  if (!launchedIn || !graph.getParentRegion())
    return success();
  // A loop between the launch and the wait: a branch back to the wait's block
  // that does not pass the launch again, or a loop op around the wait.
  bool inLoop = false;
  Operation *outer = getOperation();
  while (!inLoop && outer->getParentRegion() != graph.getParentRegion()) {
    outer = outer->getParentOp();
    if (!outer)
      return success();
    inLoop = isa<LoopLikeOpInterface>(outer);
  }
  Block *block = outer ? outer->getBlock() : nullptr;
  if (inLoop || (block && block != launchedIn && reachesItselfAvoiding(block, launchedIn)))
    return emitOpError("waits in a loop on a graph launched outside it: the first "
                       "wait ends the graph; launch it in the loop, or wait after it");
  DominanceInfo dominance;
  for (Operation *other : graph.getUsers()) {
    if (!isa<WaitOp>(other) || !dominance.properlyDominates(other, getOperation()))
      continue;
    InFlightDiagnostic diag = emitOpError(
        "waits on a graph that an earlier hpvm.wait already ended (a wait "
        "frees the launch)");
    diag.attachNote(other->getLoc()) << "the earlier wait";
    return diag;
  }
  return success();
}

LogicalResult WaitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  for (auto [launch, root] : *traced) {
    if (launch.getStreaming()) {
      if (getNumResults() != 0)
        return noteLaunch(emitOpError()
                              << "on a streaming graph returns nothing (its "
                                 "outputs are popped with hpvm.pop), found "
                              << count(getNumResults(), "result"),
                          launch, traced->size());
      continue;
    }
    ArrayRef<Type> outputs = root.getOutputTypes();
    if (getResultTypes() != TypeRange(outputs))
      return noteLaunch(emitOpError()
                            << "returns " << typeList(getResultTypes())
                            << " but the root " << nodeName(root)
                            << " has outputs " << typeList(outputs),
                        launch, traced->size());
  }
  return success();
}

LogicalResult PushOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  for (auto [launch, root] : *traced) {
    if (failed(verifyStreamingUse(*this, launch, root)))
      return failure();
    ArrayRef<Type> inputs = root.getInputTypes();
    if (getArgs().getTypes() != TypeRange(inputs))
      return noteLaunch(emitOpError()
                            << "pushes " << typeList(getArgs().getTypes())
                            << " but the root " << nodeName(root)
                            << " expects inputs " << typeList(inputs),
                        launch, traced->size());
  }
  return success();
}

LogicalResult PopOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto traced = traceGraph(getGraph(), symbolTable);
  if (!traced)
    return success();
  for (auto [launch, root] : *traced) {
    if (failed(verifyStreamingUse(*this, launch, root)))
      return failure();
    ArrayRef<Type> outputs = root.getOutputTypes();
    if (getResultTypes() != TypeRange(outputs))
      return noteLaunch(emitOpError()
                            << "pops " << typeList(getResultTypes())
                            << " but the root " << nodeName(root)
                            << " has outputs " << typeList(outputs),
                        launch, traced->size());
  }
  return success();
}

/// Memory-tracker ops: a memref carries its size; a pointer needs one, except
/// for untrack, which only forgets the buffer.
static LogicalResult verifyTrackerOperands(Operation *op, Value memory,
                                           Value size, bool needsSize) {
  bool isPointer = isa<LLVM::LLVMPointerType>(memory.getType());
  if (!isPointer && size)
    return op->emitOpError()
           << "takes no size for a memref, which carries its own";
  if (isPointer && needsSize && !size)
    return op->emitOpError()
           << "expects a size in bytes after an !llvm.ptr buffer";
  if (!needsSize && size)
    return op->emitOpError() << "takes no size";
  return success();
}

LogicalResult TrackOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), true);
}
LogicalResult UntrackOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), false);
}
LogicalResult RequestOp::verify() {
  return verifyTrackerOperands(*this, getMemory(), getSize(), true);
}
