//===- CheckSupport.cpp - What convert-hpvm-to-cpu accepts ----------------===//
// The legality of the CPU backend: what it cannot compile yet is refused with
// a diagnostic at the op, rather than lowered to wrong code.
#include "HPVM/Conversion/HPVMToCPU.h"
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// The checks of checkCPUSupport and the state they share.
class SupportChecker {
public:
  SupportChecker(ModuleOp module, CPUCodeGen &lowering)
      : module(module), lowering(lowering) {}

  /// Checks the whole module; failure when anything was refused.
  LogicalResult run();

private:
  void refuse(Operation *op, const Twine &what) {
    op->emitOpError() << what << " is not supported by convert-hpvm-to-cpu yet";
    ok = false;
  }
  /// The child graph `op` is in, built on first use.
  DataflowGraph &graphOf(Operation *op);
  bool inStreamingRoot(Operation *op) {
    auto parent = op->getParentOfType<InternalOp>();
    return parent && streamingRoots.contains(parent.getSymNameAttr());
  }
  /// Checks that `handle` is used only where its launch lowers it.
  void refuseOtherUses(Operation *op, Value handle, bool streaming);
  /// Checks the graph handles among the arguments of `block`.
  void checkBlockArguments(Block *block);
  /// Checks one op of the module.
  void checkOp(Operation *op);
  /// Checks a replicated create with 'hpvm.alloc' in its leaf.
  void checkCreate(CreateNodeOp create);
  /// Checks a one_to_one edge out of a replicated node.
  void checkOneToOneEdge(EdgeOp edge);
  /// Checks a bind of an output to its internal node.
  void checkBindOut(BindOutOp bind);
  /// Checks a node's kernel site and the types of its ports.
  void checkNode(NodeOpInterface node);
  /// Checks that a streaming root's children are stages of a pipeline.
  void checkStreamingRoot(InternalOp internal);

  ModuleOp module;
  CPUCodeGen &lowering;
  bool ok = true;
  // Cached symbol lookups: one lookup per op must not scan the module.
  SymbolTableCollection symbols;
  // The roots of streaming launches: their children become pipeline stages.
  llvm::SmallDenseSet<StringAttr> streamingRoots;
  // The child graphs, built when an edge needs one.
  DenseMap<Operation *, std::unique_ptr<DataflowGraph>> graphs;
};
} // namespace

DataflowGraph &SupportChecker::graphOf(Operation *op) {
  auto internal = op->getParentOfType<InternalOp>();
  std::unique_ptr<DataflowGraph> &graph = graphs[internal];
  if (!graph)
    graph = std::make_unique<DataflowGraph>(internal, &symbols);
  return *graph;
}

// Graph handles are waited on, pushed to and popped from where they were
// launched; a non-streaming handle may also reach its wait through branches
// (one of several launches chosen at run time). Refused at `op`, or at the
// offending use when there is no op.
void SupportChecker::refuseOtherUses(Operation *op, Value handle,
                                     bool streaming) {
  auto other = llvm::find_if(handle.getUsers(), [&](Operation *user) {
    return streaming ? !isa<WaitOp, PushOp, PopOp>(user)
                     : !isa<WaitOp, BranchOpInterface>(user);
  });
  if (other == handle.getUsers().end())
    return;
  refuse(op ? op : *other,
         streaming ? "a streaming graph handle used other than by 'hpvm.wait', "
                     "'hpvm.push' and 'hpvm.pop' (a branch, say)"
                   : "a graph handle used other than by 'hpvm.wait' and branches");
}

void SupportChecker::checkBlockArguments(Block *block) {
  for (BlockArgument argument : block->getArguments()) {
    if (!isa<hpvm::GraphType>(argument.getType()) || block->isEntryBlock())
      continue;
    refuseOtherUses(nullptr, argument, /*streaming=*/false);
    if (failed(getLaunchesOf(argument)))
      refuse(block->getParentOp(),
             "a graph handle in a block argument that may come from elsewhere than "
             "an 'hpvm.launch' in the same function (a function argument, say)");
  }
}

void SupportChecker::checkOp(Operation *op) {
  if (auto launch = dyn_cast<LaunchOp>(op)) {
    refuseOtherUses(op, launch.getGraph(), launch.getStreaming());
  } else if (isa<PushOp, PopOp>(op)) {
    if (!op->getOperand(0).getDefiningOp<LaunchOp>())
      refuse(op, "streaming into a graph handle that is not the result of "
                 "an 'hpvm.launch' in the same function");
  } else if (auto wait = dyn_cast<WaitOp>(op)) {
    if (failed(getWaitedRoot(wait, lowering, symbols)))
      ok = false;
  } else if (auto alloc = dyn_cast<AllocOp>(op)) {
    // The CPU backend frees allocation-node memory in the parent: it must
    // leave the leaf as an output, from a single-instance leaf.
    if (!llvm::all_of(alloc->getUsers(),
                      [](Operation *user) { return isa<ReturnOp>(user); }))
      refuse(op, "memory of 'hpvm.alloc' used inside its leaf (rather than "
                 "returned to the siblings that share it)");
  } else if (auto create = dyn_cast<CreateNodeOp>(op)) {
    checkCreate(create);
  } else if (isa<ApproximableOpInterface, TensorYieldOp>(op)) {
    refuse(op, "a tensor op");
  } else if (auto edge = dyn_cast<EdgeOp>(op)) {
    if (edge.getStreaming() && !inStreamingRoot(op))
      refuse(op, "a streaming edge below the root of a streaming graph");
    // One value per instance travels in arrays indexed by instance; the
    // shapes below do not fit that scheme yet.
    auto source = edge.getSource().getDefiningOp<CreateNodeOp>();
    if (edge.getReplication() == Replication::one_to_one && source &&
        source.getRank() > 0)
      checkOneToOneEdge(edge);
  } else if (auto bind = dyn_cast<BindInOp>(op)) {
    if (bind.getStreaming() && !inStreamingRoot(op))
      refuse(op, "a streaming bind below the root of a streaming graph");
  } else if (auto bind = dyn_cast<BindOutOp>(op)) {
    checkBindOut(bind);
  } else if (auto node = dyn_cast<NodeOpInterface>(op)) {
    checkNode(node);
  }
}

void SupportChecker::checkCreate(CreateNodeOp create) {
  auto leaf = symbols.lookupNearestSymbolFrom<LeafOp>(create,
                                                           create.getNodeAttr());
  bool allocates = false;
  if (leaf)
    leaf.walk([&](AllocOp) { allocates = true; });
  if (leaf && create.getRank() > 0 && allocates)
    refuse(create, "a replicated leaf with 'hpvm.alloc' (allocate once per "
                   "tile in a single-instance leaf)");
}

void SupportChecker::checkOneToOneEdge(EdgeOp edge) {
  Operation *op = edge.getOperation();
  auto source = edge.getSource().getDefiningOp<CreateNodeOp>();
  auto dest = edge.getDest().getDefiningOp<CreateNodeOp>();
  auto hasBarrier = [&](CreateNodeOp create) {
    bool found = false;
    if (auto leaf = symbols.lookupNearestSymbolFrom<LeafOp>(
            create, create.getNodeAttr()))
      leaf.walk([&](BarrierOp) { found = true; });
    return found;
  };
  // A value per instance travels in an array indexed by instance; the
  // same port cannot also hand one value to the parent or to an
  // all_to_all consumer. (A value equal in every instance, such as an
  // input passed on, may fan out to any mix of edges and binds.)
  bool perInstance = graphOf(op).carriesValuePerInstance(edge);
  auto samePort = [&](Value source, uint32_t port) {
    return source == edge.getSource() && port == edge.getSourcePort();
  };
  bool boundOut = llvm::any_of(
      op->getBlock()->getOps<BindOutOp>(), [&](BindOutOp bind) {
        return samePort(bind.getSource(), bind.getSourcePort());
      });
  bool allToAll = llvm::any_of(op->getBlock()->getOps<EdgeOp>(), [&](EdgeOp other) {
    return other.getReplication() == Replication::all_to_all &&
           samePort(other.getSource(), other.getSourcePort());
  });
  if (inStreamingRoot(op))
    refuse(op, "a one_to_one edge between replicated stages of a "
               "streaming graph");
  else if (hasBarrier(source) || (dest && hasBarrier(dest)))
    refuse(op, "a one_to_one edge carrying values into or out of a "
               "leaf with 'hpvm.barrier'");
  else if (perInstance && boundOut)
    refuse(op, "a one_to_one edge carrying a value per instance from an output "
               "that is also bound out");
  else if (perInstance && allToAll)
    refuse(op, "a one_to_one edge carrying a value per instance from an output "
               "that also feeds an all_to_all edge");
  else if (edge.getSourcePort() >= 64 || edge.getDestPort() >= 64)
    refuse(op, "a one_to_one edge on a port beyond 63");
}

void SupportChecker::checkBindOut(BindOutOp bind) {
  if (bind.getStreaming() && !inStreamingRoot(bind))
    refuse(bind, "a streaming bind below the root of a streaming graph");
  auto source = bind.getSource().getDefiningOp<CreateNodeOp>();
  auto leaf = source ? symbols.lookupNearestSymbolFrom<LeafOp>(
                           source, source.getNodeAttr())
                     : LeafOp();
  if (leaf)
    leaf.walk([&](ReturnOp ret) {
      if (ret.getOperand(bind.getSourcePort()).getDefiningOp<AllocOp>())
        refuse(bind, "binding 'hpvm.alloc' memory out of its internal "
                     "node (it is freed when the internal node ends)");
    });
}

void SupportChecker::checkNode(NodeOpInterface node) {
  Operation *op = node.getOperation();
  auto kernel = op->getAttrOfType<SymbolRefAttr>(
      HPVMDialect::getKernelAttrName());
  if (kernel && (!kernel.getNestedReferences().empty() ||
                 !symbols.lookupNearestSymbolFrom<LLVM::GlobalOp>(op, kernel))) {
    op->emitOpError() << "names the kernel " << kernel
                      << ", which is not a kernel site global: run "
                         "'hpvm-embed-kernels' after 'convert-hpvm-to-gpu'";
    ok = false;
  }
  auto check = [&](TypeRange types, StringRef kind) {
    for (auto [index, type] : llvm::enumerate(types))
      if (!lowering.getStorageType(type))
        refuse(op, (kind + " " + Twine(index) + " of type '" +
                    llvm::formatv("{0}", type) + "'")
                       .str());
  };
  check(node.getInputTypes(), "input");
  check(node.getOutputTypes(), "output");
}

// A streaming root's children are stages connected by streaming edges, and
// one stage hands the root's outputs to the host.
void SupportChecker::checkStreamingRoot(InternalOp internal) {
  Value producer;
  for (BindOutOp bind : internal.getBodyBlock().getOps<BindOutOp>()) {
    if (producer && bind.getSource() != producer)
      refuse(bind, "defining the outputs of a streaming graph in several "
                   "children");
    producer = bind.getSource();
  }
  for (EdgeOp edge : internal.getBodyBlock().getOps<EdgeOp>())
    if (!edge.getStreaming())
      refuse(edge, "a non-streaming edge in a streaming graph");
}

LogicalResult SupportChecker::run() {
  module.walk([&](LaunchOp launch) {
    if (launch.getStreaming())
      streamingRoots.insert(launch.getRootAttr().getAttr());
  });
  module.walk([&](Block *block) { checkBlockArguments(block); });
  module.walk([&](Operation *op) { checkOp(op); });
  module.walk([&](InternalOp internal) {
    if (streamingRoots.contains(internal.getSymNameAttr()))
      checkStreamingRoot(internal);
  });
  return success(ok);
}

LogicalResult mlir::hpvm::checkCPUSupport(ModuleOp module, CPUCodeGen &codegen) {
  return SupportChecker(module, codegen).run();
}
