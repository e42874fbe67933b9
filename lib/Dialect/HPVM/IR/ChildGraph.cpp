//===- ChildGraph.cpp - The ops of an internal node's child graph ---------===//
// Builds the per-internal-node index of children, edges and binds, and finds cycles.
#include "HPVM/Dialect/HPVM/IR/ChildGraph.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::hpvm;

ChildGraph::ChildGraph(InternalOp internal,
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

std::optional<unsigned> ChildGraph::getChildIndex(Value handle) const {
  auto it = childIndex.find(handle);
  if (it == childIndex.end())
    return std::nullopt;
  return it->second;
}

SmallVector<Operation *> ChildGraph::getFeeders(unsigned index,
                                                unsigned port) const {
  auto it = feeders.find({index, port});
  if (it == feeders.end())
    return {};
  return SmallVector<Operation *>(it->second.begin(), it->second.end());
}

SmallVector<BindOutOp> ChildGraph::getOutputBinds(unsigned output) const {
  SmallVector<BindOutOp> binds;
  for (BindOutOp bind : bindOuts)
    if (bind.getOutput() == output)
      binds.push_back(bind);
  return binds;
}

SmallVector<unsigned> ChildGraph::findCycle() const {
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

std::string ChildGraph::describeChild(unsigned index) const {
  StringRef name = CreateNodeOp(children[index]).getNode();
  unsigned sameName = llvm::count_if(children, [&](CreateNodeOp child) {
    return child.getNode() == name;
  });
  std::string text = ("@" + name).str();
  if (sameName > 1)
    text += " (child #" + std::to_string(index) + ")";
  return text;
}
