//===- RaiseHPVMC.cpp - The hpvm-raise-c pass ------------------------------===//
// Raises an HPVM-C program imported from LLVM IR (llvm dialect, HPVM-C calls
// to the functions of include/hpvm/hpvm.h) to the hpvm dialect: node functions
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
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/BinaryFormat/Dwarf.h"

// The C API header: its enum Target values are what __hpvm__hint receives.
#include "hpvm/hpvm.h"
#undef DEVICE

namespace mlir::hpvm {
#define GEN_PASS_DEF_RAISEHPVMC
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

//===----------------------------------------------------------------------===//
// The HPVM-C API
//===----------------------------------------------------------------------===//

enum class Api {
  None,
  // Every node.
  Hint, Attributes, Return,
  // Internal nodes.
  CreateNode, BindIn, BindOut, Edge,
  // Leaves.
  GetNode, GetParentNode, InstanceId, NumInstances, Barrier, Malloc,
  IsNonZeroLoop, Atomic, Tensor,
  // Host.
  Init, Cleanup, Launch, Wait, Push, Pop, Track, Untrack, Request,
};

struct ApiCall {
  Api api = Api::None;
  Dim dim = Dim::x;
  StringRef atomic; // add, sub, xchg, inc, dec, min, max, umin, umax, and, or, xor
};

ApiCall classify(StringRef name) {
  ApiCall call;
  call.api = llvm::StringSwitch<Api>(name)
                 .Case("__hpvm__hint", Api::Hint)
                 .Case("__hpvm__attributes", Api::Attributes)
                 .Case("__hpvm__return", Api::Return)
                 .Case("__hpvm__createNodeND", Api::CreateNode)
                 .Case("__hpvm__bindIn", Api::BindIn)
                 .Case("__hpvm__bindOut", Api::BindOut)
                 .Case("__hpvm__edge", Api::Edge)
                 .Case("__hpvm__getNode", Api::GetNode)
                 .Case("__hpvm__getParentNode", Api::GetParentNode)
                 .Case("__hpvm__barrier", Api::Barrier)
                 .Case("__hpvm__malloc", Api::Malloc)
                 .Case("__hpvm__isNonZeroLoop", Api::IsNonZeroLoop)
                 .Case("__hpvm__init", Api::Init)
                 .Case("__hpvm__cleanup", Api::Cleanup)
                 .Case("__hpvm__launch", Api::Launch)
                 .Case("__hpvm__wait", Api::Wait)
                 .Case("__hpvm__push", Api::Push)
                 .Case("__hpvm__pop", Api::Pop)
                 .Case("llvm_hpvm_track_mem", Api::Track)
                 .Case("llvm_hpvm_untrack_mem", Api::Untrack)
                 .Case("llvm_hpvm_request_mem", Api::Request)
                 .Default(Api::None);
  if (call.api != Api::None)
    return call;
  for (auto [prefix, api] : {std::pair{"__hpvm__getNodeInstanceID_", Api::InstanceId},
                             std::pair{"__hpvm__getNumNodeInstances_", Api::NumInstances}}) {
    StringRef rest = name;
    if (!rest.consume_front(prefix))
      continue;
    std::optional<Dim> dim = symbolizeDim(rest);
    if (!dim)
      return call;
    call.api = api;
    call.dim = *dim;
    return call;
  }
  StringRef rest = name;
  if (rest.consume_front("__hpvm__atomic_")) {
    if (llvm::is_contained({"add", "sub", "xchg", "inc", "dec", "min", "max",
                            "umin", "umax", "and", "or", "xor"},
                           rest)) {
      call.api = Api::Atomic;
      call.atomic = rest;
    }
    return call;
  }
  if (name.starts_with("__hpvm__tensor_"))
    call.api = Api::Tensor;
  return call;
}

ApiCall classify(LLVM::CallOp call) {
  std::optional<StringRef> callee = call.getCallee();
  return callee ? classify(*callee) : ApiCall{};
}

bool isGraphCall(Api api) {
  return api == Api::CreateNode || api == Api::BindIn || api == Api::BindOut ||
         api == Api::Edge;
}
bool isHostCall(Api api) { return api >= Api::Init; }
bool isLeafCall(Api api) { return api >= Api::GetNode && api <= Api::Tensor; }

/// The C spelling of an API call for diagnostics.
StringRef spelling(LLVM::CallOp call) { return call.getCallee().value_or("?"); }

//===----------------------------------------------------------------------===//
// C types from the debug information
//===----------------------------------------------------------------------===//

/// Strips typedefs and qualifiers.
LLVM::DITypeAttr stripTypedefs(LLVM::DITypeAttr type) {
  while (auto derived = dyn_cast_or_null<LLVM::DIDerivedTypeAttr>(type)) {
    unsigned tag = derived.getTag();
    if (tag != llvm::dwarf::DW_TAG_typedef && tag != llvm::dwarf::DW_TAG_const_type &&
        tag != llvm::dwarf::DW_TAG_volatile_type &&
        tag != llvm::dwarf::DW_TAG_restrict_type &&
        tag != llvm::dwarf::DW_TAG_atomic_type)
      break;
    type = derived.getBaseType();
  }
  return type;
}

/// The MLIR type of a scalar C type, or null.
Type scalarType(MLIRContext *context, LLVM::DITypeAttr type) {
  type = stripTypedefs(type);
  if (auto basic = dyn_cast_or_null<LLVM::DIBasicTypeAttr>(type)) {
    uint64_t bits = basic.getSizeInBits();
    switch (basic.getEncoding()) {
    case llvm::dwarf::DW_ATE_float:
      if (bits == 32)
        return Float32Type::get(context);
      if (bits == 64)
        return Float64Type::get(context);
      return {};
    case llvm::dwarf::DW_ATE_boolean:
      return IntegerType::get(context, 8);
    default:
      return bits ? IntegerType::get(context, bits) : Type();
    }
  }
  if (auto derived = dyn_cast_or_null<LLVM::DIDerivedTypeAttr>(type))
    if (derived.getTag() == llvm::dwarf::DW_TAG_pointer_type ||
        derived.getTag() == llvm::dwarf::DW_TAG_reference_type)
      return LLVM::LLVMPointerType::get(context);
  if (auto composite = dyn_cast_or_null<LLVM::DICompositeTypeAttr>(type))
    if (composite.getTag() == llvm::dwarf::DW_TAG_enumeration_type &&
        composite.getSizeInBits())
      return IntegerType::get(context, composite.getSizeInBits());
  return {};
}

/// One field of a C struct: its type and byte offset.
struct Field {
  Type type;
  uint64_t offset;
};

/// The fields of the C struct a function returns, from its debug information.
/// Empty optional when there is none or a field is not a scalar.
std::optional<SmallVector<Field>> declaredReturnFields(LLVM::LLVMFuncOp function) {
  auto fused = dyn_cast<FusedLocWith<LLVM::DISubprogramAttr>>(function.getLoc());
  if (!fused || !fused.getMetadata().getType())
    return std::nullopt;
  ArrayRef<LLVM::DITypeAttr> types = fused.getMetadata().getType().getTypes();
  if (types.empty())
    return std::nullopt;
  LLVM::DITypeAttr result = stripTypedefs(types.front());
  SmallVector<Field> fields;
  if (!result) // void
    return fields;
  auto composite = dyn_cast<LLVM::DICompositeTypeAttr>(result);
  if (!composite || composite.getTag() != llvm::dwarf::DW_TAG_structure_type)
    return std::nullopt;
  for (LLVM::DINodeAttr element : composite.getElements()) {
    auto member = dyn_cast<LLVM::DIDerivedTypeAttr>(element);
    if (!member || member.getTag() != llvm::dwarf::DW_TAG_member)
      continue;
    Type type = scalarType(function.getContext(), member.getBaseType());
    if (!type || member.getOffsetInBits() % 8)
      return std::nullopt;
    fields.push_back({type, member.getOffsetInBits() / 8});
  }
  return fields;
}

/// The source position of a location, without the debug metadata clang's
/// locations carry (functions made from nodes must not share a subprogram).
Location plain(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations()) {
      Location position = plain(inner);
      if (isa<FileLineColLoc>(position))
        return position;
    }
    return UnknownLoc::get(loc.getContext());
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return plain(name.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return plain(callSite.getCallee());
  return loc;
}

/// Where a diagnostic about `op` points: its own source position, else its
/// first user's (clang gives allocas and some constants no line), else its
/// function's.
Location sourceLoc(Operation *op) {
  if (isa<FileLineColLoc>(plain(op->getLoc())))
    return op->getLoc();
  for (Operation *user : op->getUsers())
    if (isa<FileLineColLoc>(plain(user->getLoc())))
      return user->getLoc();
  if (auto function = op->getParentOfType<FunctionOpInterface>())
    return function->getLoc();
  return op->getLoc();
}

//===----------------------------------------------------------------------===//
// The raiser
//===----------------------------------------------------------------------===//

struct Node {
  LLVM::LLVMFuncOp function;
  bool internal = false;
  enum { Unvisited, Visiting, Done } state = Unvisited;
  NodeOpInterface definition;
  /// Inputs: the C parameters (without an sret pointer).
  SmallVector<Type> inputs;
  bool sret = false;
  SmallVector<Type> outputs;
  /// Byte offsets of the outputs in the C return struct (the launch's output
  /// field), packed when the C layout is unknown.
  SmallVector<uint64_t> outputOffsets;
  uint64_t outputSize = 0;
};

class Raiser {
public:
  explicit Raiser(ModuleOp module)
      : module(module), context(module.getContext()), layout(module),
        pointerType(LLVM::LLVMPointerType::get(context)) {}

  LogicalResult run();

private:
  LogicalResult collectNodes();
  LogicalResult raiseNode(StringAttr name, Location usedAt);
  LogicalResult raiseLeaf(Node &node);
  LogicalResult raiseInternal(Node &node);
  LogicalResult raiseHost(LLVM::LLVMFuncOp function);
  LogicalResult applyHint(Node &node, LLVM::CallOp call, Operation *definition);
  LogicalResult applyAttributes(Node &node, LLVM::CallOp call,
                                FunctionOpInterface definition, Block &entry,
                                unsigned firstInput);
  FailureOr<SmallVector<Type>> outputTypesFromDeclaration(Node &node, unsigned count);
  void setOutputLayout(Node &node);
  FailureOr<Node *> nodeOfFunctionOperand(LLVM::CallOp call, unsigned operand);
  SmallVector<Value> loadInputs(OpBuilder &b, Location loc, Node &root, Value args);
  LogicalResult checkArgumentStruct(LLVM::CallOp call, Node &root, Value args,
                                    bool withOutputs);

  ModuleOp module;
  MLIRContext *context;
  DataLayout layout;
  Type pointerType;
  llvm::MapVector<StringAttr, Node> nodes;
  /// The C type of the object a pointer value points to, from the debug
  /// information (a `RootIn *args` variable, a `RootIn args` local).
  DenseMap<Value, LLVM::DITypeAttr> pointees;
};

uint64_t byteSize(const DataLayout &layout, Type type) {
  return layout.getTypeSize(type).getFixedValue();
}

std::optional<int64_t> constantInt(Value value) {
  if (auto constant = value.getDefiningOp<LLVM::ConstantOp>())
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getValue().getSExtValue();
  return std::nullopt;
}

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

LogicalResult Raiser::raiseInternal(Node &node) {
  LLVM::LLVMFuncOp function = node.function;
  StringRef name = function.getName();
  OpBuilder b(function);
  auto internal = InternalOp::create(b, function.getLoc(), name,
                                     FunctionType::get(context, node.inputs, {}));
  internal.setPrivate();
  node.definition = internal;
  Block *body = &internal.getBody().front();
  Block &cEntry = function.getBody().front();
  Evaluation eval;
  for (BlockArgument arg : cEntry.getArguments()) {
    if (node.sret && arg.getArgNumber() == 0)
      continue;
    BlockArgument input = body->getArgument(arg.getArgNumber() - (node.sret ? 1 : 0));
    input.setLoc(arg.getLoc());
    eval.arguments[arg] = input;
  }
  OpBuilder ib = OpBuilder::atBlockEnd(body);
  DenseMap<unsigned, Type> outputTypes;
  auto notConstant = [&](LLVM::CallOp call, StringRef what) {
    return call.emitError() << spelling(call) << " expects " << what
                            << " to be a compile-time constant in '" << name << "'";
  };
  auto handleOf = [&](LLVM::CallOp call, unsigned operand) -> FailureOr<Value> {
    Value handle = eval.handles.lookup(eval.resolve(call.getArgOperands()[operand]));
    if (!handle)
      return call.emitError() << spelling(call) << " expects a node handle returned by "
                                 "__hpvm__createNodeND in '" << name << "'";
    return handle;
  };
  auto constantArg = [&](LLVM::CallOp call, unsigned operand) -> std::optional<int64_t> {
    if (call.getArgOperands().size() <= operand)
      return std::nullopt;
    std::optional<APInt> value = eval.constant(call.getArgOperands()[operand]);
    if (!value)
      return std::nullopt;
    return value->getSExtValue();
  };
  auto bindSuccessor = [&](Block *dest, OperandRange operands) {
    for (auto [arg, value] : llvm::zip(dest->getArguments(), operands)) {
      Value resolved = eval.resolve(value);
      eval.aliases.erase(arg);
      eval.constants.erase(arg);
      if (std::optional<APInt> constant = eval.constant(resolved))
        eval.constants[arg] = *constant;
      else if (Value handle = eval.handles.lookup(resolved))
        eval.handles[arg] = handle;
      else
        eval.aliases[arg] = resolved;
    }
  };

  Block *block = &cEntry;
  Block::iterator it = block->begin();
  for (uint64_t steps = 0;; ++steps) {
    if (steps > 1000000)
      return function.emitError() << "evaluating the graph of '" << name
                                  << "' takes more than 1000000 steps; is a loop "
                                     "bound not constant?";
    Operation &op = *it++;
    Location loc = op.getLoc();
    if (auto constant = dyn_cast<LLVM::ConstantOp>(op)) {
      if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
        eval.constants[constant.getResult()] = integer.getValue();
      continue;
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
      continue;
    }
    if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
      if (std::optional<APInt> cond = eval.constant(select.getCondition())) {
        Value chosen = eval.resolve(cond->isOne() ? select.getTrueValue()
                                                  : select.getFalseValue());
        eval.constants.erase(select.getResult());
        eval.aliases.erase(select.getResult());
        if (std::optional<APInt> constant = eval.constant(chosen))
          eval.constants[select.getResult()] = *constant;
        else if (Value handle = eval.handles.lookup(chosen))
          eval.handles[select.getResult()] = handle;
        else
          eval.aliases[select.getResult()] = chosen;
      }
      continue;
    }
    if (auto br = dyn_cast<LLVM::BrOp>(op)) {
      bindSuccessor(br.getDest(), br.getDestOperands());
      block = br.getDest();
      it = block->begin();
      continue;
    }
    if (auto condBr = dyn_cast<LLVM::CondBrOp>(op)) {
      std::optional<APInt> cond = eval.constant(condBr.getCondition());
      if (!cond)
        return op.emitError() << "the graph described by '" << name
                              << "' depends on a value that is not a compile-time "
                                 "constant (branch condition); internal nodes are "
                                 "static graphs";
      bool taken = cond->isOne();
      Block *dest = taken ? condBr.getTrueDest() : condBr.getFalseDest();
      bindSuccessor(dest, taken ? condBr.getTrueDestOperands()
                                : condBr.getFalseDestOperands());
      block = dest;
      it = block->begin();
      continue;
    }
    if (auto sw = dyn_cast<LLVM::SwitchOp>(op)) {
      std::optional<APInt> value = eval.constant(sw.getValue());
      if (!value)
        return op.emitError() << "the graph described by '" << name
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
      block = dest;
      it = block->begin();
      continue;
    }
    if (isa<LLVM::ReturnOp>(op))
      break;
    if (isa<LLVM::UnreachableOp>(op))
      return op.emitError() << "'" << name << "' reaches unreachable code while its "
                               "graph is evaluated";
    auto call = dyn_cast<LLVM::CallOp>(op);
    if (!call) {
      // Values nobody needs (addresses, undef, float constants, lifetime
      // markers) are fine; memory accesses and other work are not.
      // Allocas alone are harmless too: what is stored in them is not.
      if (isMemoryEffectFree(&op) ||
          isa<LLVM::LifetimeStartOp, LLVM::LifetimeEndOp, LLVM::AssumeOp,
              LLVM::AllocaOp>(op))
        continue;
      if (auto store = dyn_cast<LLVM::StoreOp>(op);
          store && eval.handles.count(eval.resolve(store.getValue())))
        return emitError(sourceLoc(&op))
               << "internal node '" << name << "' stores a node handle of "
               << "__hpvm__createNodeND in memory; node handles may only be "
                  "passed (directly, as values) to __hpvm__bindIn, __hpvm__bindOut "
                  "and __hpvm__edge";
      return emitError(sourceLoc(&op))
             << "internal node '" << name
             << "' may only describe its graph (HPVM graph calls and "
                               "integer arithmetic for extents); found computation ('"
                            << op.getName() << "')";
    }
    ApiCall api = classify(call);
    OperandRange operands = call.getArgOperands();
    switch (api.api) {
    case Api::Hint:
      if (failed(applyHint(node, call, internal)))
        return failure();
      break;
    case Api::Attributes:
      if (failed(applyAttributes(node, call, internal, cEntry, node.sret ? 1 : 0)))
        return failure();
      break;
    case Api::CreateNode: {
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
      FailureOr<Node *> child = nodeOfFunctionOperand(call, 1);
      if (failed(child) ||
          failed(raiseNode((*child)->function.getSymNameAttr(), loc)))
        return failure();
      SmallVector<Value> extents;
      for (Value extent : operands.drop_front(2)) {
        FailureOr<Value> value = materialize(ib, eval, extent, loc);
        if (failed(value))
          return failure();
        extents.push_back(
            arith::IndexCastOp::create(ib, loc, ib.getIndexType(), *value));
      }
      auto create = CreateNodeOp::create(
          ib, loc, mlir::hpvm::NodeType::get(context),
          FlatSymbolRefAttr::get((*child)->function.getSymNameAttr()), extents);
      eval.handles[call.getResult()] = create.getHandle();
      break;
    }
    case Api::BindIn: {
      FailureOr<Value> dest = handleOf(call, 0);
      if (failed(dest))
        return failure();
      std::optional<int64_t> ip = constantArg(call, 1), ic = constantArg(call, 2),
                             stream = constantArg(call, 3);
      if (!ip || !ic || !stream)
        return notConstant(call, "the ports and the stream flag");
      if (*ip < 0 || static_cast<size_t>(*ip) >= node.inputs.size())
        return call.emitError() << "__hpvm__bindIn: input port " << *ip
                                << " of '" << name << "' is out of range; it has "
                                << node.inputs.size() << " inputs";
      if (*ic < 0)
        return call.emitError() << "__hpvm__bindIn: negative child input port " << *ic;
      BindInOp::create(ib, loc, body->getArgument(*ip), *dest,
                       static_cast<uint32_t>(*ic), *stream != 0);
      break;
    }
    case Api::BindOut: {
      FailureOr<Value> source = handleOf(call, 0);
      if (failed(source))
        return failure();
      std::optional<int64_t> oc = constantArg(call, 1), op = constantArg(call, 2),
                             stream = constantArg(call, 3);
      if (!oc || !op || !stream)
        return notConstant(call, "the ports and the stream flag");
      auto create = source->getDefiningOp<CreateNodeOp>();
      Node &child = nodes[create.getNodeAttr().getAttr()];
      if (*oc < 0 || static_cast<size_t>(*oc) >= child.outputs.size())
        return call.emitError() << "__hpvm__bindOut: output port " << *oc << " of '"
                                << create.getNode() << "' is out of range; it has "
                                << child.outputs.size() << " outputs";
      if (*op < 0 || *op > 1024)
        return call.emitError() << "__hpvm__bindOut: output port " << *op
                                << " of '" << name << "' is out of range";
      outputTypes.try_emplace(*op, child.outputs[*oc]);
      BindOutOp::create(ib, loc, *source, static_cast<uint32_t>(*oc),
                        static_cast<uint32_t>(*op), *stream != 0);
      break;
    }
    case Api::Edge: {
      FailureOr<Value> source = handleOf(call, 0), dest = handleOf(call, 1);
      if (failed(source) || failed(dest))
        return failure();
      std::optional<int64_t> repl = constantArg(call, 2), sp = constantArg(call, 3),
                             dp = constantArg(call, 4), stream = constantArg(call, 5);
      if (!repl || !sp || !dp || !stream)
        return notConstant(call, "the edge kind, the ports and the stream flag");
      if (*sp < 0 || *dp < 0)
        return call.emitError("__hpvm__edge: negative port");
      EdgeOp::create(ib, loc, *source, static_cast<uint32_t>(*sp), *dest,
                     static_cast<uint32_t>(*dp),
                     *repl ? Replication::all_to_all : Replication::one_to_one,
                     *stream != 0);
      break;
    }
    case Api::Return:
      return call.emitError() << "__hpvm__return in internal node '" << name
                              << "'; the outputs of an internal node are its "
                                 "__hpvm__bindOut bindings";
    case Api::None:
      return call.emitError() << "internal node '" << name
                              << "' may only describe its graph; found a call of '"
                              << call.getCallee().value_or("a function pointer")
                              << "'";
    default:
      return call.emitError()
             << spelling(call) << " is a "
             << (isHostCall(api.api) ? "host call" : "leaf-node call")
             << " and cannot appear in internal node '" << name << "'";
    }
  }
  // The outputs, by __hpvm__bindOut port.
  unsigned numOutputs = 0;
  for (auto &[port, type] : outputTypes)
    numOutputs = std::max(numOutputs, port + 1);
  for (unsigned port = 0; port < numOutputs; ++port) {
    auto found = outputTypes.find(port);
    if (found == outputTypes.end())
      return function.emitError() << "output " << port << " of internal node '" << name
                                  << "' is never bound (__hpvm__bindOut), but output "
                                  << numOutputs - 1 << " is";
    node.outputs.push_back(found->second);
  }
  FailureOr<SmallVector<Type>> declared = outputTypesFromDeclaration(node, numOutputs);
  if (succeeded(declared) && *declared != ArrayRef<Type>(node.outputs))
    for (auto [index, pair] : llvm::enumerate(llvm::zip(*declared, node.outputs)))
      if (std::get<0>(pair) != std::get<1>(pair))
        return function.emitError()
               << "the return struct of '" << name << "' declares output " << index
               << " as " << std::get<0>(pair) << ", but the child output bound to "
               << "it is a " << std::get<1>(pair);
  internal.setFunctionTypeAttr(
      TypeAttr::get(FunctionType::get(context, node.inputs, node.outputs)));
  setOutputLayout(node);
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
  // Debug intrinsics refer to values the raising replaces; locations keep
  // the source lines.
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

struct RaiseHPVMCPass : public mlir::hpvm::impl::RaiseHPVMCBase<RaiseHPVMCPass> {
  void runOnOperation() override {
    if (failed(Raiser(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
