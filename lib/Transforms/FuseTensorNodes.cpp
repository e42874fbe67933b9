//===- FuseTensorNodes.cpp - The hpvm-fuse-tensor-nodes pass --------------===//
// Replaces chains of single-tensor-op leaves (conv2d→add→act→pool, …,
// mul→add) by one leaf, a chain possibly ending in a diamond (sigmoid, then
// the product of its input and result: SiLU); refusals are remarks saying
// why.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/Analysis/NodeHierarchy.h"
#include "HPVM/Transforms/Analysis/TensorFusion.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMFUSETENSORNODES
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// "conv2d" for hpvm.tensor.conv2d.
static StringRef shortName(Operation *op) {
  StringRef name = op->getName().stripDialect();
  name.consume_front("tensor.");
  return name;
}

static LeafOp getLeaf(NodeOpInterface node) {
  return dyn_cast_or_null<LeafOp>(node ? node.getOperation() : nullptr);
}

namespace {
/// A chain of children of one internal node, in dataflow order, and the edges
/// joining them.
struct Chain {
  SmallVector<CreateNodeOp> nodes;
  SmallVector<LeafOp> leaves;
  /// The edges inside the chain: the tensor's, then those of a producer's
  /// other (constant) outputs into its consumer.
  SmallVector<EdgeOp> edges;
  /// Per leaf: its input ports fed from inside the chain, each with the
  /// feeding leaf's index in the chain and output port (the previous leaf's,
  /// but for a diamond's product, fed by the leaf two before too).
  std::vector<DenseMap<unsigned, std::pair<unsigned, unsigned>>> fed;

  /// Records `edge` from member `from` into member `to`.
  void join(unsigned from, unsigned to, EdgeOp edge) {
    edges.push_back(edge);
    fed[to][edge.getDestPort()] = {from, edge.getSourcePort()};
  }
};
} // namespace

/// Builds the fused leaf: each leaf's ops in chain order, an input fed from
/// inside the chain being the previous leaf's output.
static LeafOp buildFusedLeaf(OpBuilder &b, Chain &chain, StringRef name) {
  SmallVector<Type> inputs;
  SmallVector<DictionaryAttr> inputAttrs;
  for (auto [index, leaf] : llvm::enumerate(chain.leaves)) {
    for (unsigned port = 0; port < leaf.getNumArguments(); ++port) {
      if (chain.fed[index].count(port))
        continue;
      inputs.push_back(leaf.getArgumentTypes()[port]);
      inputAttrs.push_back(leaf.getArgAttrDict(port));
    }
  }
  LeafOp first = chain.leaves.front(), last = chain.leaves.back();
  auto fused = LeafOp::create(b, first.getLoc(), name,
                              b.getFunctionType(inputs, last.getResultTypes()));
  for (StringRef attr :
       {HPVMDialect::getTargetsAttrName(), HPVMDialect::getDispatchAttrName()})
    if (Attribute value = first->getAttr(attr))
      fused->setAttr(attr, value);
  SmallVector<Operation *> leaves(chain.leaves.begin(), chain.leaves.end());
  if (ErrorBudgetAttr budget = strictestNodeError(leaves))
    fused->setAttr(HPVMDialect::getErrorAttrName(), budget);
  for (auto [index, attrs] : llvm::enumerate(inputAttrs))
    if (attrs)
      fused.setArgAttrs(index, attrs);

  Block &entry = fused.getBodyBlock();
  OpBuilder fb = OpBuilder::atBlockEnd(&entry);
  unsigned next = 0;
  SmallVector<SmallVector<Value>> outputs; // of each leaf, in the fused one
  for (auto [index, leaf] : llvm::enumerate(chain.leaves)) {
    IRMapping mapping;
    for (unsigned port = 0; port < leaf.getNumArguments(); ++port) {
      Value arg = leaf.getBodyBlock().getArgument(port);
      if (auto it = chain.fed[index].find(port); it != chain.fed[index].end())
        mapping.map(arg, outputs[it->second.first][it->second.second]);
      else
        mapping.map(arg, entry.getArgument(next++));
    }
    // The leaf's ops: its tensor op with its constants (weights, sizes) and
    // reshapes.
    for (Operation &op : leaf.getBodyBlock().without_terminator())
      fb.clone(op, mapping);
    outputs.emplace_back();
    for (Value value : leaf.getBodyBlock().getTerminator()->getOperands())
      outputs.back().push_back(mapping.lookupOrDefault(value));
  }
  ReturnOp::create(fb, last.getLoc(), outputs.back());
  return fused;
}

/// Replaces the chain's children by one child of the fused leaf.
static void fuse(InternalOp internal, Chain &chain, SymbolTable &symbols) {
  // The leaves' names as the trace shows them (a C++ node's demangled).
  std::string name;
  for (LeafOp leaf : chain.leaves)
    name += (name.empty() ? "" : "_") + getNodeDisplayName(leaf.getSymName());
  OpBuilder b(chain.leaves.back());
  b.setInsertionPointAfter(chain.leaves.back());
  LeafOp fused = buildFusedLeaf(b, chain, name);
  symbols.insert(fused); // renames on a clash

  // Input port of each chain node -> input port of the fused node.
  SmallVector<DenseMap<unsigned, unsigned>> portMaps(chain.nodes.size());
  unsigned next = 0;
  for (auto [index, leaf] : llvm::enumerate(chain.leaves))
    for (unsigned port = 0; port < leaf.getNumArguments(); ++port)
      if (!chain.fed[index].count(port))
        portMaps[index][port] = next++;
  DenseMap<Value, unsigned> position;
  for (auto [index, node] : llvm::enumerate(chain.nodes))
    position[node.getHandle()] = index;

  // The fused child goes after the last chain child, where every chain
  // child's extents are defined; the first child's extents equal the others'.
  Block &body = internal.getBodyBlock();
  CreateNodeOp lastNode = chain.nodes.front();
  for (CreateNodeOp node : chain.nodes)
    if (lastNode->isBeforeInBlock(node))
      lastNode = node;
  OpBuilder gb(lastNode);
  gb.setInsertionPointAfter(lastNode);
  CreateNodeOp first = chain.nodes.front();
  auto fusedNode =
      CreateNodeOp::create(gb, first.getLoc(), first.getHandle().getType(),
                           fused.getSymName(), first.getDims());

  for (EdgeOp edge : chain.edges)
    edge.erase();
  for (Operation &op : body) {
    if (auto edge = dyn_cast<EdgeOp>(op)) {
      if (auto it = position.find(edge.getDest()); it != position.end())
        edge.setDestPort(portMaps[it->second].lookup(edge.getDestPort()));
    } else if (auto bind = dyn_cast<BindInOp>(op)) {
      if (auto it = position.find(bind.getDest()); it != position.end())
        bind.setDestPort(portMaps[it->second].lookup(bind.getDestPort()));
    }
    // Only the last node's output leaves the chain: its port stays 0.
  }
  for (CreateNodeOp node : chain.nodes) {
    node.getHandle().replaceAllUsesWith(fusedNode.getHandle());
    node.erase();
  }
  // Edges and binds that came before the fused child's definition move after
  // it (their order has no meaning).
  SmallVector<Operation *> early;
  for (Operation *user : fusedNode.getHandle().getUsers())
    if (user->isBeforeInBlock(fusedNode))
      early.push_back(user);
  llvm::sort(early,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  Operation *after = fusedNode;
  for (Operation *op : early) {
    op->moveAfter(after);
    after = op;
  }
}


//===----------------------------------------------------------------------===//
// Groups of elementwise leaves
//===----------------------------------------------------------------------===//

/// Whether `leaf` computes one tensor elementwise from its inputs: one block
/// of constants and elementwise tensor ops (maps, adds, activations) without
/// knobs, or broadcasts (all-parallel linalg.generic ops on tensors), returning
/// one ranked tensor of static shape.
static bool isElementwiseLeaf(LeafOp leaf) {
  if (leaf.getBody().empty() || !llvm::hasSingleElement(leaf.getBody()))
    return false;
  Block &block = leaf.getBodyBlock();
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(terminator->getOperand(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  for (Operation &op : block.without_terminator()) {
    if ((op.hasTrait<::mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0) ||
        isa<tensor::EmptyOp>(op))
      continue;
    // A broadcast the importer made for a map (a linalg.generic over the
    // result, every iterator parallel) is one too.
    if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      if (!generic.hasPureTensorSemantics() ||
          generic.getNumLoops() != generic.getNumParallelLoops())
        return false;
      continue;
    }
    if (!isa<TensorMapOp, TensorAddOp, TensorReluOp, TensorTanhOp, TensorSigmoidOp,
             TensorClippedReluOp>(op) ||
        op.hasAttr(HPVMDialect::getKnobAttrName()))
      return false;
  }
  return true;
}

namespace {
/// Groups of elementwise children of one internal node, each of which may
/// become one leaf: a group grows from a sink (an elementwise child) by every
/// elementwise producer whose results go only to the group, so that no
/// intermediate value is needed outside it and nothing is computed twice.
class ElementwiseGroups {
public:
  explicit ElementwiseGroups(const DataflowGraph &graph) : graph(graph) {}

  /// The groups of at least two children, each in topological order (its
  /// sink last), as chains to fuse.
  SmallVector<Chain> find();

private:
  bool eligible(unsigned child) const;

  const DataflowGraph &graph;
  /// Each child's group, by its sink (-1: none).
  SmallVector<int> groupOf;
};
} // namespace

/// Whether `node` runs on the CPU only (the device backends take their
/// kernels from chains, not from fused groups).
static bool onTheCPUOnly(NodeOpInterface node) {
  return llvm::all_of(node.getTargets(), [](Target target) { return target == Target::cpu; });
}

bool ElementwiseGroups::eligible(unsigned child) const {
  CreateNodeOp node = graph.getChild(child);
  LeafOp leaf = getLeaf(graph.getDefinition(child));
  if (!leaf || node.getRank() != 0 || !isElementwiseLeaf(leaf))
    return false;
  // The CPU's: the device backends take their kernels from chains.
  return onTheCPUOnly(graph.getDefinition(child));
}

SmallVector<Chain> ElementwiseGroups::find() {
  SmallVector<Chain> chains;
  FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
  if (failed(order))
    return chains;
  groupOf.assign(graph.getNumChildren(), -1);
  for (unsigned child : llvm::reverse(*order)) {
    if (!eligible(child))
      continue;
    groupOf[child] = child; // a sink, unless it joins its consumers' group
    bool boundOut = llvm::any_of(graph.getBindOuts(), [&](BindOutOp bind) {
      return bind.getSource() == graph.getChild(child).getHandle();
    });
    ArrayRef<EdgeOp> outgoing = graph.getOutgoingEdges(child);
    if (boundOut || outgoing.empty())
      continue;
    EdgeOp first = outgoing.front();
    int group = groupOf[*graph.getChildIndex(first.getDest())];
    bool joins = group >= 0 && llvm::all_of(outgoing, [&](EdgeOp edge) {
      return !edge.getStreaming() &&
             groupOf[*graph.getChildIndex(edge.getDest())] == group &&
             graph.getDefinition(child).getTargets() ==
                 graph.getDefinition(*graph.getChildIndex(edge.getDest())).getTargets();
    });
    // No cycle can form between groups: every member but the sink sends its
    // results only into the group, so a path out of it starts at the sink,
    // and none comes back to the sink's ancestors.
    if (joins)
      groupOf[child] = group;
  }
  for (unsigned sink : *order) {
    if (groupOf[sink] != static_cast<int>(sink))
      continue;
    SmallVector<unsigned> members;
    for (unsigned child : *order)
      if (groupOf[child] == static_cast<int>(sink))
        members.push_back(child);
    if (members.size() < 2)
      continue;
    Chain chain;
    chain.fed.resize(members.size());
    DenseMap<unsigned, unsigned> position;
    for (auto [index, member] : llvm::enumerate(members)) {
      position[member] = index;
      chain.nodes.push_back(graph.getChild(member));
      chain.leaves.push_back(getLeaf(graph.getDefinition(member)));
    }
    for (unsigned member : members)
      for (EdgeOp edge : graph.getOutgoingEdges(member))
        if (auto to = position.find(*graph.getChildIndex(edge.getDest()));
            to != position.end())
          chain.join(position[member], to->second, edge);
    chains.push_back(std::move(chain));
  }
  return chains;
}

//===----------------------------------------------------------------------===//
// Reshapes folded into their consumer
//===----------------------------------------------------------------------===//

/// Whether `leaf` only reshapes its one tensor argument into its one result
/// (collapse_shape / expand_shape, and reshape by a constant shape): inside a
/// leaf a view of its argument, as a leaf of its own a copy into a new buffer.
static bool isReshapeLeaf(LeafOp leaf) {
  if (leaf.getBody().empty() || !llvm::hasSingleElement(leaf.getBody()) ||
      leaf.getNumArguments() != 1)
    return false;
  Block &block = leaf.getBodyBlock();
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != 1 ||
      !isa<RankedTensorType>(leaf.getArgumentTypes()[0]))
    return false;
  bool reshapes = false;
  for (Operation &op : block.without_terminator()) {
    if (op.hasTrait<::mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0)
      continue;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(op))
      return false;
    reshapes = true;
  }
  return reshapes;
}

namespace {
/// Groups of a consumer and the reshape leaves that feed only it (one
/// instance each, on the CPU, with the consumer's targets; no streaming edge,
/// not bound out): each group becomes one leaf, the reshapes views there.
class ReshapeFolds {
public:
  explicit ReshapeFolds(const DataflowGraph &graph) : graph(graph) {}

  /// The groups (the reshapes first, the consumer last) as chains to fuse.
  SmallVector<Chain> find();

private:
  /// The child that is the only destination of every output edge of
  /// reshape child `child`, or none.
  std::optional<unsigned> onlyConsumer(unsigned child) const;

  const DataflowGraph &graph;
};
} // namespace

std::optional<unsigned> ReshapeFolds::onlyConsumer(unsigned child) const {
  LeafOp leaf = getLeaf(graph.getDefinition(child));
  if (!leaf || graph.getChild(child).getRank() != 0 || !isReshapeLeaf(leaf) ||
      !onTheCPUOnly(graph.getDefinition(child)))
    return std::nullopt;
  if (llvm::any_of(graph.getBindOuts(), [&](BindOutOp bind) {
        return bind.getSource() == graph.getChild(child).getHandle();
      }))
    return std::nullopt;
  ArrayRef<EdgeOp> outgoing = graph.getOutgoingEdges(child);
  if (outgoing.size() != 1)
    return std::nullopt;
  EdgeOp edge = outgoing.front();
  if (edge.getStreaming())
    return std::nullopt;
  unsigned consumer = *graph.getChildIndex(edge.getDest());
  LeafOp into = getLeaf(graph.getDefinition(consumer));
  if (!into || into.getBody().empty() || !llvm::hasSingleElement(into.getBody()) ||
      graph.getChild(consumer).getRank() != 0 ||
      graph.getDefinition(consumer).getTargets() != graph.getDefinition(child).getTargets())
    return std::nullopt;
  return consumer;
}

SmallVector<Chain> ReshapeFolds::find() {
  SmallVector<Chain> chains;
  FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
  if (failed(order))
    return chains;
  // The reshapes of each consumer, in topological order. A reshape feeding a
  // reshape joins the second's group only in a later round (when the second
  // has become part of its consumer), so groups never overlap.
  DenseMap<unsigned, SmallVector<unsigned>> feeding;
  SmallVector<unsigned> consumers;
  for (unsigned child : *order)
    if (std::optional<unsigned> consumer = onlyConsumer(child)) {
      if (isReshapeLeaf(getLeaf(graph.getDefinition(*consumer))))
        continue;
      if (!feeding.count(*consumer))
        consumers.push_back(*consumer);
      feeding[*consumer].push_back(child);
    }
  for (unsigned consumer : consumers) {
    SmallVector<unsigned> members(feeding[consumer]);
    members.push_back(consumer);
    Chain chain;
    chain.fed.resize(members.size());
    for (unsigned member : members) {
      chain.nodes.push_back(graph.getChild(member));
      chain.leaves.push_back(getLeaf(graph.getDefinition(member)));
    }
    for (auto [index, member] : llvm::enumerate(ArrayRef(members).drop_back()))
      chain.join(index, members.size() - 1, graph.getOutgoingEdges(member).front());
    chains.push_back(std::move(chain));
  }
  return chains;
}

namespace {
/// An edge inside a chain: from member `from` into member `to` (positions in
/// the chain).
struct Join {
  unsigned from, to;
  EdgeOp edge;
};

enum class DiamondStep { none, grown, refused };

struct HPVMFuseTensorNodesPass
    : public hpvm::impl::HPVMFuseTensorNodesBase<HPVMFuseTensorNodesPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The chains of one internal node; refusals are reported as remarks.
  SmallVector<Chain> findChains(const DataflowGraph &graph);
  /// Remarks for a chain whose last result leaves its parent through a
  /// bind_out towards the next op of a pattern in another internal node.
  void explainAcrossParents(const DataflowGraph &graph, unsigned child,
                            ArrayRef<TensorChainKind> kinds);
  /// Grows the chain of `members` (of `kinds`) by the diamond after its last
  /// member when there is one that may be fused (an activation, then the
  /// product of its input and result: SiLU). A diamond that cannot be fused
  /// is a remark, and ends the chain.
  DiamondStep growByDiamond(const DataflowGraph &graph, SmallVectorImpl<unsigned> &members,
                     SmallVectorImpl<TensorChainKind> &kinds, SmallVectorImpl<Join> &joins,
                     const DenseMap<unsigned, unsigned> &claimedBy);

  NodeHierarchy *hierarchy = nullptr;
  SymbolTableCollection *symbolTables = nullptr;
};
} // namespace

/// The single-tensor-op leaf a node input leads to, following bind_ins down
/// into internal nodes; null when it is not one.
static LeafOp findConsumerLeaf(NodeOpInterface node, unsigned port,
                               SymbolTableCollection &tables,
                               SmallVectorImpl<StringRef> &path) {
  if (LeafOp leaf = getLeaf(node))
    return leaf;
  auto internal = dyn_cast_or_null<InternalOp>(node.getOperation());
  if (!internal)
    return {};
  path.push_back(internal.getSymName());
  Value input = internal.getBodyBlock().getArgument(port);
  for (auto bind : internal.getBodyBlock().getOps<BindInOp>())
    if (bind.getInput() == input) {
      auto create = bind.getDest().getDefiningOp<CreateNodeOp>();
      auto child = tables.lookupNearestSymbolFrom<NodeOpInterface>(
          create, create.getNodeAttr());
      if (child)
        return findConsumerLeaf(child, bind.getDestPort(), tables, path);
    }
  return {};
}

void HPVMFuseTensorNodesPass::explainAcrossParents(
    const DataflowGraph &graph, unsigned child,
    ArrayRef<TensorChainKind> kinds) {
  InternalOp internal = graph.getInternalNode();
  Operation *producerOp =
      getSingleTensorOp(getLeaf(graph.getDefinition(child)));
  for (BindOutOp bind : graph.getBindOuts()) {
    if (bind.getSource() != graph.getChild(child).getHandle())
      continue;
    // Where the parent's output goes in each internal node instantiating it.
    for (const NodeUse &use : hierarchy->getUses(internal.getSymNameAttr())) {
      InternalOp grandparent = use.parent;
      if (!grandparent)
        continue;
      auto create = cast<CreateNodeOp>(use.op);
      for (auto edge : grandparent.getBodyBlock().getOps<EdgeOp>()) {
        if (edge.getSource() != create.getHandle() ||
            edge.getSourcePort() != bind.getOutput())
          continue;
        auto destCreate = edge.getDest().getDefiningOp<CreateNodeOp>();
        auto dest = symbolTables->lookupNearestSymbolFrom<NodeOpInterface>(
            destCreate, destCreate.getNodeAttr());
        SmallVector<StringRef> path;
        LeafOp leaf = dest ? findConsumerLeaf(dest, edge.getDestPort(),
                                              *symbolTables, path)
                           : LeafOp();
        Operation *op = leaf ? getSingleTensorOp(leaf) : nullptr;
        std::optional<TensorChainKind> kind =
            op ? getTensorChainKind(op) : std::nullopt;
        if (!kind || !continuesTensorPattern(kinds, *kind))
          continue;
        std::string other =
            path.empty() ? grandparent.getSymName().str() : path.back().str();
        if (!remarks)
          continue;
        graph.getChild(child).emitRemark()
            << "not fused with @" << leaf.getSymName() << " ("
            << (producerOp ? shortName(producerOp) : StringRef("map")) << " -> "
            << shortName(op)
            << "): the nodes have different parents (@" << internal.getSymName()
            << " and @" << other
            << "); the result reaches it through bind_out and an edge of @"
            << grandparent.getSymName() << ", not a direct edge";
      }
    }
  }
}

SmallVector<Chain>
HPVMFuseTensorNodesPass::findChains(const DataflowGraph &graph) {
  SmallVector<Chain> chains;
  FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
  if (failed(order))
    return chains;                        // the verifier reports cycles
  DenseMap<unsigned, unsigned> claimedBy; // child -> head of its chain
  for (unsigned head : *order) {
    if (claimedBy.count(head))
      continue;
    LeafOp headLeaf = getLeaf(graph.getDefinition(head));
    Operation *headOp = headLeaf ? getSingleTensorOp(headLeaf) : nullptr;
    std::optional<TensorChainKind> headKind =
        headOp ? getTensorChainKind(headOp) : std::nullopt;
    if (!headKind || !startsTensorPattern(*headKind))
      continue;
    SmallVector<unsigned> members{head};
    SmallVector<TensorChainKind> kinds{*headKind};
    SmallVector<Join> joins;
    Operation *currentOp = headOp;
    while (true) {
      DiamondStep diamond = growByDiamond(graph, members, kinds, joins, claimedBy);
      if (diamond == DiamondStep::refused)
        break;
      if (diamond == DiamondStep::grown) {
        currentOp = getLeaf(graph.getDefinition(members.back()))
                        .getBodyBlock()
                        .getTerminator()
                        ->getOperand(0)
                        .getDefiningOp();
        continue;
      }
      unsigned current = members.back();
      ArrayRef<EdgeOp> outgoing = graph.getOutgoingEdges(current);
      if (outgoing.empty()) {
        explainAcrossParents(graph, current, kinds);
        break;
      }
      // The edge of the tensor (output 0); when it fans out, the step check
      // refuses the chain beyond it (the value must survive for the others).
      auto tensorEdge = llvm::find_if(
          outgoing, [](EdgeOp edge) { return edge.getSourcePort() == 0; });
      if (tensorEdge == outgoing.end())
        break;
      EdgeOp edge = *tensorEdge;
      unsigned next = *graph.getChildIndex(edge.getDest());
      LeafOp nextLeaf = getLeaf(graph.getDefinition(next));
      if (!nextLeaf)
        break;
      std::string why;
      Operation *nextOp = getSingleTensorOp(nextLeaf, &why);
      auto refuse = [&](StringRef otherName, Operation *other,
                        const Twine &reason) {
        if (!remarks)
          return;
        auto remark = graph.getChild(current).emitRemark();
        remark << "not fused with @" << otherName;
        if (other)
          remark << " (" << shortName(currentOp) << " -> " << shortName(other)
                 << ")";
        remark << ": " << reason;
      };
      if (!nextOp) {
        // A leaf that holds a pattern op among others: say why it is not
        // taken; a leaf without one is simply not part of any pattern.
        bool relevant = false;
        nextLeaf.walk([&](Operation *op) {
          if (auto kind = getTensorChainKind(op))
            relevant |= continuesTensorPattern(kinds, *kind);
        });
        if (relevant)
          refuse(nextLeaf.getSymName(), nullptr, why);
        break;
      }
      if (!continuesTensorPattern(kinds, *getTensorChainKind(nextOp)))
        break;
      if (auto it = claimedBy.find(next); it != claimedBy.end()) {
        refuse(nextLeaf.getSymName(), nextOp,
               "it is already fused into the chain starting at " +
                   graph.describeChild(it->second));
        break;
      }
      std::string reason = checkTensorFusionStep(graph, current, next, edge);
      if (!reason.empty()) {
        refuse(nextLeaf.getSymName(), nextOp, reason);
        break;
      }
      unsigned from = members.size() - 1;
      members.push_back(next);
      kinds.push_back(*getTensorChainKind(nextOp));
      joins.push_back({from, from + 1, edge});
      for (EdgeOp other : outgoing)
        if (other != edge) // the step check: into the consumer only
          joins.push_back({from, from + 1, other});
      currentOp = nextOp;
    }
    if (members.size() < 2)
      continue;
    Chain chain;
    chain.fed.resize(members.size());
    for (unsigned member : members) {
      claimedBy[member] = head;
      chain.nodes.push_back(graph.getChild(member));
      chain.leaves.push_back(getLeaf(graph.getDefinition(member)));
    }
    for (const Join &join : joins)
      chain.join(join.from, join.to, join.edge);
    chains.push_back(std::move(chain));
  }
  return chains;
}

DiamondStep HPVMFuseTensorNodesPass::growByDiamond(
    const DataflowGraph &graph, SmallVectorImpl<unsigned> &members,
    SmallVectorImpl<TensorChainKind> &kinds, SmallVectorImpl<Join> &joins,
    const DenseMap<unsigned, unsigned> &claimedBy) {
  // After an op an activation may follow in a pattern, or a lone
  // convolution or product (the kernels take the activation without a bias).
  using K = TensorChainKind;
  bool lone = kinds.size() == 1 && (kinds[0] == K::conv2d || kinds[0] == K::mul);
  if (!lone && !continuesTensorPattern(kinds, K::activation))
    return DiamondStep::none;
  unsigned producer = members.back();
  std::string why;
  std::optional<TensorDiamond> diamond = findTensorDiamond(graph, producer, why);
  if (!diamond)
    return DiamondStep::none;
  if (why.empty() &&
      (claimedBy.count(diamond->unary) || claimedBy.count(diamond->binary)))
    why = "they are already fused into another chain";
  if (!why.empty()) {
    if (remarks)
      graph.getChild(producer).emitRemark()
          << "not fused with " << graph.describeChild(diamond->unary) << " and "
          << graph.describeChild(diamond->binary)
          << " (an elementwise op, then one of its input and result): " << why;
    return DiamondStep::refused;
  }
  unsigned from = members.size() - 1;
  members.push_back(diamond->unary);
  members.push_back(diamond->binary);
  kinds.push_back(K::activation);
  joins.push_back({from, from + 1, diamond->toUnary});
  joins.push_back({from, from + 2, diamond->toBinary});
  joins.push_back({from + 1, from + 2, diamond->unaryToBinary});
  return DiamondStep::grown;
}

void HPVMFuseTensorNodesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  NodeHierarchy nodes(module);
  SymbolTableCollection tables;
  hierarchy = &nodes;
  symbolTables = &tables;
  // Chains never cross internal nodes, so each internal node is analysed
  // once, on the module as it was (fusion only adds leaves).
  SmallVector<std::pair<InternalOp, SmallVector<Chain>>> work;
  for (auto internal : module.getOps<InternalOp>()) {
    DataflowGraph graph(internal, &tables);
    work.push_back({internal, findChains(graph)});
  }
  for (auto &[internal, chains] : work)
    for (Chain &chain : chains)
      fuse(internal, chain, symbols);
  // Then what is left of elementwise leaves, in groups: one leaf each, which
  // the linalg lowering makes one loop where it can.
  if (elementwiseGroups) {
    work.clear();
    SymbolTableCollection after;
    for (auto internal : module.getOps<InternalOp>()) {
      DataflowGraph graph(internal, &after);
      work.push_back({internal, ElementwiseGroups(graph).find()});
    }
    for (auto &[internal, chains] : work)
      for (Chain &chain : chains)
        fuse(internal, chain, symbols);
  }
  // Last, reshapes into their consumers, round by round (a reshape of a
  // reshape joins in the next one).
  for (bool folded = foldReshapes; folded;) {
    folded = false;
    work.clear();
    SymbolTableCollection now;
    for (auto internal : module.getOps<InternalOp>()) {
      DataflowGraph graph(internal, &now);
      work.push_back({internal, ReshapeFolds(graph).find()});
    }
    for (auto &[internal, chains] : work)
      for (Chain &chain : chains) {
        fuse(internal, chain, symbols);
        folded = true;
      }
  }
}
