//===- FusionLegality.cpp - When two sibling nodes may be fused -----------===//
// Same parent, targets and grid; independent or joined by one_to_one edges only.
#include "HPVM/Transforms/Analysis/FusionLegality.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hpvm;

/// Why a leaf cannot take part in fusion, or "".
static std::string checkLeaf(NodeOpInterface node, StringRef role) {
  auto leaf = dyn_cast_or_null<LeafOp>(node ? node.getOperation() : nullptr);
  if (!leaf)
    return (role + " is not a leaf").str();
  if (!leaf.getBody().hasOneBlock())
    return (role + " has several blocks").str();
  bool barrier = false;
  leaf.walk([&](BarrierOp) { barrier = true; });
  if (barrier)
    return (role + " has a barrier").str();
  return "";
}

std::string mlir::hpvm::checkFusionLegality(const DataflowGraph &graph,
                                            unsigned first, unsigned second) {
  if (first == second)
    return "a node cannot be fused with itself";
  NodeOpInterface a = graph.getDefinition(first), b = graph.getDefinition(second);
  for (auto [node, role] : {std::pair{a, "the producer"}, std::pair{b, "the consumer"}})
    if (std::string reason = checkLeaf(node, role); !reason.empty())
      return reason;
  if (a.getTargets() != b.getTargets())
    return "the nodes have different targets";
  CreateNodeOp ca = graph.getChild(first), cb = graph.getChild(second);
  if (ca.getRank() != cb.getRank())
    return "the grids have different ranks";
  for (unsigned d = 0; d < ca.getRank(); ++d)
    if (!isSameExtent(ca.getDims()[d], cb.getDims()[d]))
      return "the grids may differ in dimension " + std::to_string(d);
  // Edges may go only from first to second, one_to_one, not streaming; no
  // other path may join them (fusing would then close a cycle).
  for (EdgeOp edge : graph.getOutgoingEdges(second))
    if (*graph.getChildIndex(edge.getDest()) == first)
      return "an edge goes from the consumer back to the producer";
  bool joined = false;
  for (EdgeOp edge : graph.getOutgoingEdges(first)) {
    unsigned dest = *graph.getChildIndex(edge.getDest());
    if (dest == second) {
      if (edge.getReplication() != Replication::one_to_one)
        return "an all_to_all edge joins them (every consumer instance needs "
               "every producer instance)";
      if (edge.getStreaming())
        return "a streaming edge joins them";
      joined = true;
      continue;
    }
    if (graph.hasPath(dest, second))
      return "a path through another node joins them";
  }
  if (!joined && graph.hasPath(second, first))
    return "a path leads from the consumer to the producer";
  return "";
}
