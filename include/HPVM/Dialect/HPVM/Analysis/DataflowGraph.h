//===- DataflowGraph.h - The child graph of an internal node ----*- C++ -*-===//
// Indexes the children, edges and binds of one hpvm.internal for verifiers and passes.
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H
#define HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

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

/// The child graph of one internal node: its children (in program order), the
/// edges between them and the binds to the parent's inputs and outputs.
///
/// Children are numbered by their position among the `hpvm.create_node` ops.
/// Node definitions are resolved through a SymbolTableCollection when one is
/// given; unresolved children have a null definition. The graph is a snapshot:
/// rebuild it after changing the internal node.
class DataflowGraph {
public:
  explicit DataflowGraph(InternalOp internal,
                         SymbolTableCollection *symbolTable = nullptr);

  InternalOp getInternalNode() const { return internal; }

  unsigned getNumChildren() const { return children.size(); }
  ArrayRef<CreateNodeOp> getChildren() const { return children; }
  CreateNodeOp getChild(unsigned index) const { return children[index]; }
  /// The definition a child instantiates, or null when it did not resolve.
  NodeOpInterface getDefinition(unsigned index) const {
    return definitions[index];
  }
  /// The child index of a node handle, if it is a child of this graph.
  std::optional<unsigned> getChildIndex(Value handle) const;

  ArrayRef<EdgeOp> getEdges() const { return edges; }
  ArrayRef<BindInOp> getBindIns() const { return bindIns; }
  ArrayRef<BindOutOp> getBindOuts() const { return bindOuts; }

  /// Edges whose source / destination is child `index`, in program order.
  ArrayRef<EdgeOp> getOutgoingEdges(unsigned index) const {
    return outgoing[index];
  }
  ArrayRef<EdgeOp> getIncomingEdges(unsigned index) const {
    return incoming[index];
  }

  /// The edges and binds feeding input `port` of child `index`, in program
  /// order. A well-formed graph has exactly one per child input.
  SmallVector<Operation *> getFeeders(unsigned index, unsigned port) const;

  /// True when `edge` carries one value per instance of its source: a
  /// one_to_one edge out of a replicated child, unless the source is a leaf
  /// whose output is one of its inputs passed on unchanged, and that input is
  /// the same in every instance (bound from the parent, or fed by an edge
  /// that carries one value for all). The backends keep the values of such
  /// edges in arrays indexed by the linear instance id.
  bool carriesValuePerInstance(EdgeOp edge) const;
  /// The bind_outs defining output `output` of the internal node.
  SmallVector<BindOutOp> getOutputBinds(unsigned output) const;

  /// Children in an order where every edge goes forward (ties keep program
  /// order); failure when the edges form a cycle.
  FailureOr<SmallVector<unsigned>> getTopologicalOrder() const;

  /// A cycle among the children as the list of children on it (the first
  /// repeated at the end), or an empty list when the graph is acyclic.
  SmallVector<unsigned> findCycle() const;

  /// True when a chain of edges leads from child `from` to child `to`.
  bool hasPath(unsigned from, unsigned to) const;

  /// The longest chain of edges ending in each child (0 for children without
  /// incoming edges); children with equal levels are mutually independent.
  /// Requires an acyclic graph.
  SmallVector<unsigned> getLevels() const;

  /// The name used for child `index` in diagnostics: "@callee" or, when the
  /// callee occurs several times, "@callee (child #index)".
  std::string describeChild(unsigned index) const;

private:
  InternalOp internal;
  SmallVector<CreateNodeOp> children;
  SmallVector<NodeOpInterface> definitions;
  DenseMap<Value, unsigned> childIndex;
  SmallVector<EdgeOp> edges;
  SmallVector<BindInOp> bindIns;
  SmallVector<BindOutOp> bindOuts;
  SmallVector<SmallVector<EdgeOp>> outgoing, incoming;
  /// The edges and bind_ins feeding (child, input port), in program order.
  DenseMap<std::pair<unsigned, unsigned>, SmallVector<Operation *, 1>> feeders;
};

/// Whether two grid extents are known to be equal: one value, equal
/// constants, or the same side-effect-free computation of equal operands (the
/// HPVM-C frontend converts `n` to an index once per __hpvm__createNodeND).
bool isSameExtent(Value a, Value b);

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_ANALYSIS_DATAFLOWGRAPH_H
