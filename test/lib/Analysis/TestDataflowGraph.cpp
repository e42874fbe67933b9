//===- TestDataflowGraph.cpp - Prints the DFG analysis for lit tests ------===//
// --hpvm-test-print-dfg: topological order, levels, paths, depth and uses of every node.
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
struct TestPrintDataflowGraphPass
    : public PassWrapper<TestPrintDataflowGraphPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintDataflowGraphPass)

  StringRef getArgument() const final { return "hpvm-test-print-dfg"; }
  StringRef getDescription() const final {
    return "Print the DFG analysis of every node (for tests)";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    NodeHierarchy hierarchy(module);
    SymbolTableCollection symbols;
    llvm::raw_ostream &os = llvm::outs();
    for (auto node : module.getOps<NodeOpInterface>()) {
      auto symbol = cast<SymbolOpInterface>(node.getOperation());
      StringAttr name = symbol.getNameAttr();
      os << "node @" << name.getValue() << ": "
         << (node.isLeafNode() ? "leaf" : "internal");
      FailureOr<unsigned> depth = hierarchy.getDepth(name);
      os << ", depth " << (succeeded(depth) ? std::to_string(*depth) : "?");
      os << ", uses:";
      for (const NodeUse &use : hierarchy.getUses(name)) {
        if (use.parent)
          os << " create_node(rank " << use.rank << ") in @"
             << InternalOp(use.parent).getSymName();
        else
          os << " launch";
      }
      os << ", parents' uses:";
      for (const NodeUse &use : hierarchy.getAncestorUses(name, 1))
        os << " " << use.op->getName().getStringRef() << "(rank " << use.rank
           << ")";
      os << "\n";

      auto internal = dyn_cast<InternalOp>(node.getOperation());
      if (!internal)
        continue;
      DataflowGraph graph(internal, &symbols);
      FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
      os << "  order:";
      if (succeeded(order))
        for (unsigned child : *order)
          os << " " << graph.describeChild(child);
      os << "\n  levels:";
      SmallVector<unsigned> levels = graph.getLevels();
      for (unsigned child = 0; child < graph.getNumChildren(); ++child)
        os << " " << graph.describeChild(child) << "=" << levels[child];
      os << "\n  paths:";
      for (unsigned from = 0; from < graph.getNumChildren(); ++from)
        for (unsigned to = 0; to < graph.getNumChildren(); ++to)
          if (from != to && graph.hasPath(from, to))
            os << " " << graph.describeChild(from) << "->"
               << graph.describeChild(to);
      os << "\n";
    }
  }
};
} // namespace

namespace mlir::hpvm::test {
void registerTestPasses() { PassRegistration<TestPrintDataflowGraphPass>(); }
} // namespace mlir::hpvm::test
