//===- TensorFusion.cpp - Chains of tensor leaves that may become one -----===//
// Single-tensor-op leaves, the pattern trie and the legality of one chain step.
#include "HPVM/Transforms/Analysis/TensorFusion.h"

#include "HPVM/Dialect/HPVM/Analysis/ElementwiseForms.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hpvm;

std::optional<TensorChainKind> mlir::hpvm::getTensorChainKind(Operation *op) {
  if (isa<TensorConv2DOp>(op))
    return TensorChainKind::conv2d;
  if (isa<TensorMulOp>(op))
    return TensorChainKind::mul;
  if (isa<TensorAddOp>(op))
    return TensorChainKind::add;
  if (isa<TensorReluOp, TensorClippedReluOp, TensorTanhOp, TensorSigmoidOp>(op))
    return TensorChainKind::activation;
  // HardSwish as the importer writes it: the CPU's kernels apply it in their epilogue.
  if (auto map = dyn_cast<TensorMapOp>(op); map && isHardSwishMap(map))
    return TensorChainKind::activation;
  if (isa<TensorPoolOp>(op))
    return TensorChainKind::pool;
  if (isa<TensorBatchNormOp>(op))
    return TensorChainKind::batchnorm;
  return std::nullopt;
}

/// A reshape a frontend puts around a tensor op (ApproxHPVM's flattening
/// product: collapse the operands, expand the result), or a change of layout
/// hpvm-block-tensor-layout puts there (a bias put in blocks, a result taken
/// out of them).
static bool isReshape(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, TensorToBlockedOp,
             TensorFromBlockedOp>(op);
}

Operation *mlir::hpvm::getSingleTensorOp(LeafOp leaf, std::string *why) {
  auto fail = [&](const Twine &reason) -> Operation * {
    if (why)
      *why = reason.str();
    return nullptr;
  };
  if (why)
    why->clear();
  Operation *found = nullptr;
  unsigned patternOps = 0;
  leaf.walk([&](Operation *op) {
    if (getTensorChainKind(op)) {
      found = op;
      ++patternOps;
    }
  });
  if (!found)
    return nullptr; // nothing a pattern could use: no reason to give
  if (!leaf.getBody().hasOneBlock())
    return fail("it has several blocks");
  Block &body = leaf.getBodyBlock();
  // Constants (a frontend's weights and biases, ApproxHPVM's byte sizes),
  // reshapes and changes of layout may come with the op.
  size_t others = llvm::count_if(body.without_terminator(), [&](Operation &op) {
    return &op != found && !op.hasTrait<::mlir::OpTrait::ConstantLike>() && !isReshape(&op);
  });
  if (patternOps != 1 || others != 0)
    return fail("it is not a single-tensor-op leaf (it holds " +
                Twine(body.getOperations().size() - 1) +
                " ops besides hpvm.return, not all constants)");
  // It returns the op's result (reshaped, maybe) first, and constants after.
  auto ret = cast<ReturnOp>(body.getTerminator());
  Value result = ret.getNumOperands() ? ret.getOperand(0) : Value();
  while (result && result.getDefiningOp() && isReshape(result.getDefiningOp()))
    result = result.getDefiningOp()->getOperand(0);
  bool constantsAfter = llvm::all_of(ret.getOperands().drop_front(), [](Value value) {
    Operation *def = value.getDefiningOp();
    return def && def->hasTrait<::mlir::OpTrait::ConstantLike>();
  });
  if (!result || result != found->getResult(0) || !constantsAfter)
    return fail("it does not return exactly the result of its tensor op (and constants)");
  return found;
}

/// The patterns: the release's three (and their prefixes), then the layers
/// of ResNet and MobileNet as ApproxHPVM writes them (a batch normalization
/// after the convolution, a residual add before the activation). They share
/// prefixes; every prefix of two or more ops is itself a pattern, so growing a
/// chain step by step finds the longest one.
static ArrayRef<SmallVector<TensorChainKind>> tensorPatterns() {
  using K = TensorChainKind;
  static const SmallVector<SmallVector<K>> patterns = {
      {K::conv2d, K::add, K::activation, K::pool},
      {K::conv2d, K::add, K::pool},
      {K::mul, K::add, K::activation},
      {K::conv2d, K::add, K::batchnorm, K::activation},
      {K::conv2d, K::batchnorm, K::activation},
      {K::add, K::activation},
      {K::batchnorm, K::activation},
  };
  return patterns;
}

bool mlir::hpvm::continuesTensorPattern(ArrayRef<TensorChainKind> kinds,
                                        TensorChainKind next) {
  for (ArrayRef<TensorChainKind> pattern : tensorPatterns())
    if (kinds.size() < pattern.size() &&
        pattern.take_front(kinds.size()) == kinds &&
        pattern[kinds.size()] == next)
      return true;
  return false;
}

bool mlir::hpvm::startsTensorPattern(TensorChainKind kind) {
  return llvm::any_of(tensorPatterns(), [&](ArrayRef<TensorChainKind> pattern) {
    return pattern.front() == kind;
  });
}

/// Why `edge` from child `producer` to child `consumer` cannot be inside a
/// fused leaf (targets, streaming, grids), or the empty string.
static std::string checkEdgeAndGrids(const DataflowGraph &graph, unsigned producer,
                                     unsigned consumer, EdgeOp edge) {
  NodeOpInterface a = graph.getDefinition(producer);
  NodeOpInterface b = graph.getDefinition(consumer);
  if (a.getTargets() != b.getTargets())
    return "the nodes have different targets";
  if (edge.getStreaming())
    return "a streaming edge joins them";
  CreateNodeOp ca = graph.getChild(producer), cb = graph.getChild(consumer);
  if (ca.getRank() != cb.getRank())
    return "the grids have different ranks";
  for (unsigned d = 0; d < ca.getRank(); ++d)
    if (!isSameExtent(ca.getDims()[d], cb.getDims()[d]))
      return "the grids may differ in dimension " + std::to_string(d);
  if (ca.getRank() > 0 && edge.getReplication() != Replication::one_to_one)
    return "an all_to_all edge joins replicated nodes";
  return "";
}

/// The tensor map that is all of `leaf` (besides constants) and takes
/// exactly its `inputs` arguments, each once, returning the map's result
/// alone; or null.
static TensorMapOp getElementwiseMap(LeafOp leaf, unsigned inputs) {
  if (!leaf || !leaf.getBody().hasOneBlock() || leaf.getNumArguments() != inputs)
    return {};
  Block &body = leaf.getBodyBlock();
  TensorMapOp map;
  for (Operation &op : body.without_terminator()) {
    if (op.hasTrait<::mlir::OpTrait::ConstantLike>())
      continue;
    if (map || !isa<TensorMapOp>(op))
      return {};
    map = cast<TensorMapOp>(op);
  }
  if (!map || map->getNumOperands() != inputs)
    return {};
  for (unsigned i = 0; i < inputs; ++i)
    if (!llvm::is_contained(map->getOperands(), body.getArgument(i)))
      return {};
  auto ret = cast<ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() != 1 || ret.getOperand(0) != map.getResult())
    return {};
  return map;
}

/// A one-input elementwise leaf: a single activation op (relu, clipped_relu,
/// tanh, sigmoid) of its one argument, or a one-input tensor map.
static bool isUnaryElementwiseLeaf(LeafOp leaf) {
  if (!leaf || leaf.getNumArguments() != 1 || leaf.getNumResults() != 1)
    return false;
  if (getElementwiseMap(leaf, 1))
    return true;
  Operation *op = getSingleTensorOp(leaf);
  return op && getTensorChainKind(op) == TensorChainKind::activation &&
         op->getOperand(0) == leaf.getBodyBlock().getArgument(0) &&
         op->getResult(0).getType() == op->getOperand(0).getType();
}

/// Whether every output of child `index` goes through `edges` only (no
/// other edge, no bind_out); else why not, naming `index` as `what`.
static std::string feedsOnly(const DataflowGraph &graph, unsigned index,
                             ArrayRef<EdgeOp> edges, StringRef what) {
  for (BindOutOp bind : graph.getBindOuts())
    if (bind.getSource() == graph.getChild(index).getHandle())
      return (what + " is also an output of @" +
              graph.getInternalNode().getSymName() + " (bind_out)")
          .str();
  for (EdgeOp other : graph.getOutgoingEdges(index))
    if (!llvm::is_contained(edges, other))
      return (what + " also feeds " +
              graph.describeChild(*graph.getChildIndex(other.getDest())) +
              " (input " + Twine(other.getDestPort()) + ")")
          .str();
  return "";
}

std::optional<TensorDiamond>
mlir::hpvm::findTensorDiamond(const DataflowGraph &graph, unsigned producer,
                              std::string &why) {
  why.clear();
  auto leafOf = [&](Value handle) {
    std::optional<unsigned> index = graph.getChildIndex(handle);
    return std::make_pair(
        index, index ? dyn_cast<LeafOp>(graph.getDefinition(*index).getOperation())
                     : LeafOp());
  };
  // The shape first: producer -> unary -> binary <- producer.
  std::optional<TensorDiamond> found;
  for (EdgeOp toUnary : graph.getOutgoingEdges(producer)) {
    auto [unary, unaryLeaf] = leafOf(toUnary.getDest());
    if (toUnary.getSourcePort() != 0 || !isUnaryElementwiseLeaf(unaryLeaf))
      continue;
    for (EdgeOp unaryToBinary : graph.getOutgoingEdges(*unary)) {
      auto [binary, binaryLeaf] = leafOf(unaryToBinary.getDest());
      if (!binaryLeaf || unaryToBinary.getSourcePort() != 0)
        continue;
      for (EdgeOp toBinary : graph.getOutgoingEdges(producer))
        if (toBinary.getSourcePort() == 0 && toBinary.getDest() == unaryToBinary.getDest() &&
            toBinary.getDestPort() != unaryToBinary.getDestPort())
          found = TensorDiamond{*unary, *binary, toUnary, toBinary, unaryToBinary};
      if (found)
        break;
    }
    if (found)
      break;
  }
  if (!found)
    return std::nullopt;
  TensorDiamond d = *found;
  auto refuse = [&](const Twine &reason) -> std::optional<TensorDiamond> {
    why = reason.str();
    return d;
  };
  auto binaryLeaf = cast<LeafOp>(graph.getDefinition(d.binary).getOperation());
  if (binaryLeaf.getNumArguments() != 2 || graph.getIncomingEdges(d.binary).size() != 2)
    return refuse(graph.describeChild(d.binary) + " has another input");
  if (!getElementwiseMap(binaryLeaf, 2))
    return refuse(graph.describeChild(d.binary) +
                  " is not one tensor map of its two inputs");
  std::string reason =
      feedsOnly(graph, producer, {d.toUnary, d.toBinary}, "its result");
  if (reason.empty())
    reason = feedsOnly(graph, d.unary, {d.unaryToBinary},
                       "the result of " + graph.describeChild(d.unary));
  if (!reason.empty())
    return refuse(reason);
  for (auto [from, to, edge] :
       {std::make_tuple(producer, d.unary, d.toUnary),
        std::make_tuple(producer, d.binary, d.toBinary),
        std::make_tuple(d.unary, d.binary, d.unaryToBinary)}) {
    reason = checkEdgeAndGrids(graph, from, to, edge);
    if (!reason.empty())
      return refuse(reason);
  }
  for (Target target : graph.getDefinition(producer).getTargets())
    if (target != Target::cpu)
      return refuse("the nodes are hinted for a device (a diamond is fused for "
                    "the CPU only)");
  return d;
}

std::string mlir::hpvm::checkTensorFusionStep(const DataflowGraph &graph,
                                              unsigned producer,
                                              unsigned consumer, EdgeOp edge) {
  NodeOpInterface a = graph.getDefinition(producer);
  NodeOpInterface b = graph.getDefinition(consumer);
  if (a.getTargets() != b.getTargets())
    return "the nodes have different targets";
  // The intermediate result must have one consumer: the next op.
  for (BindOutOp bind : graph.getBindOuts())
    if (bind.getSource() == graph.getChild(producer).getHandle())
      return "its result is also an output of @" +
             graph.getInternalNode().getSymName().str() +
             " (bind_out), not only an input of the next node";
  for (EdgeOp other : graph.getOutgoingEdges(producer)) {
    if (other != edge && other.getSourcePort() == edge.getSourcePort())
      return "its result also feeds " +
             graph.describeChild(*graph.getChildIndex(other.getDest())) +
             " (input " + std::to_string(other.getDestPort()) +
             "), not only the next node";
    // Its other outputs (constants: ApproxHPVM's byte sizes) may only go to
    // the consumer too, which then takes them from inside the fused leaf.
    if (other.getSourcePort() != edge.getSourcePort() && other.getDest() != edge.getDest())
      return "its output " + std::to_string(other.getSourcePort()) + " also feeds " +
             graph.describeChild(*graph.getChildIndex(other.getDest())) +
             ", not only the next node";
  }
  if (std::string reason = checkEdgeAndGrids(graph, producer, consumer, edge);
      !reason.empty())
    return reason;
  // The result must enter the consumer's op as its data operand (either
  // operand of add), not some other input.
  auto leaf = cast<LeafOp>(b.getOperation());
  Operation *op = getSingleTensorOp(leaf);
  Value argument = leaf.getBodyBlock().getArgument(edge.getDestPort());
  bool chainOperand = isa<TensorAddOp>(op)
                          ? llvm::is_contained(op->getOperands(), argument)
                          : op->getOperand(0) == argument;
  if (!chainOperand)
    return "its result feeds input " + std::to_string(edge.getDestPort()) +
           " of the consumer, which is not the data operand of its '" +
           op->getName().getStringRef().str() + "'";
  return "";
}
