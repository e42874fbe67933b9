//===- EvaluateGraph.cpp - Internal nodes of HPVM-C, evaluated ------------===//
// A graph-describing function is run at compile time: integer arithmetic on
// constants is folded, branches on constants are followed (so loops binding
// ports are fine), and each __hpvm__createNodeND / bindIn / bindOut / edge
// reached becomes an op of the hpvm.internal. Extents may depend on the
// node's inputs: that arithmetic is rebuilt in the internal node.
#include "HPVMCRaiser.h"

#include <set>

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {
namespace {

//===----------------------------------------------------------------------===//
// Internal nodes: evaluated at compile time
//===----------------------------------------------------------------------===//

/// Folds an integer op of the imported C on constant operands.
std::optional<APInt> fold(Operation *op, ArrayRef<APInt> operands, unsigned width) {
  auto binary = [&](auto fn) -> std::optional<APInt> {
    if (operands.size() != 2)
      return std::nullopt;
    return fn(operands[0], operands[1]);
  };
  if (isa<LLVM::AddOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a + b; });
  if (isa<LLVM::SubOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a - b; });
  if (isa<LLVM::MulOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a * b; });
  if (isa<LLVM::AndOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a & b; });
  if (isa<LLVM::OrOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a | b; });
  if (isa<LLVM::XOrOp>(op))
    return binary([](const APInt &a, const APInt &b) { return a ^ b; });
  if (isa<LLVM::ShlOp, LLVM::LShrOp, LLVM::AShrOp>(op)) {
    if (operands.size() != 2 || operands[1].uge(width))
      return std::nullopt;
    unsigned amount = operands[1].getZExtValue();
    if (isa<LLVM::ShlOp>(op))
      return operands[0].shl(amount);
    return isa<LLVM::LShrOp>(op) ? operands[0].lshr(amount) : operands[0].ashr(amount);
  }
  if (isa<LLVM::UDivOp, LLVM::SDivOp, LLVM::URemOp, LLVM::SRemOp>(op)) {
    if (operands.size() != 2 || operands[1].isZero())
      return std::nullopt;
    if (isa<LLVM::UDivOp>(op))
      return operands[0].udiv(operands[1]);
    if (isa<LLVM::SDivOp>(op))
      return operands[0].sdiv(operands[1]);
    if (isa<LLVM::URemOp>(op))
      return operands[0].urem(operands[1]);
    return operands[0].srem(operands[1]);
  }
  if (isa<LLVM::ZExtOp>(op))
    return operands[0].zext(width);
  if (isa<LLVM::SExtOp>(op))
    return operands[0].sext(width);
  if (isa<LLVM::TruncOp>(op))
    return operands[0].trunc(width);
  if (auto cmp = dyn_cast<LLVM::ICmpOp>(op)) {
    const APInt &a = operands[0], &b = operands[1];
    bool result = false;
    switch (cmp.getPredicate()) {
    case LLVM::ICmpPredicate::eq: result = a == b; break;
    case LLVM::ICmpPredicate::ne: result = a != b; break;
    case LLVM::ICmpPredicate::slt: result = a.slt(b); break;
    case LLVM::ICmpPredicate::sle: result = a.sle(b); break;
    case LLVM::ICmpPredicate::sgt: result = a.sgt(b); break;
    case LLVM::ICmpPredicate::sge: result = a.sge(b); break;
    case LLVM::ICmpPredicate::ult: result = a.ult(b); break;
    case LLVM::ICmpPredicate::ule: result = a.ule(b); break;
    case LLVM::ICmpPredicate::ugt: result = a.ugt(b); break;
    case LLVM::ICmpPredicate::uge: result = a.uge(b); break;
    }
    return APInt(1, result);
  }
  return std::nullopt;
}

bool isFoldable(Operation *op) {
  return isa<LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::AndOp, LLVM::OrOp,
             LLVM::XOrOp, LLVM::ShlOp, LLVM::LShrOp, LLVM::AShrOp, LLVM::UDivOp,
             LLVM::SDivOp, LLVM::URemOp, LLVM::SRemOp, LLVM::ZExtOp, LLVM::SExtOp,
             LLVM::TruncOp, LLVM::ICmpOp>(op);
}

/// The state of evaluating one graph-describing function.
struct Evaluation {
  DenseMap<Value, APInt> constants;
  DenseMap<Value, Value> aliases; // block arguments and selects -> values
  DenseMap<Value, Value> handles; // llvm handle -> hpvm.create_node result
  DenseMap<Value, Value> arguments; // C parameters -> internal node arguments

  Value resolve(Value value) const {
    for (auto it = aliases.find(value); it != aliases.end(); it = aliases.find(value))
      value = it->second;
    return value;
  }
  std::optional<APInt> constant(Value value) const {
    auto it = constants.find(resolve(value));
    if (it == constants.end())
      return std::nullopt;
    return it->second;
  }
};

/// Rebuilds the integer value `value` of the C function in the internal node
/// (extents computed from the node's inputs).
FailureOr<Value> materialize(OpBuilder &b, Evaluation &eval, Value value, Location at) {
  value = eval.resolve(value);
  if (std::optional<APInt> constant = eval.constant(value))
    return LLVM::ConstantOp::create(b, at, value.getType(),
                                    b.getIntegerAttr(value.getType(), *constant))
        .getResult();
  if (Value argument = eval.arguments.lookup(value))
    return argument;
  Operation *def = value.getDefiningOp();
  // Also selects and min / max: clang makes `n < 16 ? n : 16` an llvm.intr.smin.
  if (def && def->getNumResults() == 1 &&
      (isFoldable(def) ||
       isa<LLVM::SelectOp, LLVM::SMinOp, LLVM::SMaxOp, LLVM::UMinOp, LLVM::UMaxOp,
           LLVM::AbsOp, LLVM::FreezeOp>(def)) &&
      isMemoryEffectFree(def)) {
    IRMapping mapping;
    for (Value operand : def->getOperands()) {
      FailureOr<Value> rebuilt = materialize(b, eval, operand, at);
      if (failed(rebuilt))
        return failure();
      mapping.map(operand, *rebuilt);
    }
    return b.clone(*def, mapping)->getResult(0);
  }
  InFlightDiagnostic diag = emitError(at)
                            << "a node extent must be computed from the node's inputs "
                               "and constants with integer arithmetic (and ?:, min, "
                               "max), without control flow";
  if (def)
    diag << "; found '" << def->getName() << "'";
  else
    diag << "; found a value merged from several branches";
  return diag;
}

} // namespace

/// One internal node's graph-describing function, run at compile time: the
/// hpvm.internal it becomes, the evaluation of its body, and what is recorded
/// to raise its children once the whole graph is known.
class InternalNodeRaiser {
public:
  InternalNodeRaiser(Raiser &raiser, Node &node)
      : raiser(raiser), node(node), function(node.function), name(function.getName()),
        context(raiser.context), ib(raiser.context) {}

  LogicalResult run() {
    createInternal();
    if (failed(evaluate()) || failed(raiseChildren()))
      return failure();
    typeInputsFromChildren();
    if (failed(collectOutputs()))
      return failure();
    for (auto [index, type] : llvm::enumerate(node.inputs))
      if (isa<TensorType>(type))
        internal.removeArgAttr(index, HPVMDialect::getAccessAttrName());
    internal.setFunctionTypeAttr(
        TypeAttr::get(FunctionType::get(context, node.inputs, node.outputs)));
    raiser.setOutputLayout(node);
    return success();
  }

private:
  struct PendingBindIn {
    unsigned input;
    Node *child;
    unsigned port;
  };
  struct PendingBindOut {
    LLVM::CallOp call;
    Node *child;
    int64_t childPort, port;
  };
  struct PendingEdge {
    Node *source;
    unsigned sourcePort;
    Node *dest;
    unsigned destPort;
  };

  /// The hpvm.internal, its arguments standing for the C parameters.
  void createInternal() {
    // Tensors flowing in from the parent (or the host) type `void *` inputs.
    for (auto [index, type] : node.incoming)
      if (index < node.inputs.size() && isa<LLVM::LLVMPointerType>(node.inputs[index]))
        node.inputs[index] = type;
    OpBuilder b(function);
    internal = InternalOp::create(b, definitionLoc(function), name,
                                  FunctionType::get(context, node.inputs, {}));
    internal.setPrivate();
    node.definition = internal;
    body = &internal.getBody().front();
    cEntry = &function.getBody().front();
    for (BlockArgument arg : cEntry->getArguments()) {
      if (node.sret && arg.getArgNumber() == 0)
        continue;
      BlockArgument input = body->getArgument(arg.getArgNumber() - (node.sret ? 1 : 0));
      input.setLoc(arg.getLoc());
      eval.arguments[arg] = input;
    }
    ib = OpBuilder::atBlockEnd(body);
  }

  /// Runs the C body: folds integer arithmetic, follows branches on
  /// constants, and turns each graph call reached into an op.
  LogicalResult evaluate() {
    Block *block = cEntry;
    Block::iterator it = block->begin();
    for (uint64_t steps = 0;; ++steps) {
      if (steps > 1000000)
        return function.emitError() << "evaluating the graph of '" << getNodeDisplayName(name)
                                    << "' takes more than 1000000 steps; is a loop "
                                       "bound not constant?";
      Operation &op = *it++;
      if (foldValue(op))
        continue;
      if (isa<LLVM::BrOp, LLVM::CondBrOp, LLVM::SwitchOp>(op)) {
        FailureOr<Block *> next = follow(op);
        if (failed(next))
          return failure();
        block = *next;
        it = block->begin();
        continue;
      }
      if (isa<LLVM::ReturnOp>(op))
        return success();
      if (isa<LLVM::UnreachableOp>(op))
        return op.emitError() << "'" << getNodeDisplayName(name)
                              << "' reaches unreachable code while its "
                                 "graph is evaluated";
      auto call = dyn_cast<LLVM::CallOp>(op);
      if (failed(call ? graphCall(call) : otherOp(op)))
        return failure();
    }
  }

  /// Records what a constant, a foldable integer op or a select makes known;
  /// false for ops that are not values of the evaluation.
  bool foldValue(Operation &op) {
    if (auto constant = dyn_cast<LLVM::ConstantOp>(op)) {
      if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
        eval.constants[constant.getResult()] = integer.getValue();
      return true;
    }
    if (isFoldable(&op)) {
      SmallVector<APInt> operands;
      for (Value operand : op.getOperands()) {
        std::optional<APInt> value = eval.constant(operand);
        if (!value)
          break;
        operands.push_back(*value);
      }
      Value result = op.getResult(0);
      eval.constants.erase(result);
      if (operands.size() == op.getNumOperands() && result.getType().isInteger())
        if (std::optional<APInt> folded =
                fold(&op, operands, result.getType().getIntOrFloatBitWidth()))
          eval.constants[result] = *folded;
      return true;
    }
    if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
      if (std::optional<APInt> cond = eval.constant(select.getCondition())) {
        eval.constants.erase(select.getResult());
        eval.aliases.erase(select.getResult());
        bind(select.getResult(),
             cond->isOne() ? select.getTrueValue() : select.getFalseValue());
      }
      return true;
    }
    return false;
  }

  /// `target` now stands for what `value` is: a constant, a node handle or
  /// (otherwise) the value itself.
  void bind(Value target, Value value) {
    Value resolved = eval.resolve(value);
    if (std::optional<APInt> constant = eval.constant(resolved))
      eval.constants[target] = *constant;
    else if (Value handle = eval.handles.lookup(resolved))
      eval.handles[target] = handle;
    else
      eval.aliases[target] = resolved;
  }

  void bindSuccessor(Block *dest, OperandRange operands) {
    for (auto [arg, value] : llvm::zip(dest->getArguments(), operands)) {
      Value resolved = eval.resolve(value);
      eval.aliases.erase(arg);
      eval.constants.erase(arg);
      bind(arg, resolved);
    }
  }

  /// The block a branch on constants goes to, its arguments bound.
  FailureOr<Block *> follow(Operation &op) {
    if (auto br = dyn_cast<LLVM::BrOp>(op)) {
      bindSuccessor(br.getDest(), br.getDestOperands());
      return br.getDest();
    }
    if (auto condBr = dyn_cast<LLVM::CondBrOp>(op)) {
      std::optional<APInt> cond = eval.constant(condBr.getCondition());
      if (!cond)
        return op.emitError() << "the graph described by '" << getNodeDisplayName(name)
                              << "' depends on a value that is not a compile-time "
                                 "constant (branch condition); internal nodes are "
                                 "static graphs";
      bool taken = cond->isOne();
      Block *dest = taken ? condBr.getTrueDest() : condBr.getFalseDest();
      bindSuccessor(dest, taken ? condBr.getTrueDestOperands()
                                : condBr.getFalseDestOperands());
      return dest;
    }
    auto sw = cast<LLVM::SwitchOp>(op);
    std::optional<APInt> value = eval.constant(sw.getValue());
    if (!value)
      return op.emitError() << "the graph described by '" << getNodeDisplayName(name)
                            << "' depends on a value that is not a compile-time "
                               "constant (switch); internal nodes are static graphs";
    Block *dest = sw.getDefaultDestination();
    OperandRange destOperands = sw.getDefaultOperands();
    if (auto caseValues = sw.getCaseValues())
      for (auto [index, caseValue] : llvm::enumerate(caseValues->getValues<APInt>()))
        if (caseValue == *value) {
          dest = sw.getCaseDestinations()[index];
          destOperands = sw.getCaseOperands(index);
        }
    bindSuccessor(dest, destOperands);
    return dest;
  }

  /// An op that is neither a value, nor control flow, nor a call: harmless
  /// values nobody needs (addresses, undef, float constants, lifetime
  /// markers, allocas) are skipped; memory accesses and other work are not.
  LogicalResult otherOp(Operation &op) {
    if (isMemoryEffectFree(&op) ||
        isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp, LLVM::AssumeOp, LLVM::AllocaOp>(op))
      return success();
    if (auto store = dyn_cast<LLVM::StoreOp>(op);
        store && eval.handles.count(eval.resolve(store.getValue())))
      return emitError(sourceLoc(&op))
             << "internal node '" << getNodeDisplayName(name) << "' stores a node handle of "
             << "__hpvm__createNodeND in memory; node handles may only be "
                "passed (directly, as values) to __hpvm__bindIn, __hpvm__bindOut "
                "and __hpvm__edge";
    return emitError(sourceLoc(&op))
           << "internal node '" << getNodeDisplayName(name)
           << "' may only describe its graph (HPVM graph calls and "
              "integer arithmetic for extents); found computation ('"
           << op.getName() << "')";
  }

  /// A call reached by the evaluation: an HPVM-C graph call becomes an op.
  LogicalResult graphCall(LLVM::CallOp call) {
    ApiCall api = classify(call);
    switch (api.api) {
    case Api::Hint:
      return raiser.applyHint(node, call, internal);
    case Api::Attributes:
      return raiser.applyAttributes(node, call, internal, *cEntry, node.sret ? 1 : 0);
    case Api::CreateNode:
      return createNode(call);
    case Api::BindIn:
      return bindIn(call);
    case Api::BindOut:
      return bindOut(call);
    case Api::Edge:
      return edge(call);
    case Api::NodeId:
      return checkNodeIdUnused(call);
    case Api::Return:
      return call.emitError() << "__hpvm__return in internal node '" << getNodeDisplayName(name)
                              << "'; the outputs of an internal node are its "
                                 "__hpvm__bindOut bindings";
    case Api::None:
      return call.emitError() << "internal node '" << getNodeDisplayName(name)
                              << "' may only describe its graph; found a call of '"
                              << call.getCallee().value_or("a function pointer")
                              << "'";
    default:
      return call.emitError()
             << spelling(call) << " is a "
             << (isHostCall(api.api) ? "host call" : "leaf-node call")
             << " and cannot appear in internal node '" << getNodeDisplayName(name) << "'";
    }
  }

  InFlightDiagnostic notConstant(LLVM::CallOp call, StringRef what) {
    return call.emitError() << spelling(call) << " expects " << what
                            << " to be a compile-time constant in '" << getNodeDisplayName(name)
                            << "'";
  }

  FailureOr<Value> handleOf(LLVM::CallOp call, unsigned operand) {
    Value handle = eval.handles.lookup(eval.resolve(call.getArgOperands()[operand]));
    if (!handle)
      return call.emitError() << spelling(call) << " expects a node handle returned by "
                                 "__hpvm__createNodeND in '" << getNodeDisplayName(name) << "'";
    return handle;
  }

  std::optional<int64_t> constantArg(LLVM::CallOp call, unsigned operand) {
    if (call.getArgOperands().size() <= operand)
      return std::nullopt;
    std::optional<APInt> value = eval.constant(call.getArgOperands()[operand]);
    if (!value)
      return std::nullopt;
    return value->getSExtValue();
  }

  Node *childOf(Value handle) {
    return &raiser.nodes[handle.getDefiningOp<CreateNodeOp>().getNodeAttr().getAttr()];
  }

  LogicalResult createNode(LLVM::CallOp call) {
    Location loc = call.getLoc();
    OperandRange operands = call.getArgOperands();
    std::optional<int64_t> dims = constantArg(call, 0);
    if (!dims)
      return notConstant(call, "the number of dimensions");
    if (*dims < 0 || *dims > 3)
      return call.emitError() << "__hpvm__createNodeND with " << *dims
                              << " dimensions; HPVM nodes have 0 to 3";
    if (operands.size() != static_cast<size_t>(*dims) + 2)
      return call.emitError() << "__hpvm__createNodeND(" << *dims
                              << ", ...) expects " << *dims << " extents after the "
                              << "node function, found " << operands.size() - 2;
    FailureOr<Node *> child = raiser.nodeOfFunctionOperand(call, 1);
    if (failed(child))
      return failure();
    if (!llvm::is_contained(children, *child)) {
      children.push_back(*child);
      createdAt.push_back(loc);
    }
    SmallVector<Value> extents;
    for (Value extent : operands.drop_front(2)) {
      FailureOr<Value> value = materialize(ib, eval, extent, loc);
      if (failed(value))
        return failure();
      extents.push_back(arith::IndexCastOp::create(ib, loc, ib.getIndexType(), *value));
    }
    auto create = CreateNodeOp::create(
        ib, loc, mlir::hpvm::NodeType::get(context),
        FlatSymbolRefAttr::get((*child)->function.getSymNameAttr()), extents);
    eval.handles[call.getResult()] = create.getHandle();
    return success();
  }

  LogicalResult bindIn(LLVM::CallOp call) {
    FailureOr<Value> dest = handleOf(call, 0);
    if (failed(dest))
      return failure();
    std::optional<int64_t> ip = constantArg(call, 1), ic = constantArg(call, 2),
                           stream = constantArg(call, 3);
    if (!ip || !ic || !stream)
      return notConstant(call, "the ports and the stream flag");
    if (*ip < 0 || static_cast<size_t>(*ip) >= node.inputs.size())
      return call.emitError() << "__hpvm__bindIn: input port " << *ip << " of '"
                              << getNodeDisplayName(name) << "' is out of range; it has "
                              << node.inputs.size() << " inputs";
    if (*ic < 0)
      return call.emitError() << "__hpvm__bindIn: negative child input port " << *ic;
    bindIns.push_back(
        {static_cast<unsigned>(*ip), childOf(*dest), static_cast<unsigned>(*ic)});
    BindInOp::create(ib, call.getLoc(), body->getArgument(*ip), *dest,
                     static_cast<uint32_t>(*ic), *stream != 0);
    return success();
  }

  LogicalResult bindOut(LLVM::CallOp call) {
    FailureOr<Value> source = handleOf(call, 0);
    if (failed(source))
      return failure();
    std::optional<int64_t> oc = constantArg(call, 1), op = constantArg(call, 2),
                           stream = constantArg(call, 3);
    if (!oc || !op || !stream)
      return notConstant(call, "the ports and the stream flag");
    if (*op < 0 || *op > 1024)
      return call.emitError() << "__hpvm__bindOut: output port " << *op << " of '"
                              << getNodeDisplayName(name) << "' is out of range";
    if (*oc < 0)
      return call.emitError() << "__hpvm__bindOut: negative child output port " << *oc;
    bindOuts.push_back({call, childOf(*source), *oc, *op});
    BindOutOp::create(ib, call.getLoc(), *source, static_cast<uint32_t>(*oc),
                      static_cast<uint32_t>(*op), *stream != 0);
    return success();
  }

  LogicalResult edge(LLVM::CallOp call) {
    FailureOr<Value> source = handleOf(call, 0), dest = handleOf(call, 1);
    if (failed(source) || failed(dest))
      return failure();
    std::optional<int64_t> repl = constantArg(call, 2), sp = constantArg(call, 3),
                           dp = constantArg(call, 4), stream = constantArg(call, 5);
    if (!repl || !sp || !dp || !stream)
      return notConstant(call, "the edge kind, the ports and the stream flag");
    if (*sp < 0 || *dp < 0)
      return call.emitError("__hpvm__edge: negative port");
    edges.push_back({childOf(*source), static_cast<unsigned>(*sp), childOf(*dest),
                     static_cast<unsigned>(*dp)});
    EdgeOp::create(ib, call.getLoc(), *source, static_cast<uint32_t>(*sp), *dest,
                   static_cast<uint32_t>(*dp),
                   *repl ? Replication::all_to_all : Replication::one_to_one, *stream != 0);
    return success();
  }

  /// The children, producers before consumers, each with the tensor types
  /// that flow into it: from this node's inputs through its bindings, from
  /// the outputs of the children raised before it through the edges (a node
  /// in a cycle of edges is raised in creation order). Kahn's algorithm, the
  /// lowest creation index first among the ready.
  LogicalResult raiseChildren() {
    DenseMap<Node *, unsigned> indexOf;
    for (auto [index, child] : llvm::enumerate(children))
      indexOf[child] = index;
    SmallVector<SmallVector<const PendingBindIn *>> bindsInto(children.size());
    SmallVector<SmallVector<const PendingEdge *>> edgesInto(children.size());
    SmallVector<SmallVector<unsigned>> consumers(children.size());
    SmallVector<unsigned> waitingFor(children.size(), 0);
    for (const PendingBindIn &bind : bindIns)
      bindsInto[indexOf[bind.child]].push_back(&bind);
    for (const PendingEdge &edge : edges) {
      unsigned source = indexOf[edge.source], dest = indexOf[edge.dest];
      edgesInto[dest].push_back(&edge);
      if (source != dest) {
        consumers[source].push_back(dest);
        ++waitingFor[dest];
      }
    }
    std::set<unsigned> ready, left;
    for (unsigned index = 0; index < children.size(); ++index) {
      left.insert(index);
      if (!waitingFor[index])
        ready.insert(index);
    }
    while (!left.empty()) {
      unsigned index = ready.empty() ? *left.begin() : *ready.begin();
      ready.erase(index);
      left.erase(index);
      for (unsigned consumer : consumers[index])
        if (--waitingFor[consumer] == 0 && left.count(consumer))
          ready.insert(consumer);
      Node *next = children[index];
      if (next->state != Node::Done) {
        for (const PendingBindIn *bind : bindsInto[index])
          if (auto type = dyn_cast<RankedTensorType>(node.inputs[bind->input]))
            next->incoming.try_emplace(bind->port, type);
        for (const PendingEdge *edge : edgesInto[index])
          if (!left.count(indexOf[edge->source]) && edge->source->state == Node::Done &&
              edge->sourcePort < edge->source->outputs.size())
            if (auto type =
                    dyn_cast<RankedTensorType>(edge->source->outputs[edge->sourcePort]))
              next->incoming.try_emplace(edge->destPort, type);
      }
      if (failed(raiser.raiseNode(next->function.getSymNameAttr(), createdAt[index])))
        return failure();
    }
    return success();
  }

  /// Declared shapes flow up: a `void *` input bound to a tensor input of a
  /// child is that tensor.
  void typeInputsFromChildren() {
    for (const PendingBindIn &bind : bindIns) {
      BlockArgument input = body->getArgument(bind.input);
      if (bind.port < bind.child->inputs.size() &&
          isa<RankedTensorType>(bind.child->inputs[bind.port]) &&
          isa<LLVM::LLVMPointerType>(input.getType())) {
        input.setType(bind.child->inputs[bind.port]);
        node.inputs[bind.input] = bind.child->inputs[bind.port];
        internal.removeArgAttr(bind.input, HPVMDialect::getAccessAttrName());
      }
    }
  }

  /// The outputs, by __hpvm__bindOut port, checked against the C return
  /// struct when there is one.
  LogicalResult collectOutputs() {
    DenseMap<unsigned, Type> outputTypes;
    for (PendingBindOut &bind : bindOuts) {
      if (static_cast<size_t>(bind.childPort) >= bind.child->outputs.size())
        return bind.call.emitError()
               << "__hpvm__bindOut: output port " << bind.childPort << " of '"
               << getNodeDisplayName(bind.child->function.getName()) << "' is out of range; it has "
               << bind.child->outputs.size() << " outputs";
      outputTypes.try_emplace(bind.port, bind.child->outputs[bind.childPort]);
    }
    unsigned numOutputs = 0;
    for (auto &[port, type] : outputTypes)
      numOutputs = std::max(numOutputs, port + 1);
    for (unsigned port = 0; port < numOutputs; ++port) {
      auto found = outputTypes.find(port);
      if (found == outputTypes.end())
        return function.emitError()
               << "output " << port << " of internal node '" << getNodeDisplayName(name)
               << "' is never bound (__hpvm__bindOut), but output " << numOutputs - 1 << " is";
      node.outputs.push_back(found->second);
    }
    FailureOr<SmallVector<Type>> declared =
        raiser.outputTypesFromDeclaration(node, numOutputs);
    if (failed(declared) || *declared == ArrayRef<Type>(node.outputs))
      return success();
    for (auto [index, pair] : llvm::enumerate(llvm::zip(*declared, node.outputs)))
      if (std::get<0>(pair) != std::get<1>(pair) &&
          !(isa<RankedTensorType>(std::get<1>(pair)) &&
            isa<LLVM::LLVMPointerType>(std::get<0>(pair)))) // a tensor handle
        return function.emitError()
               << "the return struct of '" << getNodeDisplayName(name) << "' declares output "
               << index << " as " << std::get<0>(pair) << ", but the child output bound to "
               << "it is a " << std::get<1>(pair);
    return success();
  }

  Raiser &raiser;
  Node &node;
  LLVM::LLVMFuncOp function;
  StringRef name;
  MLIRContext *context;
  InternalOp internal;
  Block *body = nullptr;
  Block *cEntry = nullptr;
  OpBuilder ib;
  Evaluation eval;
  // What the evaluation records to raise the children once the whole graph
  // is known: each child once, in creation order, with where it was first
  // created; the bindings and edges between them.
  SmallVector<Node *> children;
  SmallVector<Location> createdAt;
  SmallVector<PendingBindIn> bindIns;
  SmallVector<PendingBindOut> bindOuts;
  SmallVector<PendingEdge> edges;
};

LogicalResult Raiser::raiseInternal(Node &node) {
  return InternalNodeRaiser(*this, node).run();
}

} // namespace mlir::hpvm::hpvmc
