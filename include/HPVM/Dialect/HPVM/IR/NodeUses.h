//===- NodeUses.h - Which node instantiates which ---------------*- C++ -*-===//
// Verifier support: the uses of each node definition of a module (create_node
// and launch), the ancestors' uses of a node, and one search of the hierarchy
// below a set of nodes, as the symbol-use verifiers check them. The queries
// passes ask of the hierarchy (depth, recursion of one node) build on it:
// NodeHierarchy, in the analysis library
// (HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h).
#ifndef HPVM_DIALECT_HPVM_IR_NODEUSES_H
#define HPVM_DIALECT_HPVM_IR_NODEUSES_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::hpvm {

/// One way a node definition is used: as a child of an internal node
/// (`hpvm.create_node`) or as the root of a launched graph (`hpvm.launch`,
/// a single instance).
struct NodeUse {
  /// Either a CreateNodeOp or a LaunchOp.
  Operation *op;
  /// Replication dimensions of this use: the create_node's rank, 0 for a root.
  unsigned rank;
  /// The internal node holding the create_node; null for a launched root.
  InternalOp parent;
};

/// What walkHierarchy finds below a set of nodes.
struct HierarchyWalk {
  /// The first cycle `n → … → n` found, or empty.
  SmallVector<StringAttr> cycle;
  /// Without a cycle: the most levels below (and including) a start (1 for
  /// a leaf), and a node at which that many levels begin.
  unsigned maxDepth = 0;
  StringAttr deepest;
  /// Whether a name without a node definition was reached.
  bool undefined = false;
};

/// Searches the hierarchy below `starts`, in their order, each name once:
/// linear in the hierarchy, without recursion whatever its depth.
HierarchyWalk
walkHierarchy(ArrayRef<StringAttr> starts,
              llvm::function_ref<NodeOpInterface(StringAttr)> lookup);

/// The uses of the node definitions in one symbol table (a module).
/// A snapshot: rebuild it after changing the module.
class NodeUses {
public:
  explicit NodeUses(Operation *symbolTableOp);

  /// Every use of the node named `node`, in program order.
  ArrayRef<NodeUse> getUses(StringAttr node) const;

  /// The definition named `node`, or null.
  NodeOpInterface lookup(StringAttr node) const;

  /// The uses of the ancestor `level` levels above `node` over every path up
  /// the hierarchy (level 0: the uses of `node` itself). When some path
  /// reaches a launched root before `level`, `rootTooLow` receives that launch.
  /// Uses are deduplicated; paths that reach an unused node end silently,
  /// because nothing is known statically about them.
  SmallVector<NodeUse> getAncestorUses(StringAttr node, unsigned level,
                                       Operation **rootTooLow = nullptr) const;

private:
  SymbolTable symbols;
  DenseMap<StringAttr, SmallVector<NodeUse>> uses;
};

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_NODEUSES_H
