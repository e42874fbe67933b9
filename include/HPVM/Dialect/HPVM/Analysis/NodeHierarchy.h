//===- NodeHierarchy.h - Which node instantiates which ----------*- C++ -*-===//
// Module-wide view of the node hierarchy: instantiations, launches, recursion,
// depth. Built on the dialect's index of node uses (NodeUses, which the
// symbol-use verifiers use).
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H
#define HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H

#include "HPVM/Dialect/HPVM/IR/NodeUses.h"

namespace mlir::hpvm {

/// A chain of names `node → … → node` when `node` instantiates itself (directly
/// or through descendants), resolving names with `lookup`; empty otherwise.
/// Needs no module-wide walk.
SmallVector<StringAttr>
findNodeRecursion(StringAttr node,
                  llvm::function_ref<NodeOpInterface(StringAttr)> lookup);

/// The hierarchy of the node definitions in one symbol table (a module): its
/// uses (NodeUses) and what follows from them. A snapshot: rebuild it after
/// changing the module.
class NodeHierarchy : public NodeUses {
public:
  using NodeUses::NodeUses;

  /// A chain of names `node → … → node` when `node` instantiates itself
  /// (directly or through descendants); empty otherwise.
  SmallVector<StringAttr> findRecursion(StringAttr node) const;

  /// Number of levels of the hierarchy rooted at `node` (1 for a leaf, 2 for an
  /// internal node of leaves, …); failure on recursion or an unknown node.
  FailureOr<unsigned> getDepth(StringAttr node) const;
};

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_ANALYSIS_NODEHIERARCHY_H
