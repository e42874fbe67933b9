//===- HPVMGraphOps.cpp - The child graph of internal nodes ---------------===//
// hpvm.create_node, hpvm.edge, hpvm.bind_in and hpvm.bind_out, and the checks
// of an internal node's child graph as a whole (ports, replication, inputs
// fed once, outputs bound once, no cycles, no recursion).
#include "VerifierSupport.h"

#include "HPVM/Dialect/HPVM/IR/ChildGraph.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "HPVM/Dialect/HPVM/IR/NodeUses.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::verifier;

//===----------------------------------------------------------------------===//
// Graph verification (needs the children's signatures)
//===----------------------------------------------------------------------===//

namespace {
/// Checks the child graph of one internal node against the rules in
/// hpvm.internal's description (docs/Dialect/HPVM.md).
class GraphVerifier {
public:
  GraphVerifier(InternalOp internal, SymbolTableCollection &symbolTable)
      : internal(internal), graph(internal, &symbolTable) {}

  LogicalResult verify() {
    if (failed(verifyEdges()) || failed(verifyBindIns()) ||
        failed(verifyBindOuts()) || failed(verifyInputsFedOnce()) ||
        failed(verifyOutputsBoundOnce()) || failed(verifyAcyclic()))
      return failure();
    return success();
  }

private:
  LogicalResult verifyEdges();
  LogicalResult verifyOneToOne(EdgeOp edge, unsigned source, unsigned dest);
  LogicalResult verifyBindIns();
  LogicalResult verifyBindOuts();
  LogicalResult verifyInputsFedOnce();
  LogicalResult verifyOutputsBoundOnce();
  LogicalResult verifyAcyclic();

  /// Checks that `port` is an output (`isOutput`) or input of `child`.
  LogicalResult verifyPort(Operation *op, StringRef what, unsigned child,
                           unsigned port, bool isOutput) {
    NodeOpInterface definition = graph.getDefinition(child);
    size_t available = isOutput ? definition.getOutputTypes().size()
                                : definition.getInputTypes().size();
    if (port < available)
      return success();
    return op->emitOpError()
           << what << " " << port << " out of range: "
           << graph.describeChild(child) << " has "
           << count(available, isOutput ? "output" : "input");
  }

  InternalOp internal;
  ChildGraph graph;
};
} // namespace

LogicalResult GraphVerifier::verifyEdges() {
  // An output port may feed any number of edges (fan-out: a residual block's
  // input goes to its convolution and to its add); every consumer gets the
  // same value.
  for (EdgeOp edge : graph.getEdges()) {
    unsigned source = *graph.getChildIndex(edge.getSource());
    unsigned dest = *graph.getChildIndex(edge.getDest());
    NodeOpInterface sourceDef = graph.getDefinition(source);
    NodeOpInterface destDef = graph.getDefinition(dest);
    if (!sourceDef || !destDef)
      continue; // The unresolved create_node reports the error.
    unsigned sourcePort = edge.getSourcePort();
    unsigned destPort = edge.getDestPort();
    if (failed(verifyPort(edge, "source port", source, sourcePort, true)) ||
        failed(verifyPort(edge, "destination port", dest, destPort, false)))
      return failure();
    Type produced = sourceDef.getOutputTypes()[sourcePort];
    Type consumed = destDef.getInputTypes()[destPort];
    if (produced != consumed)
      return edge.emitOpError()
             << "type mismatch: output " << sourcePort << " of "
             << graph.describeChild(source) << " is " << produced
             << " but input " << destPort << " of "
             << graph.describeChild(dest) << " is " << consumed;
    if (source == dest)
      return edge.emitOpError()
             << "connects " << graph.describeChild(source)
             << " to itself; the child graph must be acyclic";
    if (edge.getReplication() == Replication::one_to_one &&
        failed(verifyOneToOne(edge, source, dest)))
      return failure();
  }
  return success();
}

LogicalResult GraphVerifier::verifyOneToOne(EdgeOp edge, unsigned source,
                                            unsigned dest) {
  CreateNodeOp from = graph.getChild(source), to = graph.getChild(dest);
  if (from.getRank() != to.getRank())
    return edge.emitOpError()
           << "one_to_one edge joins " << graph.describeChild(source)
           << " with " << count(from.getRank(), "dimension") << " to "
           << graph.describeChild(dest) << " with "
           << count(to.getRank(), "dimension")
           << "; expected grids of equal rank";
  for (unsigned d = 0, e = from.getRank(); d < e; ++d) {
    Value a = from.getDims()[d], b = to.getDims()[d];
    if (a == b)
      continue;
    APInt extentA, extentB;
    if (matchPattern(a, m_ConstantInt(&extentA)) &&
        matchPattern(b, m_ConstantInt(&extentB)) && extentA != extentB)
      return edge.emitOpError()
             << "one_to_one edge joins grids of different extents: dimension "
             << d << " is " << extentA.getSExtValue() << " in "
             << graph.describeChild(source) << " but "
             << extentB.getSExtValue() << " in " << graph.describeChild(dest);
  }
  return success();
}

LogicalResult GraphVerifier::verifyBindIns() {
  for (BindInOp bind : graph.getBindIns()) {
    unsigned dest = *graph.getChildIndex(bind.getDest());
    NodeOpInterface destDef = graph.getDefinition(dest);
    if (!destDef)
      continue;
    unsigned port = bind.getDestPort();
    if (failed(verifyPort(bind, "destination port", dest, port, false)))
      return failure();
    Type consumed = destDef.getInputTypes()[port];
    auto argument = cast<BlockArgument>(bind.getInput());
    if (argument.getType() != consumed)
      return bind.emitOpError()
             << "type mismatch: input " << argument.getArgNumber() << " of "
             << nodeName(internal) << " is " << argument.getType()
             << " but input " << port << " of " << graph.describeChild(dest)
             << " is " << consumed;
  }
  return success();
}

LogicalResult GraphVerifier::verifyBindOuts() {
  for (BindOutOp bind : graph.getBindOuts()) {
    unsigned source = *graph.getChildIndex(bind.getSource());
    NodeOpInterface sourceDef = graph.getDefinition(source);
    if (!sourceDef)
      continue;
    unsigned port = bind.getSourcePort();
    if (failed(verifyPort(bind, "source port", source, port, true)))
      return failure();
    Type produced = sourceDef.getOutputTypes()[port];
    Type expected = internal.getResultTypes()[bind.getOutput()];
    if (produced != expected)
      return bind.emitOpError()
             << "type mismatch: output " << port << " of "
             << graph.describeChild(source) << " is " << produced
             << " but output " << bind.getOutput() << " of "
             << nodeName(internal) << " is " << expected;
  }
  return success();
}

LogicalResult GraphVerifier::verifyInputsFedOnce() {
  for (unsigned child = 0, e = graph.getNumChildren(); child < e; ++child) {
    NodeOpInterface definition = graph.getDefinition(child);
    if (!definition)
      continue;
    ArrayRef<Type> inputs = definition.getInputTypes();
    for (unsigned port = 0, n = inputs.size(); port < n; ++port) {
      SmallVector<Operation *> feeders = graph.getFeeders(child, port);
      if (feeders.empty())
        return graph.getChild(child).emitOpError()
               << "input " << port << " (" << inputs[port] << ") of "
               << graph.describeChild(child)
               << " is never fed: expected one hpvm.edge or hpvm.bind_in "
                  "to it";
      if (feeders.size() == 1)
        continue;
      // The three ways to feed an input twice, each refused: two edges into
      // one (dst, dp), two binds into one (dst, ic), and an edge and a bind.
      bool firstIsEdge = isa<EdgeOp>(feeders[0]);
      bool secondIsEdge = isa<EdgeOp>(feeders[1]);
      StringRef how = firstIsEdge && secondIsEdge ? "is the destination of two edges"
                      : !firstIsEdge && !secondIsEdge
                          ? "is bound twice by hpvm.bind_in"
                          : "is fed by both an edge and a bind_in";
      InFlightDiagnostic diag = feeders[1]->emitOpError()
                                << "input " << port << " of "
                                << graph.describeChild(child) << " " << how
                                << "; expected exactly one edge or bind_in";
      diag.attachNote(feeders[0]->getLoc()) << "first fed here";
      return diag;
    }
  }
  return success();
}

LogicalResult GraphVerifier::verifyOutputsBoundOnce() {
  for (unsigned output = 0, e = internal.getNumResults(); output < e;
       ++output) {
    SmallVector<BindOutOp> binds = graph.getOutputBinds(output);
    if (binds.empty())
      return internal.emitOpError()
             << "output " << output << " ("
             << internal.getResultTypes()[output]
             << ") is never bound: expected one hpvm.bind_out to it";
    if (binds.size() > 1) {
      InFlightDiagnostic diag = binds[1].emitOpError()
                                << "output " << output << " of "
                                << nodeName(internal)
                                << " is bound twice; expected exactly once";
      diag.attachNote(binds[0].getLoc()) << "first bound here";
      return diag;
    }
  }
  return success();
}

LogicalResult GraphVerifier::verifyAcyclic() {
  SmallVector<unsigned> cycle = graph.findCycle();
  if (cycle.empty())
    return success();
  std::string path;
  for (auto [i, child] : llvm::enumerate(cycle))
    path += (i ? " -> " : "") + graph.describeChild(child);
  // Report on the edge closing the cycle.
  unsigned last = cycle[cycle.size() - 2], first = cycle.back();
  EdgeOp closing;
  for (EdgeOp edge : graph.getOutgoingEdges(last))
    if (*graph.getChildIndex(edge.getDest()) == first)
      closing = edge;
  return closing.emitOpError()
         << "closes a cycle in the child graph of " << nodeName(internal)
         << ": " << path << "; the graph must be acyclic";
}

/// Levels of node hierarchy the verifier accepts (a 100,000-level chain
/// verifies in about a second, lowers and runs).
static constexpr unsigned kMaxHierarchyDepth = 100000;

/// "@a -> @b -> @a"; a long cycle is shortened to its first and last names.
static std::string describeChain(ArrayRef<StringAttr> chain) {
  constexpr size_t kShown = 8;
  std::string path;
  for (auto [i, name] : llvm::enumerate(chain)) {
    if (chain.size() > 2 * kShown && i == kShown)
      path += " -> ... (" + std::to_string(chain.size() - 2 * kShown) + " more)";
    if (chain.size() > 2 * kShown && i >= kShown && i < chain.size() - kShown)
      continue;
    path += (i ? " -> @" : "@") + name.str();
  }
  return path;
}

/// Whether `internal` is the first hpvm.internal of its block. Each internal
/// node looks back to the previous one, so all of them together look at every
/// op once.
static bool isFirstInternalNode(InternalOp internal) {
  for (Operation *op = internal->getPrevNode(); op; op = op->getPrevNode())
    if (isa<InternalOp>(op))
      return false;
  return true;
}

LogicalResult InternalOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Recursion first: graph checks of a recursive hierarchy are meaningless.
  // The first internal node of the symbol table searches the whole hierarchy
  // once (linear, iterative: a search per node was cubic in the nesting depth
  // and overflowed the stack at 100,000 levels); symbol uses are verified in
  // program order, so no other internal node's graph is checked before it.
  Operation *module = (*this)->getParentWithTrait<mlir::OpTrait::SymbolTable>();
  if (module && isFirstInternalNode(*this)) {
    auto lookup = [&](StringAttr name) {
      return dyn_cast_or_null<NodeOpInterface>(symbolTable.lookupSymbolIn(module, name));
    };
    SmallVector<StringAttr> starts;
    for (Block &block : module->getRegion(0))
      for (auto internal : block.getOps<InternalOp>())
        starts.push_back(internal.getSymNameAttr());
    HierarchyWalk walk = walkHierarchy(starts, lookup);
    if (!walk.cycle.empty()) {
      Operation *at = lookup(walk.cycle.front());
      return (at ? at : getOperation())->emitOpError()
             << "instantiates itself: " << describeChain(walk.cycle)
             << "; the node hierarchy must not be recursive";
    }
    // Each level is a nested call when a graph runs (and a frame of every
    // walk of it): a bound that a thread's stack holds.
    if (walk.maxDepth > kMaxHierarchyDepth) {
      Operation *at = lookup(walk.deepest);
      return (at ? at : getOperation())->emitOpError()
             << "begins a node hierarchy " << walk.maxDepth
             << " levels deep; at most " << kMaxHierarchyDepth
             << " levels are supported";
    }
  }
  return GraphVerifier(*this, symbolTable).verify();
}

//===----------------------------------------------------------------------===//
// Graph ops
//===----------------------------------------------------------------------===//

NodeOpInterface
CreateNodeOp::getNodeDefinition(SymbolTableCollection &symbolTable) {
  return dyn_cast_or_null<NodeOpInterface>(
      symbolTable.lookupNearestSymbolFrom(*this, getNodeAttr()));
}

/// The value of `extent` when it is a constant, also through side-effect-free
/// casts that fold (HPVM-C's `arith.index_cast` of an `llvm.mlir.constant`).
static std::optional<APInt> constantExtent(Value extent, unsigned depth = 3) {
  APInt value;
  if (matchPattern(extent, m_ConstantInt(&value)))
    return value;
  Operation *op = extent.getDefiningOp();
  if (!depth || !op || op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      op->getNumRegions() || !isMemoryEffectFree(op) ||
      !op->getOperand(0).getType().isIntOrIndex())
    return std::nullopt;
  std::optional<APInt> operand = constantExtent(op->getOperand(0), depth - 1);
  if (!operand)
    return std::nullopt;
  SmallVector<OpFoldResult> folded;
  Attribute operandAttr = IntegerAttr::get(op->getOperand(0).getType(), *operand);
  if (failed(op->fold({operandAttr}, folded)) || folded.size() != 1)
    return std::nullopt;
  auto attr = dyn_cast_if_present<IntegerAttr>(dyn_cast<Attribute>(folded.front()));
  if (!attr)
    return std::nullopt;
  return attr.getValue();
}

LogicalResult CreateNodeOp::verify() {
  if (getDims().size() > 3)
    return emitOpError() << "expects 0 to 3 replication dimensions, found "
                         << getDims().size();
  // Extents known here: none negative, and a grid the runtime can count (its
  // instance count is a signed 64-bit integer). Others are checked when the
  // graph is launched.
  static constexpr const char *kDims[] = {"x", "y", "z"};
  APInt instances(128, 1);
  for (auto [d, extent] : llvm::enumerate(getDims())) {
    std::optional<APInt> value = constantExtent(extent);
    if (!value)
      continue;
    if (value->isNegative())
      return emitOpError() << "extent of dimension " << kDims[d] << " is "
                           << value->getSExtValue()
                           << "; expected a count of instances (0 or more)";
    instances *= value->sextOrTrunc(128);
    if (instances.getActiveBits() > 63)
      return emitOpError() << "grid has more instances than a signed 64-bit count holds: "
                              "its constant extents up to dimension "
                           << kDims[d] << " multiply to 2^" << instances.logBase2()
                           << " or more; expected at most 2^63 - 1";
  }
  return success();
}

LogicalResult
CreateNodeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getNodeAttr());
  if (!symbol)
    return emitOpError() << "refers to @" << getNode()
                         << ", which is not defined";
  if (!isa<NodeOpInterface>(symbol))
    return emitOpError() << "refers to @" << getNode() << ", a '"
                         << symbol->getName()
                         << "'; expected a node definition (hpvm.leaf or "
                            "hpvm.internal)";
  auto parent = dyn_cast_or_null<InternalOp>((*this)->getParentOp());
  if (!parent)
    return success();
  return verifyGridQueriesBelow({*this, getRank(), parent},
                                getNodeAttr().getAttr(), symbolTable);
}

/// True when running `node` can have no effect but its outputs: every op in
/// it (and in the nodes it instantiates) at most reads memory. Calls, writes,
/// atomics, barriers and unknown ops count as effects.
static bool hasNoSideEffects(NodeOpInterface node,
                             SymbolTableCollection &symbolTable,
                             unsigned depth = 0) {
  if (!node || depth > 64)
    return false;
  WalkResult result = node->walk([&](Operation *op) {
    if (op == node.getOperation())
      return WalkResult::advance();
    if (auto create = dyn_cast<CreateNodeOp>(op))
      return hasNoSideEffects(create.getNodeDefinition(symbolTable),
                              symbolTable, depth + 1)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    if (isa<EdgeOp, BindInOp, BindOutOp, ReturnOp>(op) ||
        op->hasTrait<mlir::OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const auto &instance : instances)
      if (!isa<MemoryEffects::Read>(instance.getEffect()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

namespace {
/// Erases a child nobody reads from (no edge out of it, no bind_out) whose
/// definition has no side effects, together with the binds and edges into it.
struct EraseUnusedPureChild : public OpRewritePattern<CreateNodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CreateNodeOp create,
                                PatternRewriter &rewriter) const override {
    Value handle = create.getHandle();
    for (Operation *user : handle.getUsers()) {
      if (auto edge = dyn_cast<EdgeOp>(user); edge && edge.getSource() == handle)
        return rewriter.notifyMatchFailure(create, "an edge reads an output");
      if (isa<BindOutOp>(user))
        return rewriter.notifyMatchFailure(create, "an output is bound out");
    }
    SymbolTableCollection symbolTable;
    if (!hasNoSideEffects(create.getNodeDefinition(symbolTable), symbolTable))
      return rewriter.notifyMatchFailure(create, "the node may have effects");
    for (Operation *user : llvm::make_early_inc_range(handle.getUsers()))
      rewriter.eraseOp(user);
    rewriter.eraseOp(create);
    return success();
  }
};
} // namespace

void CreateNodeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<EraseUnusedPureChild>(context);
}

void CreateNodeOp::getAsmResultNames(
    function_ref<void(Value, StringRef)> setNameFn) {
  setNameFn(getHandle(), "node");
}

/// Checks that a node handle comes from a create_node of the same internal node.
static LogicalResult verifyChildHandle(Operation *op, Value handle,
                                       StringRef role) {
  auto create = handle.getDefiningOp<CreateNodeOp>();
  if (create && create->getBlock() == op->getBlock())
    return success();
  return op->emitOpError() << "expects its " << role
                           << " to be a child created by 'hpvm.create_node' "
                              "in the same internal node";
}

LogicalResult EdgeOp::verify() {
  return failure(failed(verifyChildHandle(*this, getSource(), "source")) ||
                 failed(verifyChildHandle(*this, getDest(), "destination")));
}

LogicalResult BindInOp::verify() {
  if (failed(verifyChildHandle(*this, getDest(), "destination")))
    return failure();
  auto argument = dyn_cast<BlockArgument>(getInput());
  if (!argument || argument.getOwner() != (*this)->getBlock()) {
    InFlightDiagnostic diag = emitOpError()
                              << "expects an input (block argument) of the "
                                 "enclosing hpvm.internal";
    if (Operation *def = getInput().getDefiningOp())
      diag << "; found a value defined by '" << def->getName() << "'";
    return diag;
  }
  return success();
}

LogicalResult BindOutOp::verify() {
  if (failed(verifyChildHandle(*this, getSource(), "source")))
    return failure();
  auto parent = cast<InternalOp>((*this)->getParentOp());
  if (getOutput() >= parent.getNumResults())
    return emitOpError() << "output index " << getOutput()
                         << " out of range: @" << parent.getSymName()
                         << " has " << count(parent.getNumResults(), "output");
  return success();
}
