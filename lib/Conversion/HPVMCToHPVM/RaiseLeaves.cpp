//===- RaiseLeaves.cpp - HPVM-C leaf functions as hpvm.leaf -----------------===//
// A leaf's body moves into an hpvm.leaf: its parameters become the node's
// inputs, the HPVM-C intrinsics inside (instance ids, barriers, allocation,
// __hpvm__return) become hpvm ops, and the calls to other node functions are
// raised on demand (raiseNode).
#include "HPVMCRaiser.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {

/// Brings a __hpvm__return value to its declared type, undoing the variadic
/// promotions (float -> double, small integers -> int).
static FailureOr<Value> fitOutput(OpBuilder &b, LLVM::CallOp call,
                                  unsigned index, Value value, Type declared) {
  Type type = value.getType();
  if (type == declared)
    return value;
  Location loc = call.getLoc();
  if (declared.isF32() && type.isF64()) {
    if (auto extended = value.getDefiningOp<LLVM::FPExtOp>())
      if (extended.getArg().getType().isF32())
        return extended.getArg();
    return LLVM::FPTruncOp::create(b, loc, declared, value).getResult();
  }
  if (declared.isInteger() && type.isInteger(32) &&
      declared.getIntOrFloatBitWidth() < 32)
    return LLVM::TruncOp::create(b, loc, declared, value).getResult();
  // An integer literal (`__hpvm__return(2, 0, 0)`) converts to the field's
  // type, as in a C assignment.
  if (std::optional<int64_t> literal = constantInt(value)) {
    if (isa<IntegerType>(declared))
      return LLVM::ConstantOp::create(b, loc, declared,
                                      b.getIntegerAttr(declared, *literal))
          .getResult();
    if (isa<FloatType>(declared))
      return LLVM::ConstantOp::create(b, loc, declared,
                                      b.getFloatAttr(declared, static_cast<double>(*literal)))
          .getResult();
    if (isa<LLVM::LLVMPointerType>(declared) && *literal == 0) // C++'s NULL
      return LLVM::ZeroOp::create(b, loc, declared).getResult();
  }
  return call.emitError() << "__hpvm__return: output " << index << " is a "
                          << type << " but the node function's return struct "
                          << "declares field " << index << " as " << declared
                          << "; cast the value to the field's C type";
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//


/// C leaves convert floats to small integers (`uint8_t x = f * 255`), which C
/// and LLVM leave undefined when the value does not fit: LLVM makes it
/// poison, and each target's instructions then give their own answer (x86
/// scalar code keeps the low bits of a 32-bit conversion, or, with AVX-512,
/// saturates an unsigned one; vector code packs with saturation). The
/// release's hpvm-cava tone-maps such values, and its last image changed with
/// the lanes (vector code) and would change with the target. Every version of
/// a leaf (scalar, lanes, kernels) therefore converts through a wider integer
/// and keeps its low bits: to 8 and 16 bits through a signed 32-bit
/// conversion, to an unsigned 32-bit integer through a signed 64-bit one.
/// Values that fit are unchanged; the others now wrap, the same everywhere.
static void convertNarrowIntegersThroughWide(LeafOp leaf) {
  SmallVector<Operation *> conversions;
  leaf.walk([&](Operation *op) {
    if (isa<LLVM::FPToUIOp, LLVM::FPToSIOp>(op))
      conversions.push_back(op);
  });
  for (Operation *op : conversions) {
    auto narrow = dyn_cast<IntegerType>(op->getResult(0).getType());
    if (!narrow)
      continue; // vectors of C's vector extensions stay as written
    bool isUnsigned = isa<LLVM::FPToUIOp>(op);
    unsigned through = narrow.getWidth() < 32                     ? 32
                       : isUnsigned && narrow.getWidth() == 32 ? 64
                                                                  : 0;
    if (!through)
      continue;
    OpBuilder b(op);
    Value wide = LLVM::FPToSIOp::create(b, op->getLoc(), b.getIntegerType(through),
                                        op->getOperand(0));
    Value truncated = LLVM::TruncOp::create(b, op->getLoc(), narrow, wide);
    op->getResult(0).replaceAllUsesWith(truncated);
    op->erase();
  }
}

/// The atomic the call of __hpvm__atomic_<kind> stands for, with its result.
static Value raiseAtomic(OpBuilder &b, Location loc, const ApiCall &api, LLVM::CallOp call) {
  OperandRange operands = call.getArgOperands();
  if (api.atomic == "cmpxchg") {
    // As in the release: store the new value when the old one equals the
    // expected one, and return the old value either way.
    auto exchange = LLVM::AtomicCmpXchgOp::create(
        b, loc, operands[0], operands[1], operands[2], LLVM::AtomicOrdering::seq_cst,
        LLVM::AtomicOrdering::seq_cst);
    return LLVM::ExtractValueOp::create(b, loc, exchange.getResult(), ArrayRef<int64_t>{0});
  }
  Type i32 = b.getI32Type();
  Value operand =
      operands.size() > 1
          ? operands[1]
          : LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(1)).getResult();
  auto kind = llvm::StringSwitch<LLVM::AtomicBinOp>(api.atomic)
                  .Cases({"add", "inc"}, LLVM::AtomicBinOp::add)
                  .Cases({"sub", "dec"}, LLVM::AtomicBinOp::sub)
                  .Case("xchg", LLVM::AtomicBinOp::xchg)
                  .Case("min", LLVM::AtomicBinOp::min)
                  .Case("max", LLVM::AtomicBinOp::max)
                  .Case("umin", LLVM::AtomicBinOp::umin)
                  .Case("umax", LLVM::AtomicBinOp::umax)
                  .Case("and", LLVM::AtomicBinOp::_and)
                  .Case("or", LLVM::AtomicBinOp::_or)
                  .Default(LLVM::AtomicBinOp::_xor);
  return LLVM::AtomicRMWOp::create(b, loc, kind, operands[0], operand,
                                   LLVM::AtomicOrdering::seq_cst);
}

/// The math dialect rather than libm calls: the CPU backend widens these in
/// lock-step tiles, and each backend lowers them its own way.
static Value raiseMath(OpBuilder &b, Location loc, const ApiCall &api, LLVM::CallOp call) {
  Value x = call.getArgOperands()[0];
  if (api.math == "floor")
    return math::FloorOp::create(b, loc, x);
  if (api.math == "rsqrt")
    return math::RsqrtOp::create(b, loc, x);
  if (api.math == "sqrt")
    return math::SqrtOp::create(b, loc, x);
  if (api.math == "sin")
    return math::SinOp::create(b, loc, x);
  return math::CosOp::create(b, loc, x);
}

/// The last __hpvm__return before `end` in `block`, if any.
static Operation *lastReturnBefore(Block *block, Block::iterator end) {
  for (auto it = end; it != block->begin();) {
    --it;
    if (auto call = dyn_cast<LLVM::CallOp>(*it); call && classify(call).api == Api::Return)
      return call;
  }
  return nullptr;
}

/// One leaf function raised: its outputs from the __hpvm__return calls, the
/// hpvm.leaf that takes its body, each HPVM-C call of the body as an op, and
/// each llvm.return as the hpvm.return of the outputs reaching it.
class LeafRaiser {
public:
  LeafRaiser(Raiser &raiser, Node &node)
      : raiser(raiser), node(node), function(node.function), name(function.getName()) {}

  LogicalResult run() {
    if (failed(collectReturns()) || failed(typeNode()))
      return failure();
    createLeaf();
    if (failed(raiseCalls()) || failed(checkHandleUses()))
      return failure();
    if (node.tensorLeaf && failed(typeTensorOutputs()))
      return failure();
    if (failed(lowerReturns()))
      return failure();
    // A tensor leaf is straight-line code: what the intrinsics' constant
    // arguments left behind goes.
    if (node.tensorLeaf)
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry->getOperations())))
        if (op.use_empty() && !op.hasTrait<::mlir::OpTrait::IsTerminator>() &&
            isMemoryEffectFree(&op))
          op.erase();
    eraseHandles();
    return success();
  }

private:
  /// The outputs: every __hpvm__return agrees on their number.
  LogicalResult collectReturns() {
    function.walk([&](LLVM::CallOp call) {
      if (classify(call).api == Api::Return)
        returns.push_back(call);
    });
    for (LLVM::CallOp call : returns) {
      OperandRange operands = call.getArgOperands();
      std::optional<int64_t> n = operands.empty() ? std::nullopt : constantInt(operands[0]);
      if (!n || *n < 0)
        return call.emitError("__hpvm__return expects a constant count of outputs first");
      if (static_cast<size_t>(*n) + 1 != operands.size())
        return call.emitError() << "__hpvm__return(" << *n << ", ...) expects " << *n
                                << " outputs, found " << operands.size() - 1;
      if (count && *count != *n)
        return call.emitError() << "__hpvm__return gives " << *n
                                << " outputs, but another __hpvm__return of '"
                                << getNodeDisplayName(name) << "' gives " << *count;
      count = *n;
    }
    return success();
  }

  /// The node's inputs (tensors for a tensor leaf) and outputs.
  LogicalResult typeNode() {
    // A tensor leaf: the inputs __hpvm__tensor_shape declares are tensors.
    node.tensorLeaf = function
                          .walk([](LLVM::CallOp call) {
                            Api api = classify(call).api;
                            return api == Api::Tensor || api == Api::TensorShape
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          })
                          .wasInterrupted();
    if (node.tensorLeaf && failed(raiser.readTensorShapes(node)))
      return failure();
    // The tensors flowing in type the `void *` inputs it does not declare.
    if (node.tensorLeaf)
      for (auto [input, type] : node.incoming)
        if (input < node.inputs.size() && isa<LLVM::LLVMPointerType>(node.inputs[input])) {
          node.tensorInputs[input] = type;
          node.inputs[input] = type;
        }
    FailureOr<SmallVector<Type>> declared =
        raiser.outputTypesFromDeclaration(node, count.value_or(0));
    if (succeeded(declared)) {
      node.outputs = *declared;
    } else if (!returns.empty()) {
      for (Value value : returns.front().getArgOperands().drop_front())
        node.outputs.push_back(value.getType());
    }
    raiser.setOutputLayout(node);
    return success();
  }

  /// The hpvm.leaf, with the function's body; an sret slot becomes a local.
  void createLeaf() {
    OpBuilder b(function);
    leaf = LeafOp::create(b, definitionLoc(function), name,
                          FunctionType::get(raiser.context, node.inputs, node.outputs));
    leaf.setPrivate();
    node.definition = leaf;
    leaf.getBody().takeBody(function.getBody());
    entry = &leaf.getBody().front();
    if (node.sret) {
      // The (unused) return slot becomes a local.
      OpBuilder eb = OpBuilder::atBlockBegin(entry);
      auto sretType = function.getArgAttrOfType<TypeAttr>(0, "llvm.sret");
      Value one = LLVM::ConstantOp::create(eb, function.getLoc(), eb.getI64Type(),
                                           eb.getI64IntegerAttr(1));
      Value slot =
          LLVM::AllocaOp::create(eb, function.getLoc(), raiser.pointerType,
                                 sretType ? sretType.getValue() : eb.getI8Type(), one);
      entry->getArgument(0).replaceAllUsesWith(slot);
      entry->eraseArgument(0);
    }
    for (auto [input, type] : node.tensorInputs)
      entry->getArgument(input).setType(type);
    convertNarrowIntegersThroughWide(leaf);
  }

  /// Node handles: the level of the node each handle designates.
  FailureOr<unsigned> handleLevel(LLVM::CallOp call) {
    Value handle = call.getArgOperands().empty() ? Value() : call.getArgOperands()[0];
    auto it = levels.find(handle);
    if (it == levels.end())
      return call.emitError() << spelling(call)
                              << " expects a node handle from __hpvm__getNode() or "
                                 "__hpvm__getParentNode(...) in the same function";
    return it->second;
  }

  LogicalResult raiseCalls() {
    SmallVector<LLVM::CallOp> calls;
    leaf.walk([&](LLVM::CallOp call) {
      if (classify(call).api != Api::None)
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls) {
      ApiCall api = classify(call);
      // Kept for now: __hpvm__return (at the llvm.return), node handles
      // (erased once their uses are).
      if (api.api == Api::Return)
        continue;
      if (api.api == Api::GetNode || api.api == Api::GetParentNode) {
        FailureOr<unsigned> level = api.api == Api::GetNode ? 0u : handleLevel(call);
        if (failed(level))
          return failure();
        levels[call.getResult()] = api.api == Api::GetNode ? 0 : *level + 1;
        continue;
      }
      FailureOr<Value> replacement = raiseCall(call, api);
      if (failed(replacement))
        return failure();
      if (*replacement)
        call.getResult().replaceAllUsesWith(*replacement);
      call.erase();
    }
    return success();
  }

  /// The op an HPVM-C call of the leaf becomes; its result's replacement, or
  /// a null value when it has none.
  FailureOr<Value> raiseCall(LLVM::CallOp call, const ApiCall &api) {
    OpBuilder cb(call);
    Location loc = call.getLoc();
    switch (api.api) {
    case Api::Hint:
      return failed(raiser.applyHint(node, call, leaf)) ? FailureOr<Value>() : Value();
    case Api::Attributes:
      return failed(raiser.applyAttributes(node, call, leaf, *entry, /*firstInput=*/0))
                 ? FailureOr<Value>()
                 : Value();
    case Api::InstanceId:
    case Api::NumInstances: {
      FailureOr<unsigned> level = handleLevel(call);
      if (failed(level))
        return failure();
      Value index = api.api == Api::InstanceId
                        ? InstanceIdOp::create(cb, loc, api.dim, *level).getResult()
                        : NumInstancesOp::create(cb, loc, api.dim, *level).getResult();
      return arith::IndexCastOp::create(cb, loc, call.getResult().getType(), index)
          .getResult();
    }
    case Api::Barrier:
      BarrierOp::create(cb, loc);
      return Value();
    case Api::Malloc: {
      Value bytes = arith::IndexCastOp::create(cb, loc, cb.getIndexType(),
                                               call.getArgOperands()[0]);
      return AllocOp::create(cb, loc, raiser.pointerType, ValueRange{bytes}).getResult();
    }
    case Api::IsNonZeroLoop:
    case Api::TensorShape: // read by readTensorShapes
      return Value();
    case Api::NodeId:
      return failed(checkNodeIdUnused(call)) ? FailureOr<Value>() : Value();
    case Api::Atomic:
      return raiseAtomic(cb, loc, api, call);
    case Api::Math:
      return raiseMath(cb, loc, api, call);
    case Api::Tensor:
      return raiser.raiseTensorCall(node, call, *entry);
    default:
      return call.emitError()
             << spelling(call) << " is a "
             << (isHostCall(api.api) ? "host call" : "graph call")
             << " and cannot appear in leaf node '" << getNodeDisplayName(name) << "'"
             << (isHostCall(api.api) ? "; host calls belong to host code" : "");
    }
  }

  /// Handles may only feed the queries above.
  LogicalResult checkHandleUses() {
    for (auto &[handle, level] : levels)
      for (Operation *user : handle.getUsers()) {
        auto call = dyn_cast<LLVM::CallOp>(user);
        if (!call || classify(call).api != Api::GetParentNode)
          return emitError(sourceLoc(user))
                 << "a node handle (__hpvm__getNode / __hpvm__getParentNode) may "
                    "only be passed to the HPVM query functions";
      }
    return success();
  }

  /// Tensors returned are tensor outputs (the C return struct declares them
  /// `void *`).
  LogicalResult typeTensorOutputs() {
    if (failed(raiser.checkTensorUses(node, leaf)))
      return failure();
    for (LLVM::CallOp call : returns)
      for (auto [index, value] : llvm::enumerate(call.getArgOperands().drop_front()))
        if (isa<TensorType>(value.getType()) && index < node.outputs.size())
          node.outputs[index] = value.getType();
    leaf.setFunctionTypeAttr(
        TypeAttr::get(FunctionType::get(raiser.context, node.inputs, node.outputs)));
    raiser.setOutputLayout(node);
    return success();
  }

  /// Which __hpvm__return calls reach a point, and whether a path from the
  /// entry reaches it without one.
  struct Reaching {
    llvm::SmallSetVector<Operation *, 2> calls;
    bool none = false;
    bool operator!=(const Reaching &other) const {
      return none != other.none || calls.getArrayRef() != other.calls.getArrayRef();
    }
  };

  Reaching atStart(Block *block) {
    Reaching reaching;
    reaching.none = block->isEntryBlock();
    for (Block *pred : block->getPredecessors()) {
      const Reaching &from = atEnd[pred];
      reaching.none |= from.none;
      reaching.calls.insert(from.calls.begin(), from.calls.end());
    }
    return reaching;
  }

  Reaching reachingBefore(Block *block, Block::iterator point) {
    Reaching reaching;
    if (Operation *last = lastReturnBefore(block, point))
      reaching.calls.insert(last);
    else
      reaching = atStart(block);
    return reaching;
  }

  /// Each llvm.return becomes hpvm.return with the outputs of the last
  /// __hpvm__return on the paths reaching it. clang merges the returns of a
  /// function into one block, so several __hpvm__return calls (early returns,
  /// switch cases) may reach one llvm.return: their outputs then go through
  /// a stack slot per output, which LLVM promotes back to registers.
  LogicalResult lowerReturns() {
    for (bool changed = true; changed;) {
      changed = false;
      for (Block &block : leaf.getBody()) {
        Reaching reaching = reachingBefore(&block, block.end());
        Reaching &old = atEnd[&block];
        if (old != reaching) {
          old = std::move(reaching);
          changed = true;
        }
      }
    }
    // The values each __hpvm__return gives, at their declared types.
    for (LLVM::CallOp call : returns) {
      OpBuilder rb(call);
      SmallVector<Value> &values = given[call];
      for (auto [index, value] : llvm::enumerate(call.getArgOperands().drop_front())) {
        FailureOr<Value> fitted = fitOutput(rb, call, index, value, node.outputs[index]);
        if (failed(fitted))
          return failure();
        values.push_back(*fitted);
      }
    }
    SmallVector<LLVM::ReturnOp> llvmReturns;
    leaf.walk([&](LLVM::ReturnOp ret) { llvmReturns.push_back(ret); });
    for (LLVM::ReturnOp ret : llvmReturns)
      if (failed(lowerReturn(ret)))
        return failure();
    for (LLVM::CallOp call : returns)
      call.erase();
    return success();
  }

  LogicalResult lowerReturn(LLVM::ReturnOp ret) {
    Reaching reaching = reachingBefore(ret->getBlock(), ret->getIterator());
    if (reaching.none && !node.outputs.empty()) {
      InFlightDiagnostic diag = ret.emitError() << "leaf node '" << getNodeDisplayName(name)
                                                << "' has " << node.outputs.size()
                                                << " outputs but reaches its end here without "
                                                   "__hpvm__return";
      if (!reaching.calls.empty())
        diag << " on some path (every path must end with __hpvm__return)";
      return diag;
    }
    OpBuilder rb(ret);
    SmallVector<Value> values;
    if (reaching.calls.size() == 1) {
      values = given[reaching.calls.front()];
    } else if (reaching.calls.size() > 1) {
      createSlots();
      for (auto [slot, type] : llvm::zip(slots, node.outputs))
        values.push_back(LLVM::LoadOp::create(rb, ret.getLoc(), type, slot));
    } else {
      // Not reachable from the entry.
      for (Type type : node.outputs)
        values.push_back(LLVM::PoisonOp::create(rb, ret.getLoc(), type));
    }
    mlir::hpvm::ReturnOp::create(rb, ret.getLoc(), values);
    ret.erase();
    return success();
  }

  /// A stack slot per output, stored by every __hpvm__return (once).
  void createSlots() {
    if (!slots.empty())
      return;
    OpBuilder eb = OpBuilder::atBlockBegin(entry);
    Value one = LLVM::ConstantOp::create(eb, leaf.getLoc(), eb.getI64Type(),
                                         eb.getI64IntegerAttr(1));
    for (Type type : node.outputs)
      slots.push_back(LLVM::AllocaOp::create(eb, leaf.getLoc(), raiser.pointerType, type, one));
    for (LLVM::CallOp call : returns) {
      OpBuilder sb(call);
      for (auto [slot, value] : llvm::zip(slots, given[call]))
        LLVM::StoreOp::create(sb, call.getLoc(), value, slot);
    }
  }

  /// Handles last: their users are gone.
  void eraseHandles() {
    SmallVector<Value> handles;
    for (auto &[handle, level] : levels)
      handles.push_back(handle);
    while (!handles.empty()) {
      bool progress = false;
      for (Value &handle : handles)
        if (handle && handle.use_empty()) {
          handle.getDefiningOp()->erase();
          handle = Value();
          progress = true;
        }
      llvm::erase_if(handles, [](Value v) { return !v; });
      if (!progress)
        break;
    }
  }

  Raiser &raiser;
  Node &node;
  LLVM::LLVMFuncOp function;
  StringRef name;
  LeafOp leaf;
  Block *entry = nullptr;
  SmallVector<LLVM::CallOp> returns;
  std::optional<unsigned> count; // of outputs, as every __hpvm__return gives
  DenseMap<Value, unsigned> levels;
  DenseMap<Block *, Reaching> atEnd;
  DenseMap<Operation *, SmallVector<Value>> given;
  SmallVector<Value> slots; // created when a return is reached by several
};

LogicalResult Raiser::raiseLeaf(Node &node) { return LeafRaiser(*this, node).run(); }

LogicalResult Raiser::raiseNode(StringAttr name, Location usedAt) {
  Node &node = nodes[name];
  if (node.state == Node::Done)
    return success();
  if (node.state == Node::Visiting)
    return emitError(usedAt) << "node function '" << getNodeDisplayName(name.getValue())
                             << "' contains itself: the node hierarchy has a cycle";
  node.state = Node::Visiting;
  if (failed(node.internal ? raiseInternal(node) : raiseLeaf(node)))
    return failure();
  node.definition->walk([](Operation *op) { op->setLoc(plain(op->getLoc())); });
  node.state = Node::Done;
  return success();
}

} // namespace mlir::hpvm::hpvmc
