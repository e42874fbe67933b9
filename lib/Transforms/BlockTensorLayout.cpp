//===- BlockTensorLayout.cpp - The hpvm-block-tensor-layout pass ----------===//
// Keeps the images between a graph's convolutions with their channels in
// blocks of 16 ([N, C / 16, H, W, 16]), the layout the CPU's kernels read and
// write fastest: a vector register holds one position of a block, so that a
// convolution stores whole vectors, a depthwise or pooling window reads whole
// vectors, and no kernel transposes tiles back to planes. Conversions
// (hpvm.tensor.to_blocked / from_blocked) are made only where an op that
// needs NCHW reads a blocked image, or a blocked image leaves the graph.
//
// Two phases per internal node. First, on the graph as written, which values
// are *wanted* in blocks: those a convolution reads (its channels a multiple
// of 16), and those a layout-free op (elementwise, pool) reads whose result
// is wanted, across edges between leaves. Then, leaf by leaf in topological
// order, ops are rewritten in place: a convolution writes blocks where its
// result is wanted, a layout-free op computes in blocks where its operands
// are blocked, and everything else gets NCHW operands. A leaf output is
// blocked where its value is and every consumer is a leaf this pass rewrites.
//
// The values are those of the NCHW graph bit for bit: the kernels' sums keep
// their order in either layout (runtime/src/tensor/README.md).
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMBLOCKTENSORLAYOUT
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// Channels per block: one AVX-512 vector of f32.
static constexpr int64_t kBlock = 16;

/// A static f32 NCHW image whose channels blocks of 16 divide.
static bool isBlockableImage(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 4 && tensor.hasStaticShape() &&
         tensor.getElementType().isF32() && tensor.getDimSize(1) > 0 &&
         tensor.getDimSize(1) % kBlock == 0;
}

static RankedTensorType blockedType(RankedTensorType type) {
  return RankedTensorType::get({type.getDimSize(0), type.getDimSize(1) / kBlock,
                                type.getDimSize(2), type.getDimSize(3), kBlock},
                               type.getElementType());
}

static bool hasKnob(Operation *op) {
  return op->hasAttr(HPVMDialect::getKnobAttrName());
}

static bool isStaticF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

/// A convolution the CPU's kernels run on blocked operands: f32 of static
/// shapes, no knob, one group or depthwise (a filter that is not a constant
/// is packed on each call). Not one of a single block of filters over a
/// window larger than 1 x 1 (resnet's 16 -> 16 3 x 3 layers): the NCHW
/// kernel runs those along the rows of the planes, 1.2-2.2x faster than the
/// kernels across filters on blocks (Rationale).
static bool isBlockableConv(TensorConv2DOp conv) {
  auto input = dyn_cast<RankedTensorType>(conv.getInput().getType());
  if (!input || input.getRank() != 4 || !isStaticF32(input) ||
      !isStaticF32(conv.getType()) || !isStaticF32(conv.getFilter().getType()) ||
      hasKnob(conv) || conv.getResultBlockAttr())
    return false;
  int64_t groups = conv.getGroups(), channels = input.getDimSize(1);
  int64_t filters = cast<RankedTensorType>(conv.getType()).getDimSize(1);
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  if (groups == 1 && filters == kBlock && filter.getDimSize(2) * filter.getDimSize(3) > 1)
    return false;
  return groups == 1 || (groups == channels && groups == filters);
}

/// An operand a layout-free op can read in blocks: an image of the result's
/// shape, or a per-channel or whole-tensor broadcast ([N, C or 1, 1, 1]), or
/// a constant whose channel dimension is C or 1.
static bool isBlockableOperand(Value value, RankedTensorType result) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 4 || !isStaticF32(type))
    return false;
  if (type.getShape() == result.getShape())
    return true;
  int64_t channels = type.getDimSize(1);
  if (value.getDefiningOp<arith::ConstantOp>())
    return channels == 1 || channels == result.getDimSize(1);
  return channels == result.getDimSize(1) && type.getDimSize(2) == 1 &&
         type.getDimSize(3) == 1;
}

/// An elementwise op whose values do not depend on the layout (an add, an
/// activation, a map), on f32 images whose channels blocks divide.
static bool isLayoutFree(Operation *op) {
  if (!isa<TensorAddOp, TensorReluOp, TensorClippedReluOp, TensorTanhOp,
           TensorSigmoidOp, TensorMapOp>(op) ||
      hasKnob(op) || op->getNumResults() != 1 ||
      !isBlockableImage(op->getResult(0).getType()))
    return false;
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  return llvm::all_of(op->getOperands(),
                      [&](Value v) { return isBlockableOperand(v, result); });
}

static bool isBlockablePool(Operation *op) {
  auto pool = dyn_cast<TensorPoolOp>(op);
  return pool && !hasKnob(pool) && isBlockableImage(pool.getInput().getType()) &&
         isStaticF32(pool.getType());
}

/// A batch normalization whose input may be blocked (its statistics, one
/// value per channel, are read as they are).
static bool isBlockableNorm(Operation *op) {
  auto norm = dyn_cast<TensorBatchNormOp>(op);
  return norm && !hasKnob(norm) && isBlockableImage(norm.getInput().getType()) &&
         llvm::all_of(norm->getOperandTypes(), isStaticF32);
}

/// An op whose input (operand 0) is read in blocks where it arrives in them,
/// its other operands as they are: a pool or a batch normalization (on the
/// graph as written).
static bool followsInput(Operation *op) { return isBlockablePool(op) || isBlockableNorm(op); }

/// A pool whose result has at most half the elements of its input: it is
/// worth reading in blocks even where its result is then converted (the
/// conversion is of the smaller image).
static bool shrinks(TensorPoolOp pool) {
  return 2 * cast<RankedTensorType>(pool.getType()).getNumElements() <=
         cast<RankedTensorType>(pool.getInput().getType()).getNumElements();
}

namespace {
/// The graph of one internal node: which leaves the pass rewrites, which
/// values are wanted in blocks, which outputs leave blocked.
class LayoutPlan {
public:
  LayoutPlan(DataflowGraph &graph, const DenseMap<Operation *, unsigned> &instances,
             bool tensorLeaves);

  /// The leaf of child `child` where this pass rewrites it, else null.
  LeafOp leafOf(unsigned child) const { return leaves[child]; }
  bool wanted(Value value);
  /// Whether output `port` of `child` may leave blocked: every consumer is a
  /// leaf this pass rewrites, over plain edges, and it is not bound out.
  bool portMayBeBlocked(unsigned child, unsigned port) const;
  bool portWanted(unsigned child, unsigned port);

  DataflowGraph &graph;
  /// Per child: which outputs leave blocked (decided when it is rewritten).
  SmallVector<llvm::SmallBitVector> blockedPorts;

private:
  SmallVector<LeafOp> leaves;
  DenseMap<Operation *, unsigned> childOfLeaf;
  DenseMap<Value, bool> wantedValues;
};
} // namespace

LayoutPlan::LayoutPlan(DataflowGraph &graph,
                       const DenseMap<Operation *, unsigned> &instances,
                       bool tensorLeaves)
    : graph(graph) {
  unsigned count = graph.getNumChildren();
  leaves.assign(count, LeafOp());
  blockedPorts.resize(count);
  for (unsigned child = 0; child < count; ++child) {
    auto leaf = dyn_cast_or_null<LeafOp>(
        graph.getDefinition(child) ? graph.getDefinition(child).getOperation() : nullptr);
    // One instance of a leaf of one block, on the CPU only (or the tensor
    // target's CPU kernels), that no other node instantiates (its signature
    // changes).
    if (!leaf || graph.getChild(child).getRank() != 0 || leaf.getBody().empty() ||
        !llvm::hasSingleElement(leaf.getBody()) || instances.lookup(leaf) != 1 ||
        !llvm::all_of(graph.getDefinition(child).getTargets(),
                      [&](Target target) {
                        return target == Target::cpu ||
                               (target == Target::tensor && tensorLeaves);
                      }))
      continue;
    leaves[child] = leaf;
    childOfLeaf[leaf] = child;
    blockedPorts[child].resize(leaf.getNumResults());
  }
}

bool LayoutPlan::portMayBeBlocked(unsigned child, unsigned port) const {
  for (BindOutOp bind : graph.getBindOuts())
    if (bind.getSource() == graph.getChild(child).getHandle() &&
        bind.getSourcePort() == port)
      return false;
  for (EdgeOp edge : graph.getOutgoingEdges(child)) {
    if (edge.getSourcePort() != port)
      continue;
    std::optional<unsigned> dest = graph.getChildIndex(edge.getDest());
    if (edge.getStreaming() || !dest || !leaves[*dest])
      return false;
  }
  return true;
}

bool LayoutPlan::portWanted(unsigned child, unsigned port) {
  if (!portMayBeBlocked(child, port))
    return false;
  for (EdgeOp edge : graph.getOutgoingEdges(child))
    if (edge.getSourcePort() == port &&
        wanted(leaves[*graph.getChildIndex(edge.getDest())].getBodyBlock().getArgument(
            edge.getDestPort())))
      return true;
  return false;
}

bool LayoutPlan::wanted(Value value) {
  if (auto it = wantedValues.find(value); it != wantedValues.end())
    return it->second;
  wantedValues[value] = false; // the graph is acyclic; a guard all the same
  bool result = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto conv = dyn_cast<TensorConv2DOp>(user))
      result = use.getOperandNumber() == 0 && isBlockableConv(conv) &&
               isBlockableImage(value.getType());
    else if (isBlockablePool(user))
      result = shrinks(cast<TensorPoolOp>(user)) || wanted(user->getResult(0));
    else if (isBlockableNorm(user))
      result = use.getOperandNumber() == 0 && wanted(user->getResult(0));
    else if (isLayoutFree(user))
      result = wanted(user->getResult(0));
    else if (isa<ReturnOp>(user))
      if (auto leaf = dyn_cast<LeafOp>(user->getParentOp()); leaf && childOfLeaf.count(leaf))
        result = portWanted(childOfLeaf.lookup(leaf), use.getOperandNumber());
    if (result)
      break;
  }
  return wantedValues[value] = result;
}

namespace {
/// Rewrites one leaf in place; the plan says what is wanted.
class LeafRewriter {
public:
  LeafRewriter(LayoutPlan &plan, unsigned child, const DenseSet<Value> &wantedValues,
               const DenseSet<Operation *> &layoutFree)
      : plan(plan), child(child), leaf(plan.leafOf(child)), wantedValues(wantedValues),
        layoutFree(layoutFree) {}

  void run();

private:
  Value nchw(Value value);
  Value blocked(Value value);
  Value blockedConstant(arith::ConstantOp constant);
  void rewriteConv(TensorConv2DOp conv);
  void rewriteLayoutFree(Operation *op);
  void useNCHW(Operation *op);
  void rewriteReturn(ReturnOp ret);
  OpBuilder builderAfter(Value value);
  /// Whether `value` is an image this pass put in blocks (a tensor of rank 5
  /// of the program's own is not).
  bool isBlocked(Value value) const { return blocks.contains(value); }
  /// Makes `value`, an image of the leaf, blocked.
  void block(Value value) {
    value.setType(blockedType(cast<RankedTensorType>(value.getType())));
    blocks.insert(value);
  }

  LayoutPlan &plan;
  unsigned child;
  LeafOp leaf;
  const DenseSet<Value> &wantedValues;
  const DenseSet<Operation *> &layoutFree;
  /// Conversions made, by the value they convert.
  DenseMap<Value, Value> nchwOf, blockedOf;
  DenseSet<Value> blocks;
};
} // namespace

OpBuilder LeafRewriter::builderAfter(Value value) {
  OpBuilder b(leaf.getContext());
  if (auto arg = dyn_cast<BlockArgument>(value))
    b.setInsertionPointToStart(arg.getOwner());
  else
    b.setInsertionPointAfter(value.getDefiningOp());
  return b;
}

Value LeafRewriter::nchw(Value value) {
  if (!isBlocked(value))
    return value;
  Value &converted = nchwOf[value];
  if (!converted) {
    OpBuilder b = builderAfter(value);
    converted = TensorFromBlockedOp::create(b, value.getLoc(), value, ErrorBudgetAttr())
                    .getResult();
  }
  return converted;
}

/// A constant [N', C or 1, H', W'] as [N', C / 16, H', W', 16] (its values
/// moved to their blocked places), or [N', 1, H', W', 1].
Value LeafRewriter::blockedConstant(arith::ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getType());
  auto values = cast<DenseElementsAttr>(constant.getValue());
  ArrayRef<int64_t> s = type.getShape();
  OpBuilder b(constant);
  if (s[1] == 1 || values.isSplat()) {
    int64_t blocks = s[1] == 1 ? 1 : s[1] / kBlock, block = s[1] == 1 ? 1 : kBlock;
    auto reshaped = RankedTensorType::get({s[0], blocks, s[2], s[3], block},
                                          type.getElementType());
    return arith::ConstantOp::create(b, constant.getLoc(), values.reshape(reshaped));
  }
  SmallVector<APFloat> from(values.getValues<APFloat>());
  SmallVector<APFloat> to(from.size(), APFloat(0.0f));
  int64_t plane = s[2] * s[3];
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t p = 0; p < plane; ++p)
        to[((n * (s[1] / kBlock) + c / kBlock) * plane + p) * kBlock + c % kBlock] =
            from[(n * s[1] + c) * plane + p];
  auto newType = blockedType(type);
  return arith::ConstantOp::create(b, constant.getLoc(),
                                   DenseElementsAttr::get(newType, to));
}

Value LeafRewriter::blocked(Value value) {
  if (isBlocked(value))
    return value;
  Value &converted = blockedOf[value];
  if (converted)
    return converted;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
    converted = blockedConstant(constant);
    blocks.insert(converted);
    return converted;
  }
  OpBuilder b = builderAfter(value);
  converted = TensorToBlockedOp::create(b, value.getLoc(), value, kBlock, ErrorBudgetAttr())
                  .getResult();
  blocks.insert(converted);
  return converted;
}

void LeafRewriter::rewriteConv(TensorConv2DOp conv) {
  Value input = conv.getInput();
  auto result = cast<RankedTensorType>(conv.getType());
  // Read in blocks where the input already is (and its channels allow).
  int64_t channels = isBlocked(input)
                         ? cast<RankedTensorType>(input.getType()).getDimSize(1) * kBlock
                         : cast<RankedTensorType>(input.getType()).getDimSize(1);
  if (channels % kBlock != 0)
    conv->setOperand(0, nchw(input));
  if (result.getDimSize(1) % kBlock == 0 && wantedValues.contains(conv.getResult())) {
    conv.setResultBlockAttr(OpBuilder(conv).getI64IntegerAttr(kBlock));
    block(conv.getResult());
  }
}

/// In blocks where an operand is blocked and either every image operand is
/// or the result is wanted in blocks (the others are converted); else NCHW.
void LeafRewriter::rewriteLayoutFree(Operation *op) {
  bool anyBlocked = false, allBlocked = true;
  for (Value operand : op->getOperands()) {
    if (operand.getDefiningOp<arith::ConstantOp>())
      continue;
    anyBlocked |= isBlocked(operand);
    allBlocked &= isBlocked(operand);
  }
  if (!anyBlocked || (!allBlocked && !wantedValues.contains(op->getResult(0))))
    return useNCHW(op);
  for (OpOperand &operand : op->getOpOperands())
    operand.set(blocked(operand.get()));
  block(op->getResult(0));
}

void LeafRewriter::useNCHW(Operation *op) {
  for (OpOperand &operand : op->getOpOperands())
    if (isBlocked(operand.get()))
      operand.set(nchw(operand.get()));
}

void LeafRewriter::rewriteReturn(ReturnOp ret) {
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned port = operand.getOperandNumber();
    if (!isBlocked(operand.get()))
      continue;
    if (plan.portMayBeBlocked(child, port) && plan.portWanted(child, port))
      plan.blockedPorts[child].set(port);
    else
      operand.set(nchw(operand.get()));
  }
}

void LeafRewriter::run() {
  Block &body = leaf.getBodyBlock();
  // Inputs from blocked outputs arrive blocked.
  for (BlockArgument arg : body.getArguments())
    for (Operation *feeder : plan.graph.getFeeders(child, arg.getArgNumber()))
      if (auto edge = dyn_cast<EdgeOp>(feeder)) {
        unsigned source = *plan.graph.getChildIndex(edge.getSource());
        if (plan.blockedPorts[source].size() > edge.getSourcePort() &&
            plan.blockedPorts[source].test(edge.getSourcePort()))
          block(arg);
      }
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : ops) {
    if (auto conv = dyn_cast<TensorConv2DOp>(op); conv && layoutFree.contains(op))
      rewriteConv(conv);
    else if (isa<TensorPoolOp, TensorBatchNormOp>(op) && layoutFree.contains(op) &&
             isBlocked(op->getOperand(0)))
      block(op->getResult(0));
    else if (layoutFree.contains(op))
      rewriteLayoutFree(op);
    else
      useNCHW(op);
  }
  rewriteReturn(cast<ReturnOp>(body.getTerminator()));
  // Ops nested in regions read NCHW images too.
  leaf.walk([&](Operation *op) {
    if (op->getParentOp() != leaf && !isa<ReturnOp>(op))
      useNCHW(op);
  });
  // Constants replaced by their blocked forms.
  for (auto [value, converted] : blockedOf)
    if (auto constant = value.getDefiningOp<arith::ConstantOp>();
        constant && constant->use_empty())
      constant->erase();
  SmallVector<Type> inputs(body.getArgumentTypes());
  leaf.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      leaf.getContext(), inputs, body.getTerminator()->getOperandTypes())));
}

namespace {
struct HPVMBlockTensorLayoutPass
    : public hpvm::impl::HPVMBlockTensorLayoutBase<HPVMBlockTensorLayoutPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    // How many children instantiate each node definition.
    DenseMap<Operation *, unsigned> instances;
    module.walk([&](CreateNodeOp node) {
      if (NodeOpInterface def = node.getNodeDefinition(symbols))
        ++instances[def.getOperation()];
    });
    module.walk([&](InternalOp internal) { rewriteGraph(internal, symbols, instances); });
  }

  void rewriteGraph(InternalOp internal, SymbolTableCollection &symbols,
                    const DenseMap<Operation *, unsigned> &instances) {
    DataflowGraph graph(internal, &symbols);
    FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
    if (failed(order))
      return;
    LayoutPlan plan(graph, instances, tensorLeaves);
    // What is wanted and which ops may change, all found on the graph as
    // written, before any rewrite changes a type.
    DenseSet<Value> wantedValues;
    DenseSet<Operation *> changeable;
    for (unsigned child : *order) {
      LeafOp leaf = plan.leafOf(child);
      if (!leaf)
        continue;
      for (Operation &op : leaf.getBodyBlock().without_terminator()) {
        auto conv = dyn_cast<TensorConv2DOp>(op);
        if ((conv && isBlockableConv(conv)) || followsInput(&op) || isLayoutFree(&op))
          changeable.insert(&op);
        for (Value result : op.getResults())
          if (plan.wanted(result))
            wantedValues.insert(result);
      }
    }
    for (unsigned child : *order)
      if (plan.leafOf(child))
        LeafRewriter(plan, child, wantedValues, changeable).run();
  }
};
} // namespace
