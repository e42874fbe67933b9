//===- NodeUses.cpp - Which node instantiates which -----------------------===//
// Collects every create_node and launch of a module, finds ancestors' uses and
// searches the hierarchy below a set of nodes.
#include "HPVM/Dialect/HPVM/IR/NodeUses.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;

NodeUses::NodeUses(Operation *symbolTableOp) : symbols(symbolTableOp) {
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

ArrayRef<NodeUse> NodeUses::getUses(StringAttr node) const {
  auto it = uses.find(node);
  if (it == uses.end())
    return {};
  return it->second;
}

NodeOpInterface NodeUses::lookup(StringAttr node) const {
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

HierarchyWalk
mlir::hpvm::walkHierarchy(ArrayRef<StringAttr> starts,
                          function_ref<NodeOpInterface(StringAttr)> lookup) {
  // Iterative depth-first search over the names, each visited once over all
  // starts: linear in the hierarchy, whatever its depth (a recursive search
  // overflowed the stack at 100,000 levels). A child on the current path
  // closes a cycle; a name leaves the path with its depth known.
  HierarchyWalk walk;
  constexpr unsigned kOnPath = 0;
  DenseMap<StringAttr, unsigned> depth; // kOnPath while on the path
  struct Frame {
    StringAttr name;
    SmallVector<StringAttr> children;
    size_t next = 0;
    unsigned depth = 1;
  };
  SmallVector<Frame> path;
  auto enter = [&](StringAttr name) {
    depth[name] = kOnPath;
    NodeOpInterface definition = lookup(name);
    walk.undefined |= !definition;
    path.push_back({name, definition ? getChildNames(definition)
                                     : SmallVector<StringAttr>(),
                    0, 1});
  };
  for (StringAttr start : starts) {
    if (depth.count(start))
      continue;
    enter(start);
    while (!path.empty()) {
      Frame &top = path.back();
      if (top.next == top.children.size()) {
        unsigned done = top.depth;
        StringAttr name = top.name;
        depth[name] = done;
        if (done > walk.maxDepth) {
          walk.maxDepth = done;
          walk.deepest = name;
        }
        path.pop_back();
        if (!path.empty())
          path.back().depth = std::max(path.back().depth, done + 1);
        continue;
      }
      StringAttr child = top.children[top.next++];
      auto it = depth.find(child);
      if (it == depth.end()) {
        enter(child);
        continue;
      }
      if (it->second != kOnPath) {
        top.depth = std::max(top.depth, it->second + 1);
        continue;
      }
      // `child` is on the path: the cycle runs from it to the top and back.
      bool inCycle = false;
      for (Frame &frame : path) {
        inCycle |= frame.name == child;
        if (inCycle)
          walk.cycle.push_back(frame.name);
      }
      walk.cycle.push_back(child);
      return walk;
    }
  }
  return walk;
}

SmallVector<NodeUse>
NodeUses::getAncestorUses(StringAttr node, unsigned level,
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
