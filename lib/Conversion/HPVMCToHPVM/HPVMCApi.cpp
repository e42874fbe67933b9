//===- HPVMCApi.cpp - HPVM-C calls, C types and locations for the raising -===//
#include "HPVMCRaiser.h"

#include "HPVM/HPVMC/ApiNames.h"

using namespace mlir;
using namespace mlir::hpvm;
namespace names = ::hpvm::hpvmc_api;

namespace mlir::hpvm::hpvmc {

//===----------------------------------------------------------------------===//
// The HPVM-C API (its names: HPVM/HPVMC/ApiNames.def)
//===----------------------------------------------------------------------===//

ApiCall classify(StringRef name) {
  ApiCall call;
  call.api = llvm::StringSwitch<Api>(name)
#define HPVMC_FUNCTION(ID, NAME) .Case(NAME, Api::ID)
#include "HPVM/HPVMC/ApiNames.def"
                 .Default(Api::None);
  if (call.api != Api::None)
    return call;
  for (auto [prefix, api] : {std::pair{names::InstanceIdPrefix, Api::InstanceId},
                             std::pair{names::NumInstancesPrefix, Api::NumInstances}}) {
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
  if (rest.consume_front(names::AtomicPrefix)) {
    if (llvm::is_contained({"cmpxchg", "add", "sub", "xchg", "inc", "dec", "min", "max",
                            "umin", "umax", "and", "or", "xor"},
                           rest)) {
      call.api = Api::Atomic;
      call.atomic = rest;
    }
    return call;
  }
  // The release's "special functions" on float.
  if (rest.consume_front(names::Prefix) &&
      llvm::is_contained({"floor", "rsqrt", "sqrt", "sin", "cos"}, rest)) {
    call.api = Api::Math;
    call.math = rest;
    return call;
  }
  if (name.starts_with(names::TensorPrefix))
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

/// The C spelling of an API call for diagnostics.
StringRef spelling(LLVM::CallOp call) { return call.getCallee().value_or("?"); }

LogicalResult checkNodeIdUnused(LLVM::CallOp call) {
  if (call.getNumResults() == 0 || call.getResult().use_empty())
    return success();
  return call.emitError() << "the result of __hpvm__node_id is used; it names a node "
                             "for ApproxHPVM's tuner and has no value here (call it "
                             "as a statement)";
}

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

/// Where a node function's definition is: the function's line, or where it
/// has none (line 0: functions outlined from Hetero-C++ regions), its first
/// operation's.
Location definitionLoc(LLVM::LLVMFuncOp function) {
  auto line = dyn_cast<FileLineColLoc>(plain(function.getLoc()));
  if (line && line.getLine() != 0)
    return function.getLoc();
  Location found = function.getLoc();
  function.walk([&](Operation *op) {
    auto position = dyn_cast<FileLineColLoc>(plain(op->getLoc()));
    if (position && position.getLine() != 0) {
      found = op->getLoc();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
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

uint64_t byteSize(const DataLayout &layout, Type type) {
  return layout.getTypeSize(storageType(type)).getFixedValue();
}

Type storageType(Type type) {
  if (isa<TensorType>(type))
    return LLVM::LLVMPointerType::get(type.getContext());
  return type;
}

std::string describeValue(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!value) {
    os << "nothing";
  } else if (std::optional<int64_t> constant = constantInt(value)) {
    os << "the constant " << *constant;
  } else if (auto arg = dyn_cast<BlockArgument>(value)) {
    os << "parameter " << arg.getArgNumber()
       << " of the function (a value known only at run time)";
  } else {
    os << "a value computed at run time ('"
       << value.getDefiningOp()->getName() << "')";
  }
  return text;
}

std::optional<int64_t> constantInt(Value value) {
  if (auto constant = value.getDefiningOp<LLVM::ConstantOp>())
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getValue().getSExtValue();
  return std::nullopt;
}

} // namespace mlir::hpvm::hpvmc
