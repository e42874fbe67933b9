//===- TensorFusion.cpp - Chains of tensor leaves that may become one -----===//
// Single-tensor-op leaves, the pattern trie and the legality of one chain step.
#include "HPVM/Transforms/Analysis/TensorFusion.h"

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
  if (isa<TensorPoolOp>(op))
    return TensorChainKind::pool;
  if (isa<TensorBatchNormOp>(op))
    return TensorChainKind::batchnorm;
  return std::nullopt;
}

/// A reshape a frontend puts around a tensor op (ApproxHPVM's flattening
/// product: collapse the operands, expand the result).
static bool isReshape(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op);
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
  // Constants (a frontend's weights and biases, ApproxHPVM's byte sizes) and
  // reshapes may come with the op.
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
