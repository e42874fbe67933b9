//===- DataflowGraph.h - The child graph of an internal node ----*- C++ -*-===//
// What passes ask of one hpvm.internal's child graph: an order, levels, paths,
// the edges that carry a value per instance. Built on the dialect's index of
// the graph (ChildGraph, which the graph verifier uses).
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H
#define HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H

#include "HPVM/Dialect/HPVM/IR/ChildGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::hpvm {

/// The ports of a node that carry one value per instance (edges for which
/// DataflowGraph::carriesValuePerInstance holds), as bit masks: such an input
/// arrives, and such an output leaves, as an array indexed by the linear
/// instance id. Both backends (the CPU's runs, the GPU's kernels) use it.
struct PerInstancePorts {
  uint64_t inputs = 0;
  uint64_t outputs = 0;
  bool any() const { return inputs || outputs; }
  bool operator==(const PerInstancePorts &other) const {
    return inputs == other.inputs && outputs == other.outputs;
  }
  /// Marks `edge`, which carries one value per instance, on the ports of its
  /// source and destination.
  static void markEdge(EdgeOp edge, PerInstancePorts &source, PerInstancePorts &dest) {
    source.outputs |= 1ull << edge.getSourcePort();
    dest.inputs |= 1ull << edge.getDestPort();
  }
};

/// The child graph of one internal node (ChildGraph: children, edges, binds,
/// feeders) with the orders and properties passes compute over it. A
/// snapshot: rebuild it after changing the internal node.
class DataflowGraph : public ChildGraph {
public:
  using ChildGraph::ChildGraph;

  /// True when `edge` carries one value per instance of its source: a
  /// one_to_one edge out of a replicated child, unless the source is a leaf
  /// whose output is one of its inputs passed on unchanged, and that input is
  /// the same in every instance (bound from the parent, or fed by an edge
  /// that carries one value for all). The backends keep the values of such
  /// edges in arrays indexed by the linear instance id.
  bool carriesValuePerInstance(EdgeOp edge) const;

  /// Children in an order where every edge goes forward (ties keep program
  /// order); failure when the edges form a cycle.
  FailureOr<SmallVector<unsigned>> getTopologicalOrder() const;

  /// True when a chain of edges leads from child `from` to child `to`.
  bool hasPath(unsigned from, unsigned to) const;

  /// The longest chain of edges ending in each child (0 for children without
  /// incoming edges); children with equal levels are mutually independent.
  /// Requires an acyclic graph.
  SmallVector<unsigned> getLevels() const;

  /// The ports of each child (by index) that carry one value per instance:
  /// the edges for which carriesValuePerInstance holds, marked on their
  /// source's outputs and their destination's inputs.
  SmallVector<PerInstancePorts> getPerInstancePorts() const;
};

/// The per-instance ports (DataflowGraph::getPerInstancePorts) of every
/// child of every internal node of `module`, by its hpvm.create_node: what
/// the CPU backend runs with arrays and convert-hpvm-to-gpu builds kernels
/// for. Children without such ports have no entry.
DenseMap<Operation *, PerInstancePorts>
collectPerInstancePorts(ModuleOp module, SymbolTableCollection &symbols);

/// Whether two grid extents are known to be equal: one value, equal
/// constants, or the same side-effect-free computation of equal operands (the
/// HPVM-C frontend converts `n` to an index once per __hpvm__createNodeND).
bool isSameExtent(Value a, Value b);

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H
