//===- hpvm-runtime-abi-test.cpp - RuntimeABI.h against hpvm_rt.h ---------===//
//
// The compiler builds the runtime's structs and declares its functions from
// include/HPVM/Conversion/RuntimeABI.h; the runtime is compiled from
// runtime/include/hpvm/hpvm_rt.h. This program checks one against the other:
//
//  * each struct: the size, alignment, field offsets and field sizes of the
//    ABI's LLVM type (llvm::DataLayout of the host target) against sizeof,
//    alignof and offsetof of the C struct, and the number of scalars in both
//    (arrays counted by element; the C count by aggregate initialization), so
//    that a field added to the C struct fails even where it fits in padding;
//  * each struct's accessors (getFieldAddress, getFieldGEP,
//    getElementFieldAddress): the byte each field's address is at, against
//    offsetof; the arrays of uint64_t; the per-instance masks' attribute;
//  * each function of HPVM_RUNTIME_FUNCTIONS (HPVM_LIBC_FUNCTIONS): that
//    hpvm_rt.h (<stdlib.h>) declares it (else this file does not compile),
//    with the parameter count and the types the ABI's signature says; and
//    each function pointer type of HPVM_RUNTIME_CALLBACKS the same way.
//
// Prints one line per struct and function and exits 1 on a mismatch.
//
//===----------------------------------------------------------------------===//
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Target/LLVMIR/TypeToLLVM.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace mlir;
using namespace mlir::hpvm;

namespace {

int failures = 0;

void fail(const llvm::Twine &message) {
  llvm::outs() << "error: " << message << "\n";
  ++failures;
}

//===----------------------------------------------------------------------===//
// Structs
//===----------------------------------------------------------------------===//

/// Converts to any type: counts the scalars a C aggregate is initialized
/// from (brace elision spreads it over the elements of array fields).
struct Any {
  template <typename T>
  operator T() const;
};

template <typename S, typename = void, typename... A>
struct ScalarCount : std::integral_constant<size_t, sizeof...(A) - 1> {};
template <typename S, typename... A>
struct ScalarCount<S, std::void_t<decltype(S{std::declval<A>()...})>, A...>
    : ScalarCount<S, void, A..., Any> {};

/// The scalars of a C struct: the longest list of initializers it takes.
template <typename S>
constexpr size_t scalarCount() {
  return ScalarCount<S, void, Any>::value;
}

/// The scalars of an LLVM type (array elements one by one).
uint64_t scalarCount(llvm::Type *type) {
  if (auto *array = llvm::dyn_cast<llvm::ArrayType>(type))
    return array->getNumElements() * scalarCount(array->getElementType());
  if (auto *structType = llvm::dyn_cast<llvm::StructType>(type)) {
    uint64_t count = 0;
    for (llvm::Type *element : structType->elements())
      count += scalarCount(element);
    return count;
  }
  return 1;
}

/// One field of a C struct: the ABI's index for it, and where C puts it.
struct CField {
  int32_t index;
  const char *name;
  uint64_t offset;
  uint64_t size;
};
#define HPVM_FIELD(S, index, member)                                           \
  CField { index, #member, offsetof(S, member), sizeof(S::member) }

struct Checker {
  MLIRContext &context;
  llvm::LLVMContext &llvmContext;
  const llvm::DataLayout &layout;

  template <typename S, typename A>
  void checkStruct(StringRef name, LLVM::LLVMStructType type, int32_t numFields,
                   std::vector<CField> fields) {
    LLVM::TypeToLLVMIRTranslator translator(llvmContext);
    auto *llvmType = llvm::cast<llvm::StructType>(translator.translateType(type));
    const llvm::StructLayout *structLayout = layout.getStructLayout(llvmType);
    int before = failures;
    uint64_t size = structLayout->getSizeInBytes();
    uint64_t align = structLayout->getAlignment().value();
    if (size != sizeof(S))
      fail(name + ": the ABI's type has " + llvm::Twine(size) + " bytes, sizeof is " +
           llvm::Twine(sizeof(S)));
    if (align != alignof(S))
      fail(name + ": the ABI's type is aligned to " + llvm::Twine(align) +
           ", alignof is " + llvm::Twine(alignof(S)));
    if (static_cast<int32_t>(llvmType->getNumElements()) != numFields ||
        static_cast<int32_t>(fields.size()) != numFields)
      fail(name + ": the ABI's type has " + llvm::Twine(llvmType->getNumElements()) +
           " fields, its field names " + llvm::Twine(numFields) + ", this test checks " +
           llvm::Twine(fields.size()));
    uint64_t scalars = scalarCount(llvmType);
    if (scalars != scalarCount<S>())
      fail(name + ": the ABI's type holds " + llvm::Twine(scalars) +
           " scalars, the C struct " + llvm::Twine(scalarCount<S>()) +
           " (a field added or removed?)");
    for (const CField &field : fields) {
      if (field.index < 0 || field.index >= static_cast<int32_t>(llvmType->getNumElements()))
        continue;
      uint64_t offset = structLayout->getElementOffset(field.index);
      uint64_t fieldSize =
          layout.getTypeAllocSize(llvmType->getElementType(field.index)).getFixedValue();
      if (offset != field.offset || fieldSize != field.size)
        fail(name + "." + field.name + ": the ABI's field " + llvm::Twine(field.index) +
             " is at " + llvm::Twine(offset) + " (" + llvm::Twine(fieldSize) +
             " bytes), offsetof is " + llvm::Twine(field.offset) + " (" +
             llvm::Twine(field.size) + " bytes)");
    }
    if (failures == before)
      llvm::outs() << "struct " << name << ": " << size << " bytes, "
                   << llvmType->getNumElements() << " fields: ok\n";
    checkAccessors<A>(name, fields);
  }

  /// The byte offset from `base` of `address`, an accessor's result: 0 for
  /// `base` itself, else its GEP's constant offset (UINT64_MAX for any other
  /// form).
  uint64_t offsetFrom(Value base, Value address) {
    if (address == base)
      return 0;
    auto gep = address.getDefiningOp<LLVM::GEPOp>();
    if (!gep || gep.getBase() != base || !gep.getDynamicIndices().empty())
      return UINT64_MAX;
    LLVM::TypeToLLVMIRTranslator translator(llvmContext);
    SmallVector<llvm::Value *> indices;
    for (int32_t index : gep.getRawConstantIndices())
      indices.push_back(llvm::ConstantInt::get(llvm::Type::getInt32Ty(llvmContext), index));
    return layout.getIndexedOffsetInType(translator.translateType(gep.getElemType()),
                                         indices);
  }

  /// A function `void accessors(ptr base)` in a module of its own, the builder at its entry:
  /// where the accessors under test build their addresses of `base`.
  struct Scratch {
    OwningOpRef<ModuleOp> module;
    OpBuilder builder;
    Value base;
  };
  Scratch makeScratch() {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto function = LLVM::LLVMFuncOp::create(
        b, loc, "accessors",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&context),
                                    {LLVM::LLVMPointerType::get(&context)}));
    Block *entry = function.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    return {std::move(module), b, entry->getArgument(0)};
  }

  /// Each field's accessors (abi::getFieldAddress<A> and getFieldGEP<A>, at
  /// an array field's last element; abi::getElementFieldAddress<A> in
  /// element 1 of an array of two) reach it where C puts it.
  template <typename A>
  void checkAccessors(StringRef name, const std::vector<CField> &fields) {
    Scratch scratch = makeScratch();
    OpBuilder &b = scratch.builder;
    Location loc = b.getUnknownLoc();
    Value base = scratch.base;
    auto pointer = LLVM::LLVMPointerType::get(&context);
    auto arrayOfTwo = LLVM::LLVMArrayType::get(A::get(&context), 2);
    uint64_t structSize = offsetFrom(
        base, LLVM::GEPOp::create(b, loc, pointer, A::get(&context), base,
                                  ArrayRef<LLVM::GEPArg>{1}));
    int before = failures;
    for (const CField &field : fields) {
      auto id = static_cast<typename A::Field>(field.index);
      std::optional<int32_t> last;
      uint64_t expected = field.offset;
      if (auto array = dyn_cast<LLVM::LLVMArrayType>(A::get(&context).getBody()[field.index])) {
        last = static_cast<int32_t>(array.getNumElements() - 1);
        expected += field.size / array.getNumElements() * *last;
      }
      auto check = [&](StringRef accessor, Value address, uint64_t at) {
        uint64_t offset = offsetFrom(base, address);
        if (offset != at)
          fail(name + "." + field.name + ": " + accessor + " reaches byte " +
               llvm::Twine(offset) + ", C puts it at " + llvm::Twine(at));
      };
      check("getFieldAddress", abi::getFieldAddress<A>(b, loc, base, id, last), expected);
      check("getFieldGEP", abi::getFieldGEP<A>(b, loc, base, id, last), expected);
      if (!last)
        check("getElementFieldAddress",
              abi::getElementFieldAddress<A>(b, loc, arrayOfTwo, base, 1, id),
              structSize + field.offset);
    }
    if (failures == before)
      llvm::outs() << "accessors " << name << ": ok\n";
  }

  /// The arrays of uint64_t and the per-instance masks.
  void checkOtherAccessors() {
    Scratch scratch = makeScratch();
    OpBuilder &b = scratch.builder;
    Location loc = b.getUnknownLoc();
    Value base = scratch.base;
    int before = failures;
    LLVM::TypeToLLVMIRTranslator translator(llvmContext);
    auto extents = abi::Uint64Array::get(&context);
    if (layout.getTypeAllocSize(translator.translateType(extents)) != sizeof(uint64_t[3]))
      fail("Uint64Array: not the size of uint64_t[3]");
    if (offsetFrom(base, abi::Uint64Array::getElementAddress(b, loc, extents, base, 2)) !=
        2 * sizeof(uint64_t))
      fail("Uint64Array: element 2 is not at byte 16");
    std::optional<abi::PerInstanceMasks> masks =
        abi::getPerInstanceMasks(abi::getPerInstanceMasksAttr(&context, {5, 2}));
    if (!masks || masks->inputs != 5 || masks->outputs != 2 ||
        abi::getPerInstanceMasks(DenseI64ArrayAttr()))
      fail("PerInstanceMasks: the attribute does not round-trip");
    if (failures == before)
      llvm::outs() << "accessors Uint64Array, PerInstanceMasks: ok\n";
  }

  void checkStructs() {
    using namespace mlir::hpvm::abi;
    checkStruct<hpvm_rt_instance_range_t, InstanceRange>(
        InstanceRange::cName, InstanceRange::get(&context), InstanceRange::NumFields,
        {HPVM_FIELD(hpvm_rt_instance_range_t, InstanceRange::Begin, begin),
         HPVM_FIELD(hpvm_rt_instance_range_t, InstanceRange::End, end),
         HPVM_FIELD(hpvm_rt_instance_range_t, InstanceRange::Extent, extent),
         HPVM_FIELD(hpvm_rt_instance_range_t, InstanceRange::Rank, rank),
         HPVM_FIELD(hpvm_rt_instance_range_t, InstanceRange::WorkerIndex, worker_index)});
    checkStruct<hpvm_rt_node_version_t, NodeVersion>(
        NodeVersion::cName, NodeVersion::get(&context), NodeVersion::NumFields,
        {HPVM_FIELD(hpvm_rt_node_version_t, NodeVersion::Device, device),
         HPVM_FIELD(hpvm_rt_node_version_t, NodeVersion::Fn, fn)});
    checkStruct<hpvm_rt_stage_version_t, StageVersion>(
        StageVersion::cName, StageVersion::get(&context), StageVersion::NumFields,
        {HPVM_FIELD(hpvm_rt_stage_version_t, StageVersion::Device, device),
         HPVM_FIELD(hpvm_rt_stage_version_t, StageVersion::Fn, fn)});
    checkStruct<hpvm_rt_kernel_param_t, KernelParam>(
        KernelParam::cName, KernelParam::get(&context), KernelParam::NumFields,
        {HPVM_FIELD(hpvm_rt_kernel_param_t, KernelParam::Kind, kind),
         HPVM_FIELD(hpvm_rt_kernel_param_t, KernelParam::Access, access),
         HPVM_FIELD(hpvm_rt_kernel_param_t, KernelParam::Size, size),
         HPVM_FIELD(hpvm_rt_kernel_param_t, KernelParam::Value, value),
         HPVM_FIELD(hpvm_rt_kernel_param_t, KernelParam::Host, host)});
    checkStruct<hpvm_rt_module_image_t, ModuleImage>(
        ModuleImage::cName, ModuleImage::get(&context), ModuleImage::NumFields,
        {HPVM_FIELD(hpvm_rt_module_image_t, ModuleImage::Format, format),
         HPVM_FIELD(hpvm_rt_module_image_t, ModuleImage::Data, data),
         HPVM_FIELD(hpvm_rt_module_image_t, ModuleImage::Size, size),
         HPVM_FIELD(hpvm_rt_module_image_t, ModuleImage::FallbackData, fallback_data),
         HPVM_FIELD(hpvm_rt_module_image_t, ModuleImage::FallbackSize, fallback_size)});
    checkStruct<hpvm_rt_kernel_site_t, KernelSite>(
        KernelSite::cName, KernelSite::get(&context), KernelSite::NumFields,
        {HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::Node, node),
         HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::Kernel, kernel),
         HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::Cuda, cuda),
         HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::OpenCL, opencl),
         HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::State, state),
         HPVM_FIELD(hpvm_rt_kernel_site_t, KernelSite::Library, library)});
    using Call = hpvm_rt_tensor_library_call_t;
    checkStruct<Call, TensorLibraryCall>(
        TensorLibraryCall::cName, TensorLibraryCall::get(&context),
        TensorLibraryCall::NumFields,
        {HPVM_FIELD(Call, TensorLibraryCall::Op, op),
         HPVM_FIELD(Call, TensorLibraryCall::Activation, activation),
         HPVM_FIELD(Call, TensorLibraryCall::Clip, clip),
         HPVM_FIELD(Call, TensorLibraryCall::Sizes, sizes),
         HPVM_FIELD(Call, TensorLibraryCall::Filter, filter),
         HPVM_FIELD(Call, TensorLibraryCall::Padding, padding),
         HPVM_FIELD(Call, TensorLibraryCall::Strides, strides),
         HPVM_FIELD(Call, TensorLibraryCall::Groups, groups),
         HPVM_FIELD(Call, TensorLibraryCall::Output, output),
         HPVM_FIELD(Call, TensorLibraryCall::Bias, bias),
         HPVM_FIELD(Call, TensorLibraryCall::XParam, x_param),
         HPVM_FIELD(Call, TensorLibraryCall::WParam, w_param),
         HPVM_FIELD(Call, TensorLibraryCall::BiasParam, bias_param),
         HPVM_FIELD(Call, TensorLibraryCall::OutputParam, output_param),
         HPVM_FIELD(Call, TensorLibraryCall::ScalarsParam, scalars_param),
         HPVM_FIELD(Call, TensorLibraryCall::Scalars, scalars),
         HPVM_FIELD(Call, TensorLibraryCall::ScalarsSize, scalars_size)});
  }
};

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

/// The signature code of a C type (RuntimeABI.h), '?' for none.
template <typename T>
constexpr char codeOf() {
  if constexpr (std::is_void_v<T>)
    return 'v';
  else if constexpr (std::is_pointer_v<T>)
    return 'p';
  else if constexpr (std::is_same_v<T, float>)
    return 'f';
  else if constexpr (std::is_same_v<T, double>)
    return 'd';
  else if constexpr ((std::is_integral_v<T> && !std::is_same_v<T, bool>) || std::is_enum_v<T>)
    return sizeof(T) == 4 ? 'i' : sizeof(T) == 8 ? 'l' : '?';
  else
    return '?';
}

/// The signature code of a C prototype.
template <typename R, typename... A>
std::string signatureOf(R (*)(A...)) {
  return std::string{codeOf<R>(), '('} + std::string{codeOf<A>()...} + ")";
}

unsigned parameterCount(StringRef signature) { return signature.size() - 3; }

void checkFunction(abi::RuntimeFn fn, StringRef cName, const std::string &cSignature) {
  StringRef name = abi::getName(fn), signature = abi::getSignature(fn);
  if (name != cName) {
    fail("function " + name + ": the table's name differs from " + cName);
    return;
  }
  if (parameterCount(signature) != parameterCount(cSignature)) {
    fail("function " + name + ": the ABI has " + llvm::Twine(parameterCount(signature)) +
         " parameters, the C prototype " + llvm::Twine(parameterCount(cSignature)));
    return;
  }
  if (signature != cSignature) {
    fail("function " + name + ": the ABI's signature " + signature +
         " differs from the C prototype's " + cSignature);
    return;
  }
  llvm::outs() << "function " << name << " " << signature << ": ok\n";
}

void checkFunctions() {
#define HPVM_CHECK_FUNCTION(id, name, signature)                               \
  checkFunction(abi::RuntimeFn::id, #name, signatureOf(&::name));
  HPVM_RUNTIME_FUNCTIONS(HPVM_CHECK_FUNCTION)
  HPVM_LIBC_FUNCTIONS(HPVM_CHECK_FUNCTION)
#undef HPVM_CHECK_FUNCTION
}

void checkCallback(abi::RuntimeCallback callback, StringRef cName,
                   const std::string &cSignature) {
  StringRef name = abi::getName(callback), signature = abi::getSignature(callback);
  if (name != cName)
    fail("callback " + name + ": the table's name differs from " + cName);
  else if (signature != cSignature)
    fail("callback " + name + ": the ABI's signature " + signature +
         " differs from the C typedef's " + cSignature);
  else
    llvm::outs() << "callback " << name << " " << signature << ": ok\n";
}

void checkCallbacks() {
#define HPVM_CHECK_CALLBACK(id, name, signature)                               \
  checkCallback(abi::RuntimeCallback::id, #name, signatureOf(static_cast<name>(nullptr)));
  HPVM_RUNTIME_CALLBACKS(HPVM_CHECK_CALLBACK)
#undef HPVM_CHECK_CALLBACK
}

} // namespace

int main() {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    llvm::errs() << "error: no target for " << triple.str() << ": " << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), std::nullopt));
  llvm::DataLayout layout = machine->createDataLayout();
  llvm::outs() << "host " << triple.str() << "\n";

  MLIRContext context;
  context.loadDialect<LLVM::LLVMDialect>();
  llvm::LLVMContext llvmContext;
  Checker checker{context, llvmContext, layout};
  checker.checkStructs();
  checker.checkOtherAccessors();
  checkFunctions();
  checkCallbacks();

  if (failures) {
    llvm::outs() << "runtime ABI: " << failures << " mismatches with hpvm_rt.h\n";
    return 1;
  }
  llvm::outs() << "runtime ABI: 7 structs, " << abi::kNumRuntimeFunctions
               << " functions and 4 callbacks match hpvm_rt.h\n";
  return 0;
}
