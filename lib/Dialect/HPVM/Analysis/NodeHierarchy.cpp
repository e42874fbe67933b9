//===- NodeHierarchy.cpp - Which node instantiates which ------------------===//
// Collects every create_node and launch of a module and answers hierarchy queries.
#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;

NodeHierarchy::NodeHierarchy(Operation *symbolTableOp)
    : symbols(symbolTableOp) {
  // create_node appears only directly in internal bodies and launches never in
  // leaves, so leaf bodies (most of a program) are not walked.
  for (Block &block : symbolTableOp->getRegion(0))
    for (Operation &top : block) {
      if (isa<LeafOp>(top))
        continue;
      if (auto internal = dyn_cast<InternalOp>(top)) {
        for (Block &body : internal.getBody())
          for (auto create : body.getOps<CreateNodeOp>())
            uses[create.getNodeAttr().getAttr()].push_back(
                {create, create.getRank(), internal});
        continue;
      }
      top.walk([&](LaunchOp launch) {
        uses[launch.getRootAttr().getAttr()].push_back({launch, 0, InternalOp()});
      });
    }
}

ArrayRef<NodeUse> NodeHierarchy::getUses(StringAttr node) const {
  auto it = uses.find(node);
  if (it == uses.end())
    return {};
  return it->second;
}

NodeOpInterface NodeHierarchy::lookup(StringAttr node) const {
  return dyn_cast_or_null<NodeOpInterface>(symbols.lookup(node));
}

/// Names of the nodes an internal node instantiates, in program order.
static SmallVector<StringAttr> getChildNames(NodeOpInterface node) {
  SmallVector<StringAttr> names;
  auto internal = dyn_cast_or_null<InternalOp>(node.getOperation());
  if (!internal || internal.getBody().empty())
    return names;
  for (auto create : internal.getBodyBlock().getOps<CreateNodeOp>())
    names.push_back(create.getNodeAttr().getAttr());
  return names;
}

SmallVector<StringAttr>
mlir::hpvm::findNodeRecursion(StringAttr node,
                              function_ref<NodeOpInterface(StringAttr)> lookup) {
  // Depth-first search from `node`; `path` is the current chain of names.
  SmallVector<StringAttr> path{node};
  llvm::SmallDenseSet<StringAttr> finished;
  std::function<bool(StringAttr)> visit = [&](StringAttr current) -> bool {
    for (StringAttr child : getChildNames(lookup(current))) {
      if (child == node) {
        path.push_back(child);
        return true;
      }
      if (finished.contains(child) || llvm::is_contained(path, child))
        continue;
      path.push_back(child);
      if (visit(child))
        return true;
      path.pop_back();
      finished.insert(child);
    }
    return false;
  };
  if (visit(node))
    return path;
  return {};
}

SmallVector<StringAttr> NodeHierarchy::findRecursion(StringAttr node) const {
  return findNodeRecursion(node, [&](StringAttr name) { return lookup(name); });
}

FailureOr<unsigned> NodeHierarchy::getDepth(StringAttr node) const {
  // Memoized depth-first search; `active` detects recursion.
  DenseMap<StringAttr, unsigned> depth;
  llvm::SmallDenseSet<StringAttr> active;
  std::function<FailureOr<unsigned>(StringAttr)> compute =
      [&](StringAttr name) -> FailureOr<unsigned> {
    if (auto it = depth.find(name); it != depth.end())
      return it->second;
    NodeOpInterface definition = lookup(name);
    if (!definition || !active.insert(name).second)
      return failure();
    unsigned result = 1;
    for (StringAttr child : getChildNames(definition)) {
      FailureOr<unsigned> childDepth = compute(child);
      if (failed(childDepth))
        return failure();
      result = std::max(result, *childDepth + 1);
    }
    active.erase(name);
    depth[name] = result;
    return result;
  };
  return compute(node);
}

SmallVector<NodeUse>
NodeHierarchy::getAncestorUses(StringAttr node, unsigned level,
                               Operation **rootTooLow) const {
  if (rootTooLow)
    *rootTooLow = nullptr;
  // Uses at the current level, deduplicated by op; the walk goes up one level
  // per step through the parents of create_node uses.
  llvm::SetVector<Operation *> frontier;
  DenseMap<Operation *, NodeUse> useOf;
  for (const NodeUse &use : getUses(node)) {
    frontier.insert(use.op);
    useOf[use.op] = use;
  }
  for (unsigned step = 0; step < level && !frontier.empty(); ++step) {
    llvm::SetVector<Operation *> next;
    for (Operation *op : frontier) {
      NodeUse use = useOf[op];
      if (!use.parent) {
        // A launched root has no ancestor.
        if (rootTooLow && !*rootTooLow)
          *rootTooLow = op;
        continue;
      }
      for (const NodeUse &parentUse : getUses(use.parent.getSymNameAttr())) {
        next.insert(parentUse.op);
        useOf[parentUse.op] = parentUse;
      }
    }
    frontier = std::move(next);
  }
  SmallVector<NodeUse> result;
  for (Operation *op : frontier)
    result.push_back(useOf[op]);
  return result;
}
