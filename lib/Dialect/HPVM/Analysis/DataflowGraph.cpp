//===- DataflowGraph.cpp - The child graph of an internal node ------------===//
// Orders the child graph of an internal node and finds its per-instance edges.
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include <queue>

using namespace mlir;
using namespace mlir::hpvm;

/// The input of `leaf` that its output `output` is on every return, if any.
static std::optional<unsigned> getPassedOnInput(LeafOp leaf, unsigned output) {
  Block &entry = leaf.getBody().front();
  std::optional<unsigned> input;
  bool passedOn = true;
  leaf.walk([&](ReturnOp ret) {
    auto argument = dyn_cast<BlockArgument>(ret.getOperand(output));
    if (!argument || argument.getOwner() != &entry ||
        (input && *input != argument.getArgNumber()))
      passedOn = false;
    else
      input = argument.getArgNumber();
  });
  return passedOn ? input : std::nullopt;
}

bool DataflowGraph::carriesValuePerInstance(EdgeOp edge) const {
  // Back along passed-on values to where they come from; an acyclic graph
  // has at most one step per edge.
  for (size_t steps = 0; steps <= edges.size(); ++steps) {
    if (edge.getReplication() != Replication::one_to_one)
      return false;
    std::optional<unsigned> source = getChildIndex(edge.getSource());
    if (!source || getChild(*source).getRank() == 0)
      return false;
    NodeOpInterface definition = getDefinition(*source);
    auto leaf = definition ? dyn_cast<LeafOp>(definition.getOperation()) : LeafOp();
    if (!leaf)
      return true;
    std::optional<unsigned> input = getPassedOnInput(leaf, edge.getSourcePort());
    if (!input)
      return true;
    SmallVector<Operation *> feeding = getFeeders(*source, *input);
    if (feeding.size() != 1)
      return true;
    if (isa<BindInOp>(feeding.front()))
      return false;
    edge = cast<EdgeOp>(feeding.front());
  }
  return true;
}

FailureOr<SmallVector<unsigned>> DataflowGraph::getTopologicalOrder() const {
  // Kahn's algorithm with a min-heap so that independent children keep their
  // program order: the result is deterministic and stable under reprinting.
  SmallVector<unsigned> pending(children.size(), 0);
  for (unsigned i = 0, e = children.size(); i < e; ++i)
    pending[i] = incoming[i].size();
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
      ready;
  for (unsigned i = 0, e = children.size(); i < e; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<unsigned> order;
  while (!ready.empty()) {
    unsigned next = ready.top();
    ready.pop();
    order.push_back(next);
    for (EdgeOp edge : outgoing[next]) {
      unsigned dest = *getChildIndex(edge.getDest());
      if (--pending[dest] == 0)
        ready.push(dest);
    }
  }
  if (order.size() != children.size())
    return failure();
  return order;
}

bool DataflowGraph::hasPath(unsigned from, unsigned to) const {
  SmallVector<bool> seen(children.size(), false);
  SmallVector<unsigned> worklist{from};
  while (!worklist.empty()) {
    unsigned node = worklist.pop_back_val();
    for (EdgeOp edge : outgoing[node]) {
      unsigned dest = *getChildIndex(EdgeOp(edge).getDest());
      if (dest == to)
        return true;
      if (!seen[dest]) {
        seen[dest] = true;
        worklist.push_back(dest);
      }
    }
  }
  return false;
}

SmallVector<PerInstancePorts> DataflowGraph::getPerInstancePorts() const {
  SmallVector<PerInstancePorts> ports(getNumChildren());
  for (EdgeOp edge : getEdges())
    if (carriesValuePerInstance(edge))
      PerInstancePorts::markEdge(edge, ports[*getChildIndex(edge.getSource())],
                                 ports[*getChildIndex(edge.getDest())]);
  return ports;
}

DenseMap<Operation *, PerInstancePorts>
mlir::hpvm::collectPerInstancePorts(ModuleOp module, SymbolTableCollection &symbols) {
  DenseMap<Operation *, PerInstancePorts> ports;
  module.walk([&](InternalOp internal) {
    DataflowGraph graph(internal, &symbols);
    for (auto [child, mine] : llvm::zip(graph.getChildren(), graph.getPerInstancePorts()))
      if (mine.any())
        ports[child] = mine;
  });
  return ports;
}

SmallVector<unsigned> DataflowGraph::getLevels() const {
  SmallVector<unsigned> levels(children.size(), 0);
  FailureOr<SmallVector<unsigned>> order = getTopologicalOrder();
  if (failed(order))
    return levels;
  for (unsigned node : *order)
    for (EdgeOp edge : outgoing[node]) {
      unsigned dest = *getChildIndex(edge.getDest());
      levels[dest] = std::max(levels[dest], levels[node] + 1);
    }
  return levels;
}

/// isSameExtent, looking at most `depth` ops deep.
static bool sameExtent(Value a, Value b, unsigned depth) {
  if (a == b)
    return true;
  APInt x, y;
  if (matchPattern(a, m_ConstantInt(&x)) && matchPattern(b, m_ConstantInt(&y)))
    return x.getBitWidth() == y.getBitWidth() && x == y;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  if (!depth || !opA || !opB || opA->getNumRegions() || !isMemoryEffectFree(opA) ||
      !isMemoryEffectFree(opB) ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  return OperationEquivalence::isEquivalentTo(
      opA, opB,
      [&](Value x, Value y) { return success(sameExtent(x, y, depth - 1)); },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

bool mlir::hpvm::isSameExtent(Value a, Value b) { return sameExtent(a, b, 4); }
