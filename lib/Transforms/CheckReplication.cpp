//===- CheckReplication.cpp - The hpvm-check-replication pass -------------===//
// Warns where a replicated node's instances cannot differ: every instance
// would repeat the same work.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMCHECKREPLICATION
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// Whether `op` can give instances of a leaf different values although they
/// run the same code on the same inputs: an atomic (each instance sees the
/// others' updates) or a call (anything may happen there).
bool canDistinguishInstances(Operation *op) {
  return isa<CallOpInterface, memref::AtomicRMWOp, memref::GenericAtomicRMWOp,
             LLVM::AtomicRMWOp, LLVM::AtomicCmpXchgOp>(op);
}

class ReplicationChecker {
public:
  explicit ReplicationChecker(ModuleOp module) : module(module) {}

  /// The symbol lookups the checker caches, to share with a DataflowGraph.
  SymbolTableCollection &getSymbols() { return symbols; }

  /// Whether the instances of a use of `node` may differ, looking `level`
  /// levels below that use (level 0: `node` is the replicated node itself).
  bool mayDiffer(NodeOpInterface node, unsigned level) {
    auto key = std::make_pair(node.getOperation(), level);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    // Assumed while the node is being looked at: a recursive hierarchy is
    // rejected by the verifier, this only keeps the walk finite.
    memo[key] = true;
    bool result = compute(node, level);
    memo[key] = result;
    return result;
  }

private:
  bool compute(NodeOpInterface node, unsigned level) {
    if (auto leaf = dyn_cast<LeafOp>(node.getOperation())) {
      WalkResult found = leaf.walk([&](Operation *op) {
        if (auto id = dyn_cast<InstanceIdOp>(op); id && id.getLevel() == level)
          return WalkResult::interrupt();
        if (auto count = dyn_cast<NumInstancesOp>(op);
            count && count.getLevel() == level)
          return WalkResult::interrupt();
        return canDistinguishInstances(op) ? WalkResult::interrupt()
                                           : WalkResult::advance();
      });
      return found.wasInterrupted();
    }
    auto internal = cast<InternalOp>(node.getOperation());
    if (internal.getBody().empty())
      return true;
    for (auto create : internal.getBodyBlock().getOps<CreateNodeOp>()) {
      auto child = symbols.lookupNearestSymbolFrom<NodeOpInterface>(
          module, create.getNodeAttr());
      if (!child || mayDiffer(child, level + 1))
        return true;
    }
    return false;
  }

  ModuleOp module;
  SymbolTableCollection symbols;
  DenseMap<std::pair<Operation *, unsigned>, bool> memo;
};

/// Whether an input of child `index` of `graph` arrives per instance.
bool hasPerInstanceInput(const DataflowGraph &graph, unsigned index) {
  NodeOpInterface definition = graph.getDefinition(index);
  for (unsigned port = 0, e = definition.getInputTypes().size(); port < e;
       ++port)
    for (Operation *feeder : graph.getFeeders(index, port))
      if (auto edge = dyn_cast<EdgeOp>(feeder))
        if (edge.getReplication() == Replication::one_to_one)
          if (std::optional<unsigned> source =
                  graph.getChildIndex(edge.getSource()))
            if (graph.getChild(*source).getRank() > 0)
              return true;
  return false;
}

struct HPVMCheckReplicationPass
    : public hpvm::impl::HPVMCheckReplicationBase<HPVMCheckReplicationPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ReplicationChecker checker(module);
    for (auto internal : module.getOps<InternalOp>()) {
      if (internal.getBody().empty())
        continue;
      DataflowGraph graph(internal, &checker.getSymbols());
      for (unsigned index = 0, e = graph.getNumChildren(); index < e; ++index) {
        CreateNodeOp create = graph.getChild(index);
        NodeOpInterface definition = graph.getDefinition(index);
        if (create.getRank() == 0 || !definition ||
            hasPerInstanceInput(graph, index) ||
            checker.mayDiffer(definition, 0))
          continue;
        InFlightDiagnostic diag =
            create.emitWarning()
            << "@" << create.getNode() << " is replicated over "
            << create.getRank()
            << (create.getRank() == 1 ? " dimension" : " dimensions")
            << ", but its instances cannot differ: nothing "
            << (isa<LeafOp>(definition.getOperation()) ? "in it"
                                                         : "in it or below it")
            << " reads an instance id or count of this level, no input "
               "differs per instance, and there are no atomics or calls; "
               "every instance repeats the same work";
        diag.attachNote(definition.getLoc())
            << "index the work by the instance id (hpvm.instance_id, "
               "__hpvm__getNodeInstanceID_x), or create the node without "
               "dimensions";
      }
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
