//===- FuseNodes.cpp - The hpvm-fuse-nodes pass ---------------------------===//
// Replaces two legal sibling leaves by one leaf running both bodies; edges
// between them become SSA values.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Transforms/Analysis/FusionLegality.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMFUSENODES
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// Builds the fused leaf: the producer's body, then the consumer's, where an
/// input fed by an edge from the producer is the producer's returned value.
static LeafOp buildFusedLeaf(OpBuilder &b, LeafOp producer, LeafOp consumer,
                             ArrayRef<EdgeOp> joining, StringRef name,
                             SmallVectorImpl<unsigned> &consumerInputPorts) {
  SmallVector<Type> inputs(producer.getArgumentTypes());
  SmallVector<DictionaryAttr> inputAttrs;
  for (unsigned i = 0; i < producer.getNumArguments(); ++i)
    inputAttrs.push_back(producer.getArgAttrDict(i));
  DenseMap<unsigned, unsigned> fromProducer; // consumer port -> producer port
  for (EdgeOp edge : joining)
    fromProducer[edge.getDestPort()] = edge.getSourcePort();
  for (unsigned port = 0; port < consumer.getNumArguments(); ++port)
    if (!fromProducer.count(port)) {
      consumerInputPorts.push_back(port);
      inputs.push_back(consumer.getArgumentTypes()[port]);
      inputAttrs.push_back(consumer.getArgAttrDict(port));
    }
  SmallVector<Type> outputs(producer.getResultTypes());
  outputs.append(consumer.getResultTypes().begin(), consumer.getResultTypes().end());
  auto fused = LeafOp::create(b, producer.getLoc(), name,
                              b.getFunctionType(inputs, outputs));
  if (Attribute targets = producer->getAttr(HPVMDialect::getTargetsAttrName()))
    fused->setAttr(HPVMDialect::getTargetsAttrName(), targets);
  if (ErrorBudgetAttr budget = strictestNodeError({producer, consumer}))
    fused->setAttr(HPVMDialect::getErrorAttrName(), budget);
  for (auto [index, attrs] : llvm::enumerate(inputAttrs))
    if (attrs)
      fused.setArgAttrs(index, attrs);

  Block &entry = fused.getBodyBlock();
  OpBuilder fb = OpBuilder::atBlockEnd(&entry);
  IRMapping mapping;
  for (unsigned i = 0; i < producer.getNumArguments(); ++i)
    mapping.map(producer.getBodyBlock().getArgument(i), entry.getArgument(i));
  SmallVector<Value> producerResults;
  for (Operation &op : producer.getBodyBlock()) {
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      for (Value value : ret.getOperands())
        producerResults.push_back(mapping.lookupOrDefault(value));
      continue;
    }
    fb.clone(op, mapping);
  }
  IRMapping consumerMapping;
  unsigned next = producer.getNumArguments();
  for (unsigned port = 0; port < consumer.getNumArguments(); ++port) {
    Value arg = consumer.getBodyBlock().getArgument(port);
    auto it = fromProducer.find(port);
    consumerMapping.map(arg, it != fromProducer.end()
                                 ? producerResults[it->second]
                                 : entry.getArgument(next++));
  }
  SmallVector<Value> results(producerResults);
  for (Operation &op : consumer.getBodyBlock()) {
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      for (Value value : ret.getOperands())
        results.push_back(consumerMapping.lookupOrDefault(value));
      continue;
    }
    fb.clone(op, consumerMapping);
  }
  ReturnOp::create(fb, producer.getLoc(), results);
  return fused;
}

/// Fuses children `first` and `second` of `graph` (legality checked).
static void fuse(DataflowGraph &graph, unsigned first, unsigned second,
                 SymbolTable &symbols) {
  CreateNodeOp producerNode = graph.getChild(first);
  CreateNodeOp consumerNode = graph.getChild(second);
  auto producer = cast<LeafOp>(graph.getDefinition(first).getOperation());
  auto consumer = cast<LeafOp>(graph.getDefinition(second).getOperation());
  SmallVector<EdgeOp> joining;
  for (EdgeOp edge : graph.getOutgoingEdges(first))
    if (edge.getDest() == consumerNode.getHandle())
      joining.push_back(edge);

  OpBuilder b(producer);
  b.setInsertionPointAfter(consumer->isBeforeInBlock(producer) ? producer
                                                                : consumer);
  // The nodes' names as the trace shows them (a C++ node's demangled).
  std::string name = getNodeDisplayName(producer.getSymName()) + "_" +
                     getNodeDisplayName(consumer.getSymName());
  SmallVector<unsigned> consumerInputPorts;
  LeafOp fused = buildFusedLeaf(b, producer, consumer, joining, name,
                                consumerInputPorts);
  symbols.insert(fused); // renames on a clash

  // The fused child, where the producer was (its extents dominate there).
  OpBuilder gb(producerNode);
  auto fusedNode = CreateNodeOp::create(gb, producerNode.getLoc(),
                                        producerNode.getHandle().getType(),
                                        fused.getSymName(), producerNode.getDims());
  unsigned producerInputs = producer.getNumArguments();
  unsigned producerOutputs = producer.getNumResults();
  DenseMap<unsigned, unsigned> consumerInputToFused;
  for (auto [index, port] : llvm::enumerate(consumerInputPorts))
    consumerInputToFused[port] = producerInputs + index;

  // Rewire: edges and binds of the consumer move to the fused node's ports.
  for (EdgeOp edge : joining)
    edge.erase();
  InternalOp internal = graph.getInternalNode();
  for (Operation &op : llvm::make_early_inc_range(internal.getBodyBlock())) {
    if (auto edge = dyn_cast<EdgeOp>(op)) {
      if (edge.getSource() == consumerNode.getHandle())
        edge.setSourcePort(producerOutputs + edge.getSourcePort());
      if (edge.getDest() == consumerNode.getHandle())
        edge.setDestPort(consumerInputToFused.lookup(edge.getDestPort()));
    } else if (auto bind = dyn_cast<BindInOp>(op)) {
      if (bind.getDest() == consumerNode.getHandle())
        bind.setDestPort(consumerInputToFused.lookup(bind.getDestPort()));
    } else if (auto bind = dyn_cast<BindOutOp>(op)) {
      if (bind.getSource() == consumerNode.getHandle())
        bind.setSourcePort(producerOutputs + bind.getSourcePort());
    }
  }
  producerNode.getHandle().replaceAllUsesWith(fusedNode.getHandle());
  consumerNode.getHandle().replaceAllUsesWith(fusedNode.getHandle());
  producerNode.erase();
  consumerNode.erase();
}

namespace {
struct HPVMFuseNodesPass
    : public hpvm::impl::HPVMFuseNodesBase<HPVMFuseNodesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<std::string, std::string>> requested;
    for (const std::string &pair : pairs) {
      auto [producer, consumer] = StringRef(pair).split(':');
      if (producer.empty() || consumer.empty()) {
        module.emitError() << "hpvm-fuse-nodes: expected pairs as "
                              "producer:consumer, found '"
                           << pair << "'";
        return signalPassFailure();
      }
      requested.push_back({producer.str(), consumer.str()});
    }
    // Fuses the first legal wanted pair and returns true; with `explain`,
    // fuses nothing and explains every wanted pair that is not legal.
    auto step = [&](bool explain) {
      for (auto internal : module.getOps<InternalOp>()) {
        SymbolTableCollection symbolTables;
        DataflowGraph graph(internal, &symbolTables);
        for (unsigned a = 0; a < graph.getNumChildren(); ++a)
          for (unsigned c = 0; c < graph.getNumChildren(); ++c) {
            if (a == c)
              continue;
            bool wanted = greedy;
            for (auto &[producer, consumer] : requested)
              wanted |= graph.getChild(a).getNode() == producer &&
                        graph.getChild(c).getNode() == consumer;
            if (!wanted)
              continue;
            std::string reason = checkFusionLegality(graph, a, c);
            if (reason.empty() && !explain) {
              fuse(graph, a, c, symbols);
              return true;
            }
            if (!reason.empty() && explain)
              graph.getChild(a).emitRemark()
                  << "not fused with @" << graph.getChild(c).getNode() << ": "
                  << reason;
          }
      }
      return false;
    };
    // Fusion changes the graph: fuse one pair at a time until none is left.
    while (step(/*explain=*/false)) {
    }
    if (!greedy)
      step(/*explain=*/true);
  }
};
} // namespace
