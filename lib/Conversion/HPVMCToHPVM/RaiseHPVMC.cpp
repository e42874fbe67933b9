//===- RaiseHPVMC.cpp - The hpvm-raise-c pass ------------------------------===//
// Raises an HPVM-C program imported from LLVM IR (llvm dialect, HPVM-C calls
// to the functions of runtime/include/hpvm/hpvm.h) to the hpvm dialect: node functions
// become hpvm.leaf / hpvm.internal, host calls become host ops.
//
// Graph-describing functions are evaluated at compile time, the way the
// original release required them to be static: integer arithmetic on
// constants is folded, branches on constants are followed (so loops binding
// ports are fine), and each __hpvm__createNodeND / bindIn / bindOut / edge
// reached becomes an op. Extents may depend on the node's inputs: that
// arithmetic is kept in the internal node.
//
// Types of node outputs: variadic __hpvm__return promotes float to double and
// small integers to int, so the declared C return struct decides: from the
// debug information (hpvm-cc compiles with -g) when present, else from the
// function's LLVM return type when it has one field per output.
//
// This file: the pass, finding node functions, leaves, host code.
// EvaluateGraph.cpp: internal nodes. HPVMCApi.cpp: the API and C types.
#include "HPVMCRaiser.h"

// The C API header: its enum Target values are what __hpvm__hint receives.
#include "hpvm/hpvm.h"
#undef DEVICE

namespace mlir::hpvm {
#define GEN_PASS_DEF_RAISEHPVMC
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {

//===----------------------------------------------------------------------===//
// Finding the node functions
//===----------------------------------------------------------------------===//

/// The node function given as operand `operand` of a createNodeND / launch.
FailureOr<Node *> Raiser::nodeOfFunctionOperand(LLVM::CallOp call, unsigned operand) {
  if (call.getArgOperands().size() <= operand)
    return call.emitError() << spelling(call)
                            << " expects a node function as argument "
                            << operand + 1 << ", found none";
  Value value = call.getArgOperands()[operand];
  auto address = value.getDefiningOp<LLVM::AddressOfOp>();
  // Once raised, the node definition has the function's name too.
  if (address) {
    auto known = nodes.find(address.getGlobalNameAttr().getAttr());
    if (known != nodes.end() && known->second.function)
      return &known->second;
  }
  auto function = address ? module.lookupSymbol<LLVM::LLVMFuncOp>(address.getGlobalNameAttr())
                          : LLVM::LLVMFuncOp();
  if (!function) {
    InFlightDiagnostic diag = call.emitError()
                              << spelling(call) << " expects a node function (the name of a "
                              << "C function) as argument " << operand + 1 << ", found ";
    if (address)
      diag << "the global '" << address.getGlobalName() << "', which is not a function";
    else
      diag << "a value computed at run time";
    return diag;
  }
  if (function.isExternal())
    return call.emitError() << "node function '" << function.getName()
                            << "' has no body in this translation unit";
  return &nodes[function.getSymNameAttr()];
}

LogicalResult Raiser::collectNodes() {
  bool ok = true;
  module.walk([&](LLVM::CallOp call) {
    Api api = classify(call).api;
    if (api != Api::CreateNode && api != Api::Launch)
      return;
    FailureOr<Node *> node = nodeOfFunctionOperand(call, 1);
    if (failed(node)) {
      ok = false;
      return;
    }
    Value address = call.getArgOperands()[1];
    (*node)->function = module.lookupSymbol<LLVM::LLVMFuncOp>(
        address.getDefiningOp<LLVM::AddressOfOp>().getGlobalNameAttr());
  });
  if (!ok)
    return failure();
  // The API functions exist only as calls the raising replaces: taking the
  // address of one (calling it through a pointer) would leave it undefined.
  module.walk([&](LLVM::AddressOfOp address) {
    StringRef callee = address.getGlobalName();
    if (classify(callee).api == Api::None || !module.lookupSymbol<LLVM::LLVMFuncOp>(callee))
      return;
    emitError(sourceLoc(address))
        << "the address of HPVM-C function '" << callee
        << "' is taken (a call through a pointer or a cast?); HPVM-C functions "
           "may only be called directly, with the arguments hpvm.h declares";
    ok = false;
  });
  if (!ok)
    return failure();
  // A node function runs only as a node: any other use of it is an error.
  module.walk([&](Operation *op) {
    if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      if (std::optional<StringRef> callee = call.getCallee())
        if (nodes.count(StringAttr::get(context, *callee))) {
          call.emitError() << "node function '" << *callee
                           << "' is called directly; node functions run only as "
                              "nodes of a graph (__hpvm__createNodeND, __hpvm__launch)";
          ok = false;
        }
      return;
    }
    auto address = dyn_cast<LLVM::AddressOfOp>(op);
    if (!address || !nodes.count(address.getGlobalNameAttr().getAttr()))
      return;
    for (OpOperand &use : address->getUses()) {
      auto call = dyn_cast<LLVM::CallOp>(use.getOwner());
      Api api = call ? classify(call).api : Api::None;
      bool asNode = (api == Api::CreateNode || api == Api::Launch) &&
                    use.getOperandNumber() == 1;
      if (!asNode) {
        emitError(sourceLoc(use.getOwner()))
            << "node function '" << address.getGlobalName()
            << "' is used other than as a node of a graph (only "
               "__hpvm__createNodeND and __hpvm__launch may take it)";
        ok = false;
      }
    }
  });
  for (auto &[name, node] : nodes) {
    LLVM::LLVMFuncOp function = node.function;
    node.internal = function
                        .walk([](LLVM::CallOp call) {
                          return isGraphCall(classify(call).api)
                                     ? WalkResult::interrupt()
                                     : WalkResult::advance();
                        })
                        .wasInterrupted();
    ArrayRef<Type> params = function.getFunctionType().getParams();
    node.sret = !params.empty() && function.getArgAttr(0, "llvm.sret");
    for (auto [index, type] : llvm::enumerate(params)) {
      if (node.sret && index == 0)
        continue;
      if (function.getArgAttr(index, "llvm.byval")) {
        function.emitError() << "node function '" << name.getValue()
                             << "' takes parameter " << index
                             << " as a struct by value; node inputs are scalars "
                                "and pointers";
        ok = false;
      }
      node.inputs.push_back(type);
    }
    if (function.isVarArg()) {
      function.emitError() << "node function '" << name.getValue()
                           << "' is variadic; node functions have fixed inputs";
      ok = false;
    }
  }
  return success(ok);
}

//===----------------------------------------------------------------------===//
// Hints, attributes, outputs
//===----------------------------------------------------------------------===//

LogicalResult Raiser::applyHint(Node &node, LLVM::CallOp call, Operation *definition) {
  std::optional<int64_t> value =
      call.getArgOperands().empty() ? std::nullopt : constantInt(call.getArgOperands()[0]);
  if (!value)
    return call.emitError() << "__hpvm__hint expects a constant target "
                               "(CPU_TARGET, GPU_TARGET, ...)";
  SmallVector<Target> targets;
  switch (static_cast<::hpvm::Target>(*value)) {
  case ::hpvm::None:
    return success();
  case ::hpvm::CPU_TARGET:
    targets = {Target::cpu};
    break;
  case ::hpvm::GPU_TARGET:
    targets = {Target::gpu};
    break;
  case ::hpvm::SPIR_TARGET:
    targets = {Target::spirv};
    break;
  case ::hpvm::CUDNN_TARGET:
  case ::hpvm::PROMISE_TARGET:
  case ::hpvm::TENSOR_TARGET:
    targets = {Target::tensor};
    break;
  case ::hpvm::CPU_OR_GPU_TARGET:
    targets = {Target::cpu, Target::gpu};
    break;
  case ::hpvm::CPU_OR_SPIR_TARGET:
    targets = {Target::cpu, Target::spirv};
    break;
  default:
    return call.emitError() << "__hpvm__hint: target " << *value
                            << " is not supported; expected CPU_TARGET, GPU_TARGET, "
                               "SPIR_TARGET, CUDNN_TARGET, PROMISE_TARGET, "
                               "TENSOR_TARGET, CPU_OR_GPU_TARGET or CPU_OR_SPIR_TARGET";
  }
  SmallVector<Attribute> attrs;
  for (Target target : targets)
    attrs.push_back(TargetAttr::get(context, target));
  definition->setAttr("hpvm.targets", ArrayAttr::get(context, attrs));
  return success();
}

/// `firstInput`: the argument of `entry` that is the node's input 0 (1 when
/// `entry` still has the sret pointer).
LogicalResult Raiser::applyAttributes(Node &node, LLVM::CallOp call,
                                      FunctionOpInterface definition, Block &entry,
                                      unsigned firstInput) {
  OperandRange operands = call.getArgOperands();
  auto fail = [&](const Twine &what) {
    return call.emitError() << "__hpvm__attributes(nIn, in..., nOut, out...): " << what;
  };
  std::optional<int64_t> numIn = operands.empty() ? std::nullopt : constantInt(operands[0]);
  if (!numIn || *numIn < 0 || static_cast<size_t>(*numIn) + 2 > operands.size())
    return fail("expects a constant count of inputs followed by that many pointers "
                "and a count of outputs");
  std::optional<int64_t> numOut = constantInt(operands[*numIn + 1]);
  if (!numOut || *numOut < 0 ||
      static_cast<size_t>(*numIn + *numOut + 2) != operands.size())
    return fail("expects " + Twine(*numIn) + " input pointers, then a constant count of "
                "output pointers, then that many pointers; found " +
                Twine(operands.size()) + " arguments");
  DenseMap<unsigned, unsigned> access; // bit 0: in, bit 1: out
  for (auto [index, value] : llvm::enumerate(operands)) {
    if (index == 0 || index == static_cast<size_t>(*numIn) + 1)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &entry || arg.getArgNumber() < firstInput ||
        !isa<LLVM::LLVMPointerType>(arg.getType()))
      return fail("argument " + Twine(index) + " is not a pointer parameter of the node "
                  "function");
    unsigned input = arg.getArgNumber() - firstInput;
    access[input] |= index <= static_cast<size_t>(*numIn) ? 1 : 2;
  }
  for (auto [input, bits] : access) {
    Access kind = bits == 1 ? Access::in : bits == 2 ? Access::out : Access::inout;
    definition.setArgAttr(input, "hpvm.access", AccessAttr::get(context, kind));
  }
  return success();
}

/// The declared C types of `count` outputs, or failure when they cannot be
/// known (the caller then takes the promoted types of __hpvm__return).
FailureOr<SmallVector<Type>> Raiser::outputTypesFromDeclaration(Node &node,
                                                                unsigned count) {
  SmallVector<Type> types;
  if (std::optional<SmallVector<Field>> fields = declaredReturnFields(node.function)) {
    if (fields->size() != count)
      return failure();
    for (Field field : *fields)
      types.push_back(field.type);
    return types;
  }
  // Without debug information: the LLVM return type, when clang kept one
  // field per output.
  Type result = node.function.getFunctionType().getReturnType();
  if (node.sret)
    if (auto sret = node.function.getArgAttrOfType<TypeAttr>(0, "llvm.sret"))
      result = sret.getValue();
  if (isa<LLVM::LLVMVoidType>(result)) {
    if (count == 0)
      return types;
    return failure();
  }
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(result)) {
    if (structType.getBody().size() != count)
      return failure();
    llvm::append_range(types, structType.getBody());
    return types;
  }
  if (count == 1)
    return SmallVector<Type>{result};
  return failure();
}

/// Where each output lives in the C return struct (the launch's output field).
void Raiser::setOutputLayout(Node &node) {
  node.outputOffsets.clear();
  std::optional<SmallVector<Field>> fields = declaredReturnFields(node.function);
  if (fields && fields->size() == node.outputs.size()) {
    for (auto [field, type] : llvm::zip(*fields, node.outputs)) {
      node.outputOffsets.push_back(field.offset);
      node.outputSize = std::max(node.outputSize, field.offset + byteSize(layout, type));
    }
    return;
  }
  // Packed, as the release's examples declare them.
  uint64_t offset = 0;
  for (Type type : node.outputs) {
    node.outputOffsets.push_back(offset);
    offset += byteSize(layout, type);
  }
  node.outputSize = offset;
}

/// Brings a __hpvm__return value to its declared type, undoing the variadic
/// promotions (float -> double, small integers -> int).
FailureOr<Value> fitOutput(OpBuilder &b, LLVM::CallOp call, unsigned index,
                           Value value, Type declared) {
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

LogicalResult Raiser::raiseLeaf(Node &node) {
  LLVM::LLVMFuncOp function = node.function;
  StringRef name = function.getName();
  // The outputs: every __hpvm__return agrees on their number.
  SmallVector<LLVM::CallOp> returns;
  function.walk([&](LLVM::CallOp call) {
    if (classify(call).api == Api::Return)
      returns.push_back(call);
  });
  std::optional<unsigned> count;
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
                              << " outputs, but another __hpvm__return of '" << name
                              << "' gives " << *count;
    count = *n;
  }
  unsigned numOutputs = count.value_or(0);
  FailureOr<SmallVector<Type>> declared = outputTypesFromDeclaration(node, numOutputs);
  if (succeeded(declared)) {
    node.outputs = *declared;
  } else if (!returns.empty()) {
    for (Value value : returns.front().getArgOperands().drop_front())
      node.outputs.push_back(value.getType());
  }
  setOutputLayout(node);

  OpBuilder b(function);
  auto leaf = LeafOp::create(b, function.getLoc(), name,
                             FunctionType::get(context, node.inputs, node.outputs));
  leaf.setPrivate();
  node.definition = leaf;
  leaf.getBody().takeBody(function.getBody());
  Block &entry = leaf.getBody().front();
  if (node.sret) {
    // The (unused) return slot becomes a local.
    OpBuilder eb = OpBuilder::atBlockBegin(&entry);
    auto sretType = function.getArgAttrOfType<TypeAttr>(0, "llvm.sret");
    Value one = LLVM::ConstantOp::create(eb, function.getLoc(), eb.getI64Type(),
                                         eb.getI64IntegerAttr(1));
    Value slot = LLVM::AllocaOp::create(eb, function.getLoc(), pointerType,
                                        sretType ? sretType.getValue() : eb.getI8Type(), one);
    entry.getArgument(0).replaceAllUsesWith(slot);
    entry.eraseArgument(0);
  }

  // Node handles: the level of the node each handle designates.
  DenseMap<Value, unsigned> levels;
  SmallVector<LLVM::CallOp> calls;
  leaf.walk([&](LLVM::CallOp call) {
    if (classify(call).api != Api::None)
      calls.push_back(call);
  });
  auto handleLevel = [&](LLVM::CallOp call) -> FailureOr<unsigned> {
    Value handle = call.getArgOperands().empty() ? Value() : call.getArgOperands()[0];
    auto it = levels.find(handle);
    if (it == levels.end())
      return call.emitError() << spelling(call)
                              << " expects a node handle from __hpvm__getNode() or "
                                 "__hpvm__getParentNode(...) in the same function";
    return it->second;
  };
  for (LLVM::CallOp call : calls) {
    ApiCall api = classify(call);
    OpBuilder cb(call);
    Location loc = call.getLoc();
    Value replacement;
    switch (api.api) {
    case Api::Hint:
      if (failed(applyHint(node, call, leaf)))
        return failure();
      break;
    case Api::Attributes:
      if (failed(applyAttributes(node, call, leaf, entry, /*firstInput=*/0)))
        return failure();
      break;
    case Api::Return:
      continue; // At the llvm.return.
    case Api::GetNode:
      levels[call.getResult()] = 0;
      continue; // Erased once its uses are.
    case Api::GetParentNode: {
      FailureOr<unsigned> level = handleLevel(call);
      if (failed(level))
        return failure();
      levels[call.getResult()] = *level + 1;
      continue;
    }
    case Api::InstanceId:
    case Api::NumInstances: {
      FailureOr<unsigned> level = handleLevel(call);
      if (failed(level))
        return failure();
      Value index =
          api.api == Api::InstanceId
              ? InstanceIdOp::create(cb, loc, api.dim, *level).getResult()
              : NumInstancesOp::create(cb, loc, api.dim, *level).getResult();
      replacement = arith::IndexCastOp::create(cb, loc, call.getResult().getType(), index);
      break;
    }
    case Api::Barrier:
      BarrierOp::create(cb, loc);
      break;
    case Api::Malloc: {
      Value bytes = arith::IndexCastOp::create(cb, loc, cb.getIndexType(),
                                               call.getArgOperands()[0]);
      replacement = AllocOp::create(cb, loc, pointerType, ValueRange{bytes});
      break;
    }
    case Api::IsNonZeroLoop:
      break;
    case Api::Atomic: {
      OperandRange operands = call.getArgOperands();
      if (api.atomic == "cmpxchg") {
        // As in the release: store the new value when the old one equals the
        // expected one, and return the old value either way.
        auto exchange = LLVM::AtomicCmpXchgOp::create(
            cb, loc, operands[0], operands[1], operands[2], LLVM::AtomicOrdering::seq_cst,
            LLVM::AtomicOrdering::seq_cst);
        replacement = LLVM::ExtractValueOp::create(cb, loc, exchange.getResult(),
                                                   ArrayRef<int64_t>{0});
        break;
      }
      Type i32 = cb.getI32Type();
      Value operand =
          operands.size() > 1
              ? operands[1]
              : LLVM::ConstantOp::create(cb, loc, i32, cb.getI32IntegerAttr(1)).getResult();
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
      replacement = LLVM::AtomicRMWOp::create(cb, loc, kind, operands[0], operand,
                                              LLVM::AtomicOrdering::seq_cst);
      break;
    }
    case Api::Math: {
      // The math dialect rather than libm calls: the CPU backend widens these
      // in lock-step tiles, and each backend lowers them its own way.
      Value x = call.getArgOperands()[0];
      if (api.math == "floor")
        replacement = math::FloorOp::create(cb, loc, x);
      else if (api.math == "rsqrt")
        replacement = math::RsqrtOp::create(cb, loc, x);
      else if (api.math == "sqrt")
        replacement = math::SqrtOp::create(cb, loc, x);
      else if (api.math == "sin")
        replacement = math::SinOp::create(cb, loc, x);
      else
        replacement = math::CosOp::create(cb, loc, x);
      break;
    }
    case Api::Tensor:
      return call.emitError() << spelling(call)
                              << ": tensor intrinsics are not supported by the "
                                 "HPVM-C frontend yet (write the tensor graph in "
                                 "the hpvm dialect)";
    default:
      return call.emitError()
             << spelling(call) << " is a "
             << (isHostCall(api.api) ? "host call" : "graph call")
             << " and cannot appear in leaf node '" << name << "'"
             << (isHostCall(api.api) ? "; host calls belong to host code" : "");
    }
    if (replacement)
      call.getResult().replaceAllUsesWith(replacement);
    call.erase();
  }
  // Handles may only feed the queries above.
  for (auto &[handle, level] : levels) {
    for (Operation *user : handle.getUsers()) {
      auto call = dyn_cast<LLVM::CallOp>(user);
      if (!call || classify(call).api != Api::GetParentNode)
        return emitError(sourceLoc(user))
               << "a node handle (__hpvm__getNode / __hpvm__getParentNode) may "
                  "only be passed to the HPVM query functions";
    }
  }
  // Each llvm.return becomes hpvm.return with the outputs of the last
  // __hpvm__return on the paths reaching it. clang merges the returns of a
  // function into one block, so several __hpvm__return calls (early returns,
  // switch cases) may reach one llvm.return: their outputs then go through
  // a stack slot per output, which LLVM promotes back to registers.
  struct Reaching {
    llvm::SmallSetVector<Operation *, 2> calls;
    bool none = false; // a path from the entry without __hpvm__return
    bool operator!=(const Reaching &other) const {
      return none != other.none || calls.getArrayRef() != other.calls.getArrayRef();
    }
  };
  auto lastReturnBefore = [](Block *block, Block::iterator end) -> Operation * {
    for (auto it = end; it != block->begin();) {
      --it;
      if (auto call = dyn_cast<LLVM::CallOp>(*it); call && classify(call).api == Api::Return)
        return call;
    }
    return nullptr;
  };
  DenseMap<Block *, Reaching> atEnd;
  auto atStart = [&](Block *block) {
    Reaching reaching;
    reaching.none = block->isEntryBlock();
    for (Block *pred : block->getPredecessors()) {
      const Reaching &from = atEnd[pred];
      reaching.none |= from.none;
      reaching.calls.insert(from.calls.begin(), from.calls.end());
    }
    return reaching;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Block &block : leaf.getBody()) {
      Reaching reaching;
      if (Operation *last = lastReturnBefore(&block, block.end()))
        reaching.calls.insert(last);
      else
        reaching = atStart(&block);
      Reaching &old = atEnd[&block];
      if (old != reaching) {
        old = std::move(reaching);
        changed = true;
      }
    }
  }
  SmallVector<LLVM::ReturnOp> llvmReturns;
  leaf.walk([&](LLVM::ReturnOp ret) { llvmReturns.push_back(ret); });
  // The values each __hpvm__return gives, at their declared types.
  DenseMap<Operation *, SmallVector<Value>> given;
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
  SmallVector<Value> slots; // created when a return is reached by several
  for (LLVM::ReturnOp ret : llvmReturns) {
    Reaching reaching;
    if (Operation *last = lastReturnBefore(ret->getBlock(), ret->getIterator()))
      reaching.calls.insert(last);
    else
      reaching = atStart(ret->getBlock());
    if (reaching.none && !node.outputs.empty()) {
      InFlightDiagnostic diag = ret.emitError()
                                << "leaf node '" << name << "' has " << node.outputs.size()
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
      if (slots.empty()) {
        OpBuilder eb = OpBuilder::atBlockBegin(&entry);
        Value one = LLVM::ConstantOp::create(eb, leaf.getLoc(), eb.getI64Type(),
                                             eb.getI64IntegerAttr(1));
        for (Type type : node.outputs)
          slots.push_back(
              LLVM::AllocaOp::create(eb, leaf.getLoc(), pointerType, type, one));
        for (LLVM::CallOp call : returns) {
          OpBuilder sb(call);
          for (auto [slot, value] : llvm::zip(slots, given[call]))
            LLVM::StoreOp::create(sb, call.getLoc(), value, slot);
        }
      }
      for (auto [slot, type] : llvm::zip(slots, node.outputs))
        values.push_back(LLVM::LoadOp::create(rb, ret.getLoc(), type, slot));
    } else {
      // Not reachable from the entry.
      for (Type type : node.outputs)
        values.push_back(LLVM::PoisonOp::create(rb, ret.getLoc(), type));
    }
    mlir::hpvm::ReturnOp::create(rb, ret.getLoc(), values);
    ret.erase();
  }
  for (LLVM::CallOp call : returns)
    call.erase();
  // Handles last: their users are gone.
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
  return success();
}

LogicalResult Raiser::raiseNode(StringAttr name, Location usedAt) {
  Node &node = nodes[name];
  if (node.state == Node::Done)
    return success();
  if (node.state == Node::Visiting)
    return emitError(usedAt) << "node function '" << name.getValue()
                             << "' contains itself: the node hierarchy has a cycle";
  node.state = Node::Visiting;
  if (failed(node.internal ? raiseInternal(node) : raiseLeaf(node)))
    return failure();
  node.definition->walk([](Operation *op) { op->setLoc(plain(op->getLoc())); });
  node.state = Node::Done;
  return success();
}

//===----------------------------------------------------------------------===//
// Host code
//===----------------------------------------------------------------------===//

/// Loads the root's inputs from the packed argument struct.
SmallVector<Value> Raiser::loadInputs(OpBuilder &b, Location loc, Node &root,
                                      Value args) {
  SmallVector<Value> values;
  uint64_t offset = 0;
  for (Type type : root.inputs) {
    Value address = LLVM::GEPOp::create(b, loc, pointerType, b.getI8Type(), args,
                                        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
    values.push_back(LLVM::LoadOp::create(b, loc, type, address, /*alignment=*/1));
    offset += byteSize(layout, type);
  }
  return values;
}

/// The scalar fields of a C struct (nested structs flattened): byte offset
/// and size. False when the layout has fields the check cannot follow.
static bool flattenFields(LLVM::DITypeAttr type, uint64_t base,
                          SmallVectorImpl<std::pair<uint64_t, uint64_t>> &fields) {
  type = stripTypedefs(type);
  auto composite = dyn_cast_or_null<LLVM::DICompositeTypeAttr>(type);
  if (!composite)
    return false;
  if (composite.getTag() != llvm::dwarf::DW_TAG_structure_type &&
      composite.getTag() != llvm::dwarf::DW_TAG_class_type)
    return false;
  for (LLVM::DINodeAttr element : composite.getElements()) {
    auto member = dyn_cast<LLVM::DIDerivedTypeAttr>(element);
    if (member && member.getTag() == llvm::dwarf::DW_TAG_inheritance)
      return false; // C++ bases: not followed
    if (!member || member.getTag() != llvm::dwarf::DW_TAG_member)
      continue;
    // Bit fields, C++ static members (DWARF 4 members at offset 0): not followed.
    uint64_t offset = base + member.getOffsetInBits() / 8;
    if (member.getOffsetInBits() % 8 || member.getSizeInBits() % 8 ||
        member.getExtraData() ||
        (!fields.empty() && offset < fields.back().first + fields.back().second))
      return false;
    LLVM::DITypeAttr memberType = stripTypedefs(member.getBaseType());
    if (auto nested = dyn_cast_or_null<LLVM::DICompositeTypeAttr>(memberType);
        nested && nested.getTag() != llvm::dwarf::DW_TAG_enumeration_type) {
      if (!flattenFields(memberType, offset, fields))
        return false;
      continue;
    }
    if (!scalarType(type.getContext(), memberType))
      return false;
    fields.push_back({offset, member.getSizeInBits() / 8});
  }
  return true;
}

/// The argument struct of a launch or push must be laid out the way the
/// inputs are read (packed, as in the release): a struct without
/// __attribute__((__packed__)) with padding silently passed wrong values.
LogicalResult Raiser::checkArgumentStruct(LLVM::CallOp call, Node &root, Value args,
                                          bool withOutputs) {
  SmallVector<std::pair<uint64_t, uint64_t>> fields; // offset, size
  std::string structName;
  if (LLVM::DITypeAttr type = pointees.lookup(args)) {
    if (!flattenFields(type, 0, fields))
      return success();
    if (auto composite = dyn_cast<LLVM::DICompositeTypeAttr>(stripTypedefs(type)))
      if (composite.getName())
        structName = composite.getName().str();
    if (structName.empty())
      if (auto typedefType = dyn_cast<LLVM::DIDerivedTypeAttr>(type))
        if (typedefType.getName())
          structName = typedefType.getName().str();
  } else if (auto alloca = args.getDefiningOp<LLVM::AllocaOp>()) {
    auto structType = dyn_cast<LLVM::LLVMStructType>(alloca.getElemType());
    if (!structType)
      return success();
    for (auto [index, element] : llvm::enumerate(structType.getBody())) {
      if (!isa<IntegerType, FloatType, LLVM::LLVMPointerType>(element))
        return success();
      fields.push_back({0, byteSize(layout, element)});
    }
    // Offsets: packed, or each field at its ABI alignment.
    uint64_t offset = 0;
    for (auto [field, element] : llvm::zip(fields, structType.getBody())) {
      uint64_t align = structType.isPacked() ? 1 : layout.getTypeABIAlignment(element);
      offset = llvm::alignTo(offset, align);
      field.first = offset;
      offset += field.second;
    }
    if (structType.isIdentified())
      structName = StringRef(structType.getName()).drop_front(
          StringRef(structType.getName()).starts_with("struct.") ? 7 : 0).str();
  } else {
    return success();
  }
  SmallVector<std::pair<Type, uint64_t>> expected; // type, packed offset
  uint64_t offset = 0;
  for (Type type : root.inputs) {
    expected.push_back({type, offset});
    offset += byteSize(layout, type);
  }
  if (withOutputs)
    for (auto [type, outputOffset] : llvm::zip(root.outputs, root.outputOffsets))
      expected.push_back({type, offset + outputOffset});
  if (fields.size() < root.inputs.size())
    return success(); // another shape (a byte buffer, ...): not checked
  std::string what = structName.empty() ? "the argument struct" : "the argument struct '" + structName + "'";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(expected, fields))) {
    auto [want, field] = pair;
    bool isInput = index < root.inputs.size();
    unsigned port = isInput ? index : index - root.inputs.size();
    uint64_t size = byteSize(layout, want.first);
    if (field.first == want.second && field.second == size)
      continue;
    InFlightDiagnostic diag = call.emitError()
                              << spelling(call) << ": " << what << " has field " << index
                              << " at byte " << field.first << " (" << field.second
                              << " bytes), but " << (isInput ? "input " : "output ") << port
                              << " of '" << root.function.getName() << "' (" << want.first
                              << ", " << size << " bytes) is read at byte " << want.second;
    if (field.first != want.second && field.second == size)
      diag << "; HPVM-C reads the inputs packed: declare the struct "
              "__attribute__((__packed__))";
    else
      diag << "; the struct's fields must have the types of the root's parameters"
           << (withOutputs ? ", then its return struct" : "");
    return diag;
  }
  return success();
}

LogicalResult Raiser::raiseHost(LLVM::LLVMFuncOp function) {
  struct Launched {
    LaunchOp launch;
    Node *root;
    Value args;
  };
  DenseMap<Value, Launched> graphs;
  SmallVector<LLVM::CallOp> calls;
  function.walk([&](LLVM::CallOp call) {
    if (classify(call).api != Api::None)
      calls.push_back(call);
  });
  // Launches first: waits, pushes and pops refer to them.
  for (LLVM::CallOp call : calls) {
    if (classify(call).api != Api::Launch)
      continue;
    OperandRange operands = call.getArgOperands();
    std::optional<int64_t> streaming = constantInt(operands[0]);
    if (!streaming)
      return call.emitError("__hpvm__launch expects a constant streaming flag (0 or 1)");
    if (operands.size() != 3)
      return call.emitError() << "__hpvm__launch(isStream, root, args) expects 3 "
                                 "arguments, found "
                              << operands.size();
    FailureOr<Node *> root = nodeOfFunctionOperand(call, 1);
    if (failed(root) || failed(raiseNode((*root)->function.getSymNameAttr(), call.getLoc())))
      return failure();
    if (!*streaming &&
        failed(checkArgumentStruct(call, **root, operands[2], /*withOutputs=*/true)))
      return failure();
    OpBuilder b(call);
    Location loc = plain(call.getLoc());
    SmallVector<Value> args;
    if (!*streaming)
      args = loadInputs(b, loc, **root, operands[2]);
    auto launch = LaunchOp::create(b, loc, mlir::hpvm::GraphType::get(context),
                                   FlatSymbolRefAttr::get((*root)->function.getSymNameAttr()),
                                   args, *streaming ? b.getUnitAttr() : UnitAttr(),
                                   *streaming ? b.getUnitAttr() : UnitAttr());
    graphs[call.getResult()] = {launch, *root, operands[2]};
    for (Operation *user : call.getResult().getUsers()) {
      auto use = dyn_cast<LLVM::CallOp>(user);
      Api api = use ? classify(use).api : Api::None;
      if (api != Api::Wait && api != Api::Push && api != Api::Pop)
        return user->emitError()
               << "the graph handle of __hpvm__launch may only be passed to "
                  "__hpvm__wait, __hpvm__push and __hpvm__pop in the same function";
    }
  }
  auto graphOf = [&](LLVM::CallOp call) -> FailureOr<Launched> {
    auto it = graphs.find(call.getArgOperands()[0]);
    if (it == graphs.end())
      return call.emitError() << spelling(call)
                              << " expects the handle returned by __hpvm__launch in "
                                 "the same function";
    return it->second;
  };
  for (LLVM::CallOp call : calls) {
    ApiCall api = classify(call);
    OpBuilder b(call);
    Location loc = plain(call.getLoc());
    OperandRange operands = call.getArgOperands();
    auto bytes = [&](Value value) {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), value).getResult();
    };
    switch (api.api) {
    case Api::Launch:
      continue;
    case Api::Init:
    case Api::Cleanup:
      break; // The runtime starts on first use and cleans up at exit.
    case Api::Track:
      TrackOp::create(b, loc, operands[0], bytes(operands[1]));
      break;
    case Api::Untrack:
      UntrackOp::create(b, loc, operands[0], Value());
      break;
    case Api::Request:
      RequestOp::create(b, loc, operands[0], bytes(operands[1]));
      break;
    case Api::Wait: {
      FailureOr<Launched> graph = graphOf(call);
      if (failed(graph))
        return failure();
      bool streaming = graph->launch.getStreaming();
      auto wait = WaitOp::create(b, loc, streaming ? TypeRange() : TypeRange(graph->root->outputs),
                                 graph->launch.getGraph());
      // The root's outputs go to the field after the inputs.
      uint64_t base = 0;
      for (Type type : graph->root->inputs)
        base += byteSize(layout, type);
      for (auto [index, result] : llvm::enumerate(wait.getResults())) {
        Value address = LLVM::GEPOp::create(
            b, loc, pointerType, b.getI8Type(), graph->args,
            ArrayRef<LLVM::GEPArg>{
                static_cast<int32_t>(base + graph->root->outputOffsets[index])});
        LLVM::StoreOp::create(b, loc, result, address, /*alignment=*/1);
      }
      break;
    }
    case Api::Push: {
      FailureOr<Launched> graph = graphOf(call);
      if (failed(graph))
        return failure();
      if (!graph->launch.getStreaming())
        return call.emitError("__hpvm__push needs a graph launched with streaming "
                              "(__hpvm__launch(1, ...))");
      if (failed(checkArgumentStruct(call, *graph->root, operands[1],
                                     /*withOutputs=*/false)))
        return failure();
      PushOp::create(b, loc, graph->launch.getGraph(),
                     loadInputs(b, loc, *graph->root, operands[1]));
      break;
    }
    case Api::Pop: {
      FailureOr<Launched> graph = graphOf(call);
      if (failed(graph))
        return failure();
      if (!graph->launch.getStreaming())
        return call.emitError("__hpvm__pop needs a graph launched with streaming "
                              "(__hpvm__launch(1, ...))");
      auto pop = PopOp::create(b, loc, graph->root->outputs, graph->launch.getGraph());
      // A fresh struct of the outputs, which the program owns (and may free).
      Node *root = graph->root;
      Value size = LLVM::ConstantOp::create(
          b, loc, b.getI64Type(),
          b.getI64IntegerAttr(std::max<uint64_t>(root->outputSize, 1)));
      auto malloc = module.lookupSymbol<LLVM::LLVMFuncOp>("malloc");
      if (!malloc) {
        OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
        malloc = LLVM::LLVMFuncOp::create(
            mb, module.getLoc(), "malloc",
            LLVM::LLVMFunctionType::get(pointerType, {mb.getI64Type()}));
      }
      Value memory = LLVM::CallOp::create(b, loc, malloc, ValueRange{size}).getResult();
      for (auto [index, result] : llvm::enumerate(pop.getResults())) {
        Value address = LLVM::GEPOp::create(
            b, loc, pointerType, b.getI8Type(), memory,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(root->outputOffsets[index])});
        LLVM::StoreOp::create(b, loc, result, address, /*alignment=*/1);
      }
      call.getResult().replaceAllUsesWith(memory);
      break;
    }
    default: {
      // Why the function is not a node: called by one, or named by no graph.
      bool calledByNode = false;
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(function.getSymNameAttr(), module))
        for (const SymbolTable::SymbolUse &use : *uses)
          calledByNode |= use.getUser()->getParentOfType<LeafOp>() != nullptr;
      InFlightDiagnostic diag =
          call.emitError()
          << spelling(call) << " is only valid inside "
          << (isGraphCall(api.api) || api.api == Api::Hint ||
                      api.api == Api::Attributes || api.api == Api::Return
                  ? "a node function"
                  : "a leaf node function");
      if (calledByNode)
        diag << ", not in '" << function.getName()
             << "', a function that a node calls; HPVM-C calls must be in the "
                "node function itself (make '"
             << function.getName() << "' static inline, or pass it the values)";
      else
        diag << ", not in host function '" << function.getName()
             << "' (no __hpvm__createNodeND or __hpvm__launch names it as a node)";
      return diag;
    }
    }
    call.erase();
  }
  for (auto &[handle, launched] : graphs)
    handle.getDefiningOp()->erase();
  return success();
}

LogicalResult Raiser::run() {
  // Debug intrinsics refer to values the raising replaces, so they go (the
  // locations keep the source lines); first they tell which C struct each
  // pointer points to, for checking the launch's argument struct.
  module.walk([&](Operation *op) {
    if (auto declare = dyn_cast<LLVM::DbgDeclareOp>(op)) {
      if (!declare.getLocationExpr() || declare.getLocationExpr().getOperations().empty())
        pointees[declare.getAddr()] = declare.getVarInfo().getType();
    } else if (auto value = dyn_cast<LLVM::DbgValueOp>(op)) {
      auto pointer = dyn_cast_or_null<LLVM::DIDerivedTypeAttr>(
          stripTypedefs(value.getVarInfo().getType()));
      if (pointer && pointer.getTag() == llvm::dwarf::DW_TAG_pointer_type &&
          (!value.getLocationExpr() || value.getLocationExpr().getOperations().empty()))
        pointees[value.getValue()] = pointer.getBaseType();
    }
    if (isa<LLVM::DbgValueOp, LLVM::DbgDeclareOp, LLVM::DbgLabelOp>(op))
      op->erase();
  });
  if (failed(collectNodes()))
    return failure();
  for (auto &[name, node] : nodes)
    if (failed(raiseNode(name, node.function.getLoc())))
      return failure();
  // An HPVM call inside an auxiliary function called from a node has no node
  // to act on.
  SmallVector<LLVM::LLVMFuncOp> hostFunctions;
  for (auto function : module.getOps<LLVM::LLVMFuncOp>())
    if (!function.isExternal() && !nodes.count(function.getSymNameAttr()))
      hostFunctions.push_back(function);
  for (LLVM::LLVMFuncOp function : hostFunctions)
    if (failed(raiseHost(function)))
      return failure();
  for (auto &[name, node] : nodes)
    node.function.erase();
  // The addresses of node functions the launches took.
  module.walk([&](LLVM::AddressOfOp address) {
    if (nodes.count(address.getGlobalNameAttr().getAttr()) && address->use_empty())
      address.erase();
  });
  // The API declarations nobody calls any more.
  for (auto function : llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>()))
    if (function.isExternal() && classify(function.getName()).api != Api::None &&
        SymbolTable::symbolKnownUseEmpty(function, module))
      function.erase();
  return success();
}

} // namespace mlir::hpvm::hpvmc

namespace {
using mlir::hpvm::hpvmc::Raiser;

struct RaiseHPVMCPass : public mlir::hpvm::impl::RaiseHPVMCBase<RaiseHPVMCPass> {
  void runOnOperation() override {
    if (failed(Raiser(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
