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
// This file: the pass and finding the node functions, their hints,
// attributes and outputs. RaiseLeaves.cpp: leaves. EvaluateGraph.cpp:
// internal nodes. RaiseHost.cpp: host code. HPVMCApi.cpp: the API and C types.
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
    return call.emitError() << "node function '" << getNodeDisplayName(function.getName())
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
  // A node function nothing launches or creates any more (an alternative root
  // kept around): still a node, unused, with a warning, rather than host code
  // full of calls that only nodes may make.
  for (auto function : module.getOps<LLVM::LLVMFuncOp>()) {
    if (function.isExternal() || function.getName() == "main" ||
        nodes.count(function.getSymNameAttr()) ||
        !SymbolTable::symbolKnownUseEmpty(function, module))
      continue;
    // Its own __hpvm__hint or __hpvm__attributes (not one of a function
    // inlined into it: those have call-site locations).
    bool marked = function.walk([&](LLVM::CallOp call) {
                             Api api = classify(call).api;
                             return (api == Api::Hint || api == Api::Attributes) &&
                                            !isa<CallSiteLoc>(call.getLoc())
                                        ? WalkResult::interrupt()
                                        : WalkResult::advance();
                           }).wasInterrupted();
    if (!marked)
      continue;
    function.emitWarning() << "node function '" << getNodeDisplayName(function.getName())
                           << "' is never used: no __hpvm__launch or __hpvm__createNodeND "
                              "names it (it is compiled as an unused node)";
    nodes[function.getSymNameAttr()].function = function;
  }
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
        !isa<LLVM::LLVMPointerType, RankedTensorType>(arg.getType()))
      return fail("argument " + Twine(index) + " is not a pointer parameter of the node "
                  "function");
    // Tensors (ApproxHPVM lists them) are values: no access to record.
    if (isa<RankedTensorType>(arg.getType()))
      continue;
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
  splitSelectedLaunches();
  if (failed(collectNodes()) || failed(inferLaunchShapes()))
    return failure();
  // Parents before children: tensor shapes flow down the hierarchy, from the
  // host's tensor objects into the roots launched, from each internal node
  // into its children. So the roots first, then the nodes no internal node
  // creates, then (children of unused nodes) the rest.
  SmallVector<StringAttr> order;
  DenseSet<StringAttr> children;
  module.walk([&](LLVM::CallOp call) {
    Api api = classify(call).api;
    if (api != Api::CreateNode && api != Api::Launch)
      return;
    auto address = call.getArgOperands()[1].getDefiningOp<LLVM::AddressOfOp>();
    if (api == Api::Launch)
      order.push_back(address.getGlobalNameAttr().getAttr());
    else
      children.insert(address.getGlobalNameAttr().getAttr());
  });
  for (auto &[name, node] : nodes)
    if (!children.contains(name))
      order.push_back(name);
  for (auto &[name, node] : nodes)
    order.push_back(name);
  for (StringAttr name : order)
    if (failed(raiseNode(name, nodes[name].function.getLoc())))
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
