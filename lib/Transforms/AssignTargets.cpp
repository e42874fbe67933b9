//===- AssignTargets.cpp - The hpvm-assign-targets pass -------------------===//
// Resolves target hint lists against the backends built in and a policy;
// nodes keeping several targets are marked for runtime dispatch.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMASSIGNTARGETS
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {
enum class Policy { first, preferGpu, preferCpu, all };

/// A target name as the options spell it; `opencl` is the backend of `spirv`.
std::optional<Target> parseTargetName(StringRef name) {
  if (name == "opencl")
    return Target::spirv;
  return symbolizeTarget(name);
}

/// "[gpu, cpu]".
std::string describeTargets(ArrayRef<Target> targets) {
  std::string text = "[";
  llvm::interleave(
      targets, [&](Target t) { text += stringifyTarget(t).str(); },
      [&] { text += ", "; });
  return text + "]";
}

StringRef nodeName(NodeOpInterface node) {
  return cast<SymbolOpInterface>(node.getOperation()).getName();
}

/// Targets a node runs on from host code (the CPU); every other target is a
/// device whose programs contain the node's whole subgraph.
bool isHostTarget(Target target) { return target == Target::cpu; }

struct HPVMAssignTargetsPass
    : public hpvm::impl::HPVMAssignTargetsBase<HPVMAssignTargetsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult parseOptions(ModuleOp module);
  /// The targets `node` can be compiled for given the available backends and
  /// its children (memoized); failure after reporting why there is none.
  FailureOr<ArrayRef<Target>> getFeasible(NodeOpInterface node);
  /// The policy's choice among a node's feasible targets.
  SmallVector<Target> choose(ArrayRef<Target> feasible) const;

  SmallVector<Target> availableTargets;
  Policy chosenPolicy = Policy::first;
  std::optional<Target> fallbackTarget;

  SymbolTable *symbols = nullptr;
  DenseMap<Operation *, SmallVector<Target>> feasible;
  DenseSet<Operation *> failedNodes;
  /// Nodes after all the nodes they instantiate (depth-first post-order).
  SmallVector<NodeOpInterface> postOrder;
};
} // namespace

LogicalResult HPVMAssignTargetsPass::parseOptions(ModuleOp module) {
  const char *names = "cpu, vector, gpu, spirv (or opencl), tensor";
  SmallVector<std::string> requested(available.begin(), available.end());
  if (requested.empty())
    requested.push_back("cpu");
  availableTargets.clear();
  for (const std::string &name : requested) {
    std::optional<Target> target = parseTargetName(name);
    if (!target)
      return module.emitError()
             << "hpvm-assign-targets: unknown backend '" << name
             << "' in 'available'; expected one of " << names;
    if (!llvm::is_contained(availableTargets, *target))
      availableTargets.push_back(*target);
  }
  std::optional<Policy> parsed =
      llvm::StringSwitch<std::optional<Policy>>(policy)
          .Case("first", Policy::first)
          .Case("prefer-gpu", Policy::preferGpu)
          .Case("prefer-cpu", Policy::preferCpu)
          .Case("all", Policy::all)
          .Default(std::nullopt);
  if (!parsed)
    return module.emitError()
           << "hpvm-assign-targets: unknown policy '" << policy
           << "'; expected one of first, prefer-gpu, prefer-cpu, all";
  chosenPolicy = *parsed;
  fallbackTarget.reset();
  if (!fallback.empty()) {
    fallbackTarget = parseTargetName(fallback);
    if (!fallbackTarget)
      return module.emitError()
             << "hpvm-assign-targets: unknown fallback target '" << fallback
             << "'; expected one of " << names;
    if (!llvm::is_contained(availableTargets, *fallbackTarget))
      return module.emitError()
             << "hpvm-assign-targets: fallback target '" << fallback
             << "' is not an available backend (available: "
             << describeTargets(availableTargets) << ")";
  }
  return success();
}

FailureOr<ArrayRef<Target>>
HPVMAssignTargetsPass::getFeasible(NodeOpInterface node) {
  Operation *op = node.getOperation();
  if (failedNodes.contains(op))
    return failure();
  if (auto it = feasible.find(op); it != feasible.end())
    return ArrayRef<Target>(it->second);
  auto symbol = cast<SymbolOpInterface>(op);

  SmallVector<Target> hints = node.getTargets();
  SmallVector<Target> candidates;
  for (Target hint : hints)
    if (llvm::is_contained(availableTargets, hint))
      candidates.push_back(hint);

  // Internal nodes: children first; a device target must be one every child
  // can follow.
  SmallVector<std::pair<NodeOpInterface, ArrayRef<Target>>> children;
  bool childFailed = false;
  if (auto internal = dyn_cast<InternalOp>(op)) {
    for (auto create : internal.getBodyBlock().getOps<CreateNodeOp>()) {
      auto child = symbols->lookup<NodeOpInterface>(create.getNode());
      if (!child)
        continue; // the verifier has reported it
      FailureOr<ArrayRef<Target>> childTargets = getFeasible(child);
      if (failed(childTargets)) {
        childFailed = true;
        continue;
      }
      children.push_back({child, *childTargets});
    }
  }
  // Why `target` cannot be this node's: the first child that cannot follow.
  auto blockingChild =
      [&](Target target) -> std::pair<NodeOpInterface, ArrayRef<Target>> * {
    if (isHostTarget(target))
      return nullptr;
    for (auto &entry : children)
      if (!llvm::is_contained(entry.second, target))
        return &entry;
    return nullptr;
  };
  if (childFailed) {
    failedNodes.insert(op);
    return failure();
  }
  SmallVector<Target> result;
  for (Target candidate : candidates)
    if (!blockingChild(candidate))
      result.push_back(candidate);

  if (result.empty()) {
    std::string why;
    llvm::raw_string_ostream os(why);
    if (candidates.empty()) {
      os << "none of its target hints " << describeTargets(hints)
         << " is an available backend (available: "
         << describeTargets(availableTargets) << ")";
    } else {
      auto *child = blockingChild(candidates.front());
      os << "none of its available targets " << describeTargets(candidates)
         << " can be followed by all its children: @" << nodeName(child->first)
         << " can be compiled only for " << describeTargets(child->second);
    }
    if (fallbackTarget) {
      if (auto *child = blockingChild(*fallbackTarget)) {
        op->emitError() << "node @" << symbol.getName() << ": " << why
                        << ", and the fallback target '"
                        << stringifyTarget(*fallbackTarget)
                        << "' cannot be followed by its child @"
                        << nodeName(child->first);
        failedNodes.insert(op);
        return failure();
      }
      op->emitWarning() << "node @" << symbol.getName() << ": " << why
                        << "; falling back to "
                        << stringifyTarget(*fallbackTarget);
      result.push_back(*fallbackTarget);
    } else {
      op->emitError() << "node @" << symbol.getName() << ": " << why
                      << " (a 'fallback' target would be used instead)";
      failedNodes.insert(op);
      return failure();
    }
  }
  postOrder.push_back(node);
  return ArrayRef<Target>(feasible[op] = std::move(result));
}

SmallVector<Target>
HPVMAssignTargetsPass::choose(ArrayRef<Target> targets) const {
  auto prefer = [&](Target wanted) {
    return llvm::is_contained(targets, wanted) ? wanted : targets.front();
  };
  switch (chosenPolicy) {
  case Policy::first:
    return {targets.front()};
  case Policy::preferGpu:
    return {prefer(Target::gpu)};
  case Policy::preferCpu:
    return {prefer(Target::cpu)};
  case Policy::all:
    return SmallVector<Target>(targets);
  }
  llvm_unreachable("unknown policy");
}

void HPVMAssignTargetsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(parseOptions(module)))
    return signalPassFailure();
  SymbolTable table(module);
  symbols = &table;
  feasible.clear();
  failedNodes.clear();
  postOrder.clear();

  SmallVector<NodeOpInterface> nodes;
  for (Operation &op : module.getBody()->getOperations())
    if (auto node = dyn_cast<NodeOpInterface>(op))
      nodes.push_back(node);
  bool anyFailed = false;
  for (NodeOpInterface node : nodes)
    anyFailed |= failed(getFeasible(node));
  if (anyFailed)
    return signalPassFailure();

  // Parents before children: a device parent decides its children's target.
  NodeHierarchy hierarchy(module);
  DenseMap<Operation *, SmallVector<Target>> chosen;
  for (NodeOpInterface node : llvm::reverse(postOrder)) {
    Operation *op = node.getOperation();
    llvm::SmallSetVector<Target, 5> wanted;
    ArrayRef<NodeUse> uses =
        hierarchy.getUses(cast<SymbolOpInterface>(op).getNameAttr());
    bool fromHost = uses.empty();
    for (const NodeUse &use : uses) {
      if (!use.parent) {
        fromHost = true; // a launched root
        continue;
      }
      InternalOp parent = use.parent;
      for (Target target : chosen.lookup(parent.getOperation())) {
        if (isHostTarget(target))
          fromHost = true;
        else
          wanted.insert(target);
      }
    }
    ArrayRef<Target> targets = feasible[op];
    if (fromHost)
      for (Target target : choose(targets))
        wanted.insert(target);
    // Keep the node's own order of preference.
    SmallVector<Target> &result = chosen[op];
    for (Target target : targets)
      if (wanted.contains(target))
        result.push_back(target);
  }

  Builder builder(module.getContext());
  for (NodeOpInterface node : postOrder) {
    Operation *op = node.getOperation();
    SmallVector<Attribute> list;
    for (Target target : chosen[op])
      list.push_back(TargetAttr::get(module.getContext(), target));
    op->setAttr(HPVMDialect::getTargetsAttrName(), builder.getArrayAttr(list));
    if (list.size() > 1)
      op->setAttr(HPVMDialect::getDispatchAttrName(), builder.getUnitAttr());
    else
      op->removeAttr(HPVMDialect::getDispatchAttrName());
  }
}
