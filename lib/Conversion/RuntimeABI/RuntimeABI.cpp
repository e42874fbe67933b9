//===- RuntimeABI.cpp - The compiler <-> runtime ABI, defined once --------===//
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::abi;

namespace {
struct FunctionInfo {
  llvm::StringLiteral name;
  llvm::StringLiteral signature;
};
constexpr FunctionInfo kFunctions[] = {
#define HPVM_RUNTIME_FN_INFO(id, name, signature) {#name, signature},
    HPVM_RUNTIME_FUNCTIONS(HPVM_RUNTIME_FN_INFO)
    HPVM_LIBC_FUNCTIONS(HPVM_RUNTIME_FN_INFO)
#undef HPVM_RUNTIME_FN_INFO
};
static_assert(std::size(kFunctions) == kNumRuntimeFunctions);
constexpr FunctionInfo kCallbacks[] = {
#define HPVM_RUNTIME_FN_INFO(id, name, signature) {#name, signature},
    HPVM_RUNTIME_CALLBACKS(HPVM_RUNTIME_FN_INFO)
#undef HPVM_RUNTIME_FN_INFO
};

/// The LLVM function type of a signature code: "r(ab...)", the result's code
/// then the parameters' in parentheses.
LLVM::LLVMFunctionType parseSignature(MLIRContext *context, StringRef signature) {
  assert(signature.size() >= 3 && signature[1] == '(' && signature.back() == ')' &&
         "malformed runtime signature");
  SmallVector<Type> params;
  for (char code : signature.drop_front(2).drop_back())
    params.push_back(abi::getTypeOfCode(context, code));
  return LLVM::LLVMFunctionType::get(abi::getTypeOfCode(context, signature[0]), params);
}

Type pointer(MLIRContext *context) { return LLVM::LLVMPointerType::get(context); }
Type i32(MLIRContext *context) { return IntegerType::get(context, 32); }
Type i64(MLIRContext *context) { return IntegerType::get(context, 64); }
Type triple(MLIRContext *context) { return LLVM::LLVMArrayType::get(i64(context), 3); }

/// The versions of graph nodes and of pipeline stages: { i32 device, ptr fn }.
LLVM::LLVMStructType versionType(MLIRContext *context) {
  return LLVM::LLVMStructType::getLiteral(context, {i32(context), pointer(context)});
}
} // namespace

LLVM::LLVMStructType InstanceRange::get(MLIRContext *context) {
  Type t = triple(context);
  return LLVM::LLVMStructType::getLiteral(context, {t, t, t, i32(context), i32(context)});
}

LLVM::LLVMStructType NodeVersion::get(MLIRContext *context) { return versionType(context); }

LLVM::LLVMStructType StageVersion::get(MLIRContext *context) { return versionType(context); }

LLVM::LLVMStructType KernelParam::get(MLIRContext *context) {
  Type p = pointer(context);
  return LLVM::LLVMStructType::getLiteral(
      context, {i32(context), i32(context), i64(context), p, p});
}

LLVM::LLVMStructType ModuleImage::get(MLIRContext *context) {
  Type p = pointer(context);
  return LLVM::LLVMStructType::getLiteral(
      context, {i32(context), p, i64(context), p, i64(context)});
}

LLVM::LLVMStructType KernelSite::get(MLIRContext *context) {
  Type p = pointer(context);
  return LLVM::LLVMStructType::getLiteral(context, {p, p, p, p, p, p});
}

LLVM::LLVMStructType TensorLibraryCall::get(MLIRContext *context) {
  auto array = [&](unsigned n) { return LLVM::LLVMArrayType::get(i64(context), n); };
  Type i = i32(context);
  return LLVM::LLVMStructType::getLiteral(
      context, {i, i, Float64Type::get(context), array(4), array(3), array(2), array(2),
                i64(context), array(4), array(4), i, i, i, i, i, pointer(context),
                i64(context)});
}

LLVM::LLVMArrayType Uint64Array::get(MLIRContext *context, unsigned size) {
  return LLVM::LLVMArrayType::get(i64(context), size);
}

Value Uint64Array::getElementAddress(OpBuilder &b, Location loc, LLVM::LLVMArrayType type,
                                     Value base, int32_t index) {
  return LLVM::GEPOp::create(b, loc, pointer(b.getContext()), type, base,
                             ArrayRef<LLVM::GEPArg>{0, index});
}

Value abi::extractMemRefField(OpBuilder &b, Location loc, Value descriptor,
                              MemRefDescriptorField::Field field, std::optional<int64_t> d) {
  if (!d)
    return LLVM::ExtractValueOp::create(b, loc, descriptor, static_cast<int64_t>(field));
  return LLVM::ExtractValueOp::create(b, loc, descriptor,
                                      ArrayRef<int64_t>{static_cast<int64_t>(field), *d});
}

Value abi::insertMemRefField(OpBuilder &b, Location loc, Value descriptor,
                             MemRefDescriptorField::Field field, Value value,
                             std::optional<int64_t> d) {
  SmallVector<int64_t, 2> position{static_cast<int64_t>(field)};
  if (d)
    position.push_back(*d);
  return LLVM::InsertValueOp::create(b, loc, descriptor, value, position);
}

Value abi::getFieldAddress(OpBuilder &b, Location loc, LLVM::LLVMStructType type, Value base,
                           ArrayRef<LLVM::GEPArg> indices, unsigned leadingTriples) {
  auto constant = [](LLVM::GEPArg index) -> std::optional<int32_t> {
    if (isa<LLVM::GEPConstantIndex>(index))
      return static_cast<int32_t>(cast<LLVM::GEPConstantIndex>(index));
    return std::nullopt;
  };
  // The first field (and the first element of a leading array) is at the
  // base itself.
  if (llvm::all_of(indices, [&](LLVM::GEPArg index) { return constant(index) == 0; }))
    return base;
  // An element of a leading i64[3] array as an i64 word.
  if (leadingTriples && indices.size() == 2) {
    std::optional<int32_t> field = constant(indices[0]), element = constant(indices[1]);
    if (field && element && *field < static_cast<int32_t>(leadingTriples) && *element < 3)
      return LLVM::GEPOp::create(b, loc, pointer(b.getContext()), i64(b.getContext()), base,
                                 ArrayRef<LLVM::GEPArg>{*field * 3 + *element});
  }
  SmallVector<LLVM::GEPArg> all{0};
  all.append(indices.begin(), indices.end());
  return LLVM::GEPOp::create(b, loc, pointer(b.getContext()), type, base, all);
}

SmallVector<KernelParamGroup, 6> abi::getKernelParamGroups(KernelShape shape) {
  SmallVector<KernelParamGroup, 6> groups{KernelParamGroup::Inputs};
  if (shape == KernelShape::Tensor) {
    groups.append({KernelParamGroup::Constants, KernelParamGroup::OutputBuffers,
                   KernelParamGroup::GridExtents, KernelParamGroup::Outputs,
                   KernelParamGroup::WorkgroupMemory});
    return groups;
  }
  if (shape == KernelShape::Leaf)
    groups.push_back(KernelParamGroup::GridExtents);
  groups.append({KernelParamGroup::AncestorQueries, KernelParamGroup::Outputs,
                 KernelParamGroup::PerInstanceOutputs,
                 KernelParamGroup::WorkgroupMemory});
  return groups;
}

DenseI64ArrayAttr abi::getPerInstanceMasksAttr(MLIRContext *context,
                                               PerInstanceMasks masks) {
  return DenseI64ArrayAttr::get(context, {static_cast<int64_t>(masks.inputs),
                                          static_cast<int64_t>(masks.outputs)});
}

std::optional<PerInstanceMasks> abi::getPerInstanceMasks(DenseI64ArrayAttr attr) {
  if (!attr || attr.size() != 2)
    return std::nullopt;
  return PerInstanceMasks{static_cast<uint64_t>(attr[0]), static_cast<uint64_t>(attr[1])};
}

StringRef abi::getName(RuntimeFn fn) {
  return kFunctions[static_cast<unsigned>(fn)].name;
}

StringRef abi::getSignature(RuntimeFn fn) {
  return kFunctions[static_cast<unsigned>(fn)].signature;
}

Type abi::getTypeOfCode(MLIRContext *context, char code) {
  switch (code) {
  case 'v':
    return LLVM::LLVMVoidType::get(context);
  case 'p':
    return pointer(context);
  case 'i':
    return i32(context);
  case 'l':
    return i64(context);
  case 'f':
    return Float32Type::get(context);
  case 'd':
    return Float64Type::get(context);
  }
  llvm_unreachable("unknown runtime signature code");
}

LLVM::LLVMFunctionType abi::getFunctionType(MLIRContext *context, RuntimeFn fn) {
  return parseSignature(context, getSignature(fn));
}

StringRef abi::getName(RuntimeCallback callback) {
  return kCallbacks[static_cast<unsigned>(callback)].name;
}

StringRef abi::getSignature(RuntimeCallback callback) {
  return kCallbacks[static_cast<unsigned>(callback)].signature;
}

LLVM::LLVMFunctionType abi::getFunctionType(MLIRContext *context,
                                            RuntimeCallback callback) {
  return parseSignature(context, getSignature(callback));
}

FailureOr<LLVM::LLVMFuncOp> abi::lookupOrCreate(OpBuilder &b, Operation *module,
                                               RuntimeFn fn,
                                               SymbolTableCollection *symbolTables) {
  LLVM::LLVMFunctionType type = getFunctionType(b.getContext(), fn);
  // The C library's names are reserved (upstream's lookupOrCreateMallocFn).
  bool reserved = fn == RuntimeFn::Malloc || fn == RuntimeFn::Free;
  return LLVM::lookupOrCreateFn(b, module, getName(fn), type.getParams(),
                                type.getReturnType(), /*isVarArg=*/false,
                                reserved, symbolTables);
}

Value abi::call(OpBuilder &b, Location loc, Operation *module, RuntimeFn fn,
                ValueRange args, SymbolTableCollection *symbolTables) {
  FailureOr<LLVM::LLVMFuncOp> function = lookupOrCreate(b, module, fn, symbolTables);
  if (failed(function))
    return {};
  auto result = LLVM::CallOp::create(b, loc, *function, args);
  return result.getNumResults() ? result.getResult() : Value();
}
