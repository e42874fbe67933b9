//===- NodeHierarchy.h - Which node instantiates which ----------*- C++ -*-===//
// Module-wide view of the node hierarchy: instantiations, launches, recursion, depth.
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H
#define HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H

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

/// A chain of names `node → … → node` when `node` instantiates itself (directly
/// or through descendants), resolving names with `lookup`; empty otherwise.
/// Needs no module-wide walk, so verifiers can afford it per node.
SmallVector<StringAttr>
findNodeRecursion(StringAttr node,
                  llvm::function_ref<NodeOpInterface(StringAttr)> lookup);

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

/// The hierarchy of the node definitions in one symbol table (a module).
/// A snapshot: rebuild it after changing the module.
class NodeHierarchy {
public:
  explicit NodeHierarchy(Operation *symbolTableOp);

  /// Every use of the node named `node`, in program order.
  ArrayRef<NodeUse> getUses(StringAttr node) const;

  /// The definition named `node`, or null.
  NodeOpInterface lookup(StringAttr node) const;

  /// A chain of names `node → … → node` when `node` instantiates itself
  /// (directly or through descendants); empty otherwise.
  SmallVector<StringAttr> findRecursion(StringAttr node) const;

  /// Number of levels of the hierarchy rooted at `node` (1 for a leaf, 2 for an
  /// internal node of leaves, …); failure on recursion or an unknown node.
  FailureOr<unsigned> getDepth(StringAttr node) const;

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

#endif // HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H
