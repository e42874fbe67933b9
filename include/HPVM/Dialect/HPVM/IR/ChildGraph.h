//===- ChildGraph.h - The ops of an internal node's child graph --*- C++ -*-===//
// Verifier support: indexes the children, edges and binds of one hpvm.internal,
// as the graph verifier checks them. The analyses passes ask of a child graph
// (order, levels, paths, values per instance) build on it: DataflowGraph, in
// the analysis library (HPVM/Dialect/HPVM/Analysis/DataflowGraph.h).
#ifndef HPVM_DIALECT_HPVM_IR_CHILDGRAPH_H
#define HPVM_DIALECT_HPVM_IR_CHILDGRAPH_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::hpvm {

/// The child graph of one internal node: its children (in program order), the
/// edges between them and the binds to the parent's inputs and outputs.
///
/// Children are numbered by their position among the `hpvm.create_node` ops.
/// Node definitions are resolved through a SymbolTableCollection when one is
/// given; unresolved children have a null definition. The graph is a snapshot:
/// rebuild it after changing the internal node.
class ChildGraph {
public:
  explicit ChildGraph(InternalOp internal,
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

  /// The bind_outs defining output `output` of the internal node.
  SmallVector<BindOutOp> getOutputBinds(unsigned output) const;

  /// A cycle among the children as the list of children on it (the first
  /// repeated at the end), or an empty list when the graph is acyclic.
  SmallVector<unsigned> findCycle() const;

  /// The name used for child `index` in diagnostics: "@callee" or, when the
  /// callee occurs several times, "@callee (child #index)".
  std::string describeChild(unsigned index) const;

protected:
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

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_CHILDGRAPH_H
