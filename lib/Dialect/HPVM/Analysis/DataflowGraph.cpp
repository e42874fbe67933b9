//===- DataflowGraph.cpp - The child graph of an internal node ------------===//
// Builds the per-internal-node index of children, edges and binds, and orders it.
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include <queue>

using namespace mlir;
using namespace mlir::hpvm;

DataflowGraph::DataflowGraph(InternalOp internal,
                             SymbolTableCollection *symbolTable)
    : internal(internal) {
  if (internal.getBody().empty())
    return;
  SmallVector<Operation *> inputFeeders; // edges and bind_ins, program order
  for (Operation &op : internal.getBodyBlock()) {
    if (isa<EdgeOp, BindInOp>(op))
      inputFeeders.push_back(&op);
    if (auto create = dyn_cast<CreateNodeOp>(op)) {
      childIndex[create.getHandle()] = children.size();
      children.push_back(create);
      NodeOpInterface definition;
      if (symbolTable)
        definition = create.getNodeDefinition(*symbolTable);
      definitions.push_back(definition);
    } else if (auto edge = dyn_cast<EdgeOp>(op)) {
      edges.push_back(edge);
    } else if (auto bind = dyn_cast<BindInOp>(op)) {
      bindIns.push_back(bind);
    } else if (auto bind = dyn_cast<BindOutOp>(op)) {
      bindOuts.push_back(bind);
    }
  }
  outgoing.resize(children.size());
  incoming.resize(children.size());
  for (EdgeOp edge : edges) {
    std::optional<unsigned> source = getChildIndex(edge.getSource());
    std::optional<unsigned> dest = getChildIndex(edge.getDest());
    // Edges whose endpoints are not children are rejected by the edge
    // verifier; leave them out of the adjacency lists.
    if (!source || !dest)
      continue;
    outgoing[*source].push_back(edge);
    incoming[*dest].push_back(edge);
  }
  // Indexed once: a scan of the body per (child, port) query is quadratic
  // in the number of children.
  for (Operation *op : inputFeeders) {
    auto edge = dyn_cast<EdgeOp>(op);
    Value handle = edge ? edge.getDest() : cast<BindInOp>(op).getDest();
    unsigned port =
        edge ? edge.getDestPort() : cast<BindInOp>(op).getDestPort();
    if (std::optional<unsigned> dest = getChildIndex(handle))
      feeders[{*dest, port}].push_back(op);
  }
}

std::optional<unsigned> DataflowGraph::getChildIndex(Value handle) const {
  auto it = childIndex.find(handle);
  if (it == childIndex.end())
    return std::nullopt;
  return it->second;
}

SmallVector<Operation *> DataflowGraph::getFeeders(unsigned index,
                                                   unsigned port) const {
  auto it = feeders.find({index, port});
  if (it == feeders.end())
    return {};
  return SmallVector<Operation *>(it->second.begin(), it->second.end());
}

SmallVector<BindOutOp> DataflowGraph::getOutputBinds(unsigned output) const {
  SmallVector<BindOutOp> binds;
  for (BindOutOp bind : bindOuts)
    if (bind.getOutput() == output)
      binds.push_back(bind);
  return binds;
}

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

SmallVector<unsigned> DataflowGraph::findCycle() const {
  // Iterative depth-first search; a back edge to a node on the stack closes a
  // cycle, which is read off the stack.
  enum class State : uint8_t { Unvisited, OnStack, Done };
  SmallVector<State> state(children.size(), State::Unvisited);
  for (unsigned start = 0, e = children.size(); start < e; ++start) {
    if (state[start] != State::Unvisited)
      continue;
    // Stack of (child, next outgoing edge to follow).
    SmallVector<std::pair<unsigned, unsigned>> stack;
    stack.push_back({start, 0});
    state[start] = State::OnStack;
    while (!stack.empty()) {
      auto &[node, nextEdge] = stack.back();
      if (nextEdge == outgoing[node].size()) {
        state[node] = State::Done;
        stack.pop_back();
        continue;
      }
      EdgeOp edge = outgoing[node][nextEdge++];
      unsigned dest = *getChildIndex(edge.getDest());
      if (state[dest] == State::OnStack) {
        SmallVector<unsigned> cycle;
        auto it = llvm::find_if(stack, [&](auto &entry) {
          return entry.first == dest;
        });
        for (; it != stack.end(); ++it)
          cycle.push_back(it->first);
        cycle.push_back(dest);
        return cycle;
      }
      if (state[dest] == State::Unvisited) {
        state[dest] = State::OnStack;
        stack.push_back({dest, 0});
      }
    }
  }
  return {};
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

std::string DataflowGraph::describeChild(unsigned index) const {
  StringRef name = CreateNodeOp(children[index]).getNode();
  unsigned sameName = llvm::count_if(children, [&](CreateNodeOp child) {
    return child.getNode() == name;
  });
  std::string text = ("@" + name).str();
  if (sameName > 1)
    text += " (child #" + std::to_string(index) + ")";
  return text;
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
