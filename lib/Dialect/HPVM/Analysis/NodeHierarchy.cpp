//===- NodeHierarchy.cpp - Which node instantiates which ------------------===//
// Answers hierarchy queries (recursion, depth) over a module's node uses.
#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"

using namespace mlir;
using namespace mlir::hpvm;

SmallVector<StringAttr>
mlir::hpvm::findNodeRecursion(StringAttr node,
                              function_ref<NodeOpInterface(StringAttr)> lookup) {
  return walkHierarchy({node}, lookup).cycle;
}

SmallVector<StringAttr> NodeHierarchy::findRecursion(StringAttr node) const {
  return findNodeRecursion(node, [&](StringAttr name) { return lookup(name); });
}

FailureOr<unsigned> NodeHierarchy::getDepth(StringAttr node) const {
  HierarchyWalk walk = walkHierarchy({node}, [&](StringAttr name) { return lookup(name); });
  if (!walk.cycle.empty() || walk.undefined)
    return failure();
  return walk.maxDepth;
}
