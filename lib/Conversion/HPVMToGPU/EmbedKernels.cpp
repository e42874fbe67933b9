//===- EmbedKernels.cpp - The hpvm-embed-kernels pass ---------------------===//
// Compiles the kernel modules of convert-hpvm-to-gpu for each device, embeds
// the images in the host module and gives every kernel node its site global
// (hpvm_rt_kernel_site_t), which the CPU lowering passes to
// hpvm_rt_kernel_run.
#include "KernelSerialization.h"
#include "TensorLibraryCalls.h"

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "HPVM/Conversion/DebugScopes.h"
#include "hpvm/hpvm_rt.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUToLLVMSPV/GPUToLLVMSPVPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMEMBEDKERNELS
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

enum class Device { CUDA, OpenCL };

StringRef getDeviceName(Device device) {
  return device == Device::CUDA ? "cuda" : "opencl";
}

/// The symbol of CUDA's dynamic shared memory in the kernel modules.
constexpr StringLiteral kDynamicSharedName = "__hpvm_dynamic_shared";

/// CUDA kernels take no pointers to shared memory: each work-group memory
/// parameter of the kernels (a pointer in address space 3, OpenCL's __local)
/// becomes the byte offset of the buffer in the launch's dynamic shared
/// memory, which the runtime lays out.
void useDynamicSharedMemory(gpu::GPUModuleOp kernels) {
  MLIRContext *context = kernels.getContext();
  auto workgroupPointer = LLVM::LLVMPointerType::get(context, 3);
  auto i64 = IntegerType::get(context, 64);
  auto i8 = IntegerType::get(context, 8);
  LLVM::GlobalOp shared;
  for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
    if (!kernel.isKernel() ||
        !llvm::is_contained(kernel.getArgumentTypes(), workgroupPointer))
      continue;
    OpBuilder b(context);
    if (!shared) {
      b.setInsertionPointToStart(kernels.getBody());
      shared = LLVM::GlobalOp::create(
          b, kernels.getLoc(), LLVM::LLVMArrayType::get(i8, 0),
          /*isConstant=*/false, LLVM::Linkage::External, kDynamicSharedName,
          Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    }
    Block &entry = kernel.getBody().front();
    b.setInsertionPointToStart(&entry);
    Value base = LLVM::AddressOfOp::create(b, kernel.getLoc(), shared);
    for (BlockArgument argument : entry.getArguments()) {
      if (argument.getType() != workgroupPointer)
        continue;
      argument.setType(i64);
      // The runtime aligns each buffer to 16 bytes: said so (the mask changes
      // nothing), LLVM may read and write it in vectors (ld.shared.v4).
      Value aligned = LLVM::AndOp::create(
          b, kernel.getLoc(), argument,
          LLVM::ConstantOp::create(b, kernel.getLoc(), i64,
                                   b.getI64IntegerAttr(-16)));
      Value memory = LLVM::GEPOp::create(b, kernel.getLoc(), workgroupPointer,
                                         i8, base, ValueRange{aligned});
      argument.replaceAllUsesExcept(memory, aligned.getDefiningOp());
    }
    kernel.setFunctionType(FunctionType::get(
        context, entry.getArgumentTypes(), kernel.getResultTypes()));
  }
}

/// The lowering of a kernel module for `device` to the llvm dialect (and
/// NVVM), on the module holding it: a nested pipeline of hpvm-embed-kernels,
/// so that --mlir-print-ir-after-all and --mlir-timing show its steps.
OpPassManager buildKernelLowering(Device device) {
  OpPassManager pm(ModuleOp::getOperationName());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  if (device == Device::CUDA) {
    ConvertGpuOpsToNVVMOpsOptions options;
    options.indexBitwidth = 64;
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(options));
    // What libdevice has no function for (integer math: math.absi, ctlz, ...)
    // is left for LLVM's own intrinsics, which the NVPTX backend lowers.
    pm.addPass(createConvertMathToLLVMPass());
  } else {
    // Branches first: the kernel conversion rewrites the signatures of all
    // blocks, so their operands must already be in LLVM types.
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertIndexToLLVMPass());
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createConvertControlFlowToLLVMPass());
    ConvertGpuOpsToLLVMSPVOpsOptions options;
    options.use64bitIndex = true;
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToLLVMSPVOps(options));
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  }
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (device == Device::CUDA) {
    // Line directives (.loc) from the ops' source locations, as `nvcc
    // -lineinfo` gives them: profilers show a kernel's time by source line.
    LLVM::DIScopeForLLVMFuncOpPassOptions lines;
    lines.emissionKind = LLVM::DIEmissionKind::DebugDirectivesOnly;
    pm.addPass(LLVM::createDIScopeForLLVMFuncOpPass(lines));
  }
  return pm;
}

struct EmbedKernelsPass
    : public hpvm::impl::HPVMEmbedKernelsBase<EmbedKernelsPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<NVVM::NVVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    cudaLowering.getDependentDialects(registry);
    openclLowering.getDependentDialects(registry);
  }

  void runOnOperation() override;

private:
  /// The image of `kernels` for `device`, or failure (errors emitted).
  FailureOr<std::string> compile(gpu::GPUModuleOp kernels, Device device);
  /// A constant global holding `bytes` (and a NUL after them).
  LLVM::GlobalOp createBytes(OpBuilder &b, Location loc, StringRef name,
                             StringRef bytes);
  /// A hpvm_rt_module_image_t of `format` over `data`, with the optional
  /// SPIR 1.2 `fallback`.
  LLVM::GlobalOp createImage(OpBuilder &b, Location loc, StringRef name,
                             int32_t format, LLVM::GlobalOp data,
                             uint64_t size, LLVM::GlobalOp fallback,
                             uint64_t fallbackSize);
  /// The hpvm_rt_kernel_site_t of `node` running `kernel`.
  LLVM::GlobalOp createSite(OpBuilder &b, Location loc, StringRef node,
                            StringRef kernel, LLVM::GlobalOp cuda,
                            LLVM::GlobalOp opencl, LLVM::GlobalOp library);
  std::string uniqueName(const Twine &base);

  SymbolTable *symbolTable = nullptr;
  OpPassManager cudaLowering = buildKernelLowering(Device::CUDA);
  OpPassManager openclLowering = buildKernelLowering(Device::OpenCL);
};

std::string EmbedKernelsPass::uniqueName(const Twine &base) {
  std::string name = base.str();
  for (unsigned suffix = 1; symbolTable->lookup(name); ++suffix)
    name = (base + "_" + Twine(suffix)).str();
  return name;
}

/// The math functions convert-math-to-llvm has no LLVM intrinsic for become
/// calls of OpenCL's built-ins, by their Itanium-mangled names
/// (`_Z3erff` is erf(float)), which LLVM's SPIR-V backend turns into
/// OpenCL.std instructions. (On CUDA libdevice has them.)
static void useOpenCLBuiltins(gpu::GPUModuleOp kernels) {
  OpBuilder b(kernels.getContext());
  kernels.walk([&](Operation *op) {
    StringRef name = llvm::StringSwitch<StringRef>(op->getName().getStringRef())
                         .Case("math.erf", "erf")
                         .Case("math.erfc", "erfc")
                         .Case("math.cbrt", "cbrt")
                         .Case("math.asinh", "asinh")
                         .Case("math.acosh", "acosh")
                         .Case("math.atanh", "atanh")
                         .Default("");
    if (name.empty() || op->getNumOperands() != 1 || op->getNumResults() != 1)
      return;
    Type type = op->getResult(0).getType();
    if (!type.isF32() && !type.isF64())
      return;
    std::string mangled = ("_Z" + Twine(name.size()) + name +
                           (type.isF32() ? "f" : "d"))
                              .str();
    auto function = kernels.lookupSymbol<LLVM::LLVMFuncOp>(mangled);
    if (!function) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kernels.getBody());
      function = LLVM::LLVMFuncOp::create(
          b, op->getLoc(), mangled, LLVM::LLVMFunctionType::get(type, {type}));
      function.setCConv(LLVM::cconv::CConv::SPIR_FUNC);
    }
    b.setInsertionPoint(op);
    auto call = LLVM::CallOp::create(b, op->getLoc(), function, op->getOperands());
    call.setCConv(LLVM::cconv::CConv::SPIR_FUNC);
    op->getResult(0).replaceAllUsesWith(call.getResult());
    op->erase();
  });
}

/// Answers libdevice's __nvvm_reflect("__CUDA_PREC_SQRT") as nvcc does by
/// default (-prec-sqrt=true): 1, so that __nv_sqrtf is correctly rounded
/// (sqrt.rn.f32), as C's sqrtf and the CPU versions are. LLVM's NVVMReflect
/// answers 0 unless the process-wide option -nvvm-reflect-add says otherwise,
/// which a library should not set behind its host's back. Runs on the linked
/// module, before the optimizations that would fold the query.
static void reflectPreciseSqrt(llvm::Module &module) {
  llvm::Function *reflect = module.getFunction("__nvvm_reflect");
  if (!reflect)
    return;
  for (llvm::User *user : llvm::make_early_inc_range(reflect->users())) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->arg_size() != 1)
      continue;
    auto *name = llvm::dyn_cast<llvm::GlobalVariable>(
        call->getArgOperand(0)->stripPointerCasts());
    auto *text = name && name->hasInitializer()
                     ? llvm::dyn_cast<llvm::ConstantDataSequential>(
                           name->getInitializer())
                     : nullptr;
    if (!text || !text->isCString() ||
        text->getAsCString() != "__CUDA_PREC_SQRT")
      continue;
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), 1));
    call->eraseFromParent();
  }
}

/// What the linked NVVM IR gets before LLVM optimizes it: libdevice's
/// precision query answered, each kernel's 32-bit variant added.
static void prepareLinkedModule(llvm::Module &module) {
  reflectPreciseSqrt(module);
  addNarrowIndexKernels(module);
}

FailureOr<std::string> EmbedKernelsPass::compile(gpu::GPUModuleOp kernels,
                                                 Device device) {
  MLIRContext *context = &getContext();
  Location loc = kernels.getLoc();
  // The copy is lowered in a module of its own, nested in this one while the
  // lowering runs (a nested pipeline runs on ops under the pass's), then taken
  // out again before it is serialized.
  OwningOpRef<ModuleOp> holder = ModuleOp::create(loc);
  (*holder)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     UnitAttr::get(context));
  OpBuilder b = OpBuilder::atBlockEnd(holder->getBody());
  auto copy = cast<gpu::GPUModuleOp>(b.clone(*kernels));

  if (device == Device::OpenCL)
    useOpenCLBuiltins(copy);
  if (device == Device::CUDA) {
    useDynamicSharedMemory(copy);
    // Line information comes afresh (DIScopeForLLVMFuncOp, in the lowering):
    // the debug scopes of imported HPVM-C code are the leaf's original
    // function's, which the kernel is not, in a compile unit of full debug
    // information, for which the NVPTX backend writes `.target sm_80, debug`,
    // which ptxas refuses to optimize ("Optimized debugging not supported").
    hpvm::dropDebugScopes(
        copy, [](FunctionOpInterface) { return true; }, /*globals=*/true);
  }

  ModuleOp nested = holder.release();
  getOperation().getBody()->push_back(nested);
  LogicalResult lowered = runPipeline(
      device == Device::CUDA ? cudaLowering : openclLowering, nested);
  nested->remove();
  holder = OwningOpRef<ModuleOp>(nested);
  if (failed(lowered))
    return kernels.emitError()
           << "could not lower the kernels for " << getDeviceName(device);

  // Partial conversions leave what they cannot lower; name it.
  Operation *left = nullptr;
  copy.walk([&](Operation *op) {
    if (op != copy.getOperation() &&
        !isa<LLVM::LLVMDialect, NVVM::NVVMDialect>(op->getDialect()) && !left)
      left = op;
  });
  if (left)
    return left->emitError()
           << "'" << left->getName() << "' cannot be lowered for "
           << getDeviceName(device) << " kernels";

  if (device == Device::OpenCL) {
    if (failed(assignOpenCLAddressSpaces(copy)))
      return failure();
    return serializeToOpenCLSPIRV(copy);
  }
  auto target = NVVM::NVVMTargetAttr::get(context, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip, features);
  copy.setTargetsAttr(b.getArrayAttr({target}));
  std::string toolkit = hpvm::findCudaToolkit();
  gpu::TargetOptions options(toolkit, {}, "", "",
                             gpu::CompilationTarget::Assembly, {},
                             /*initialLlvmIRCallback=*/{},
                             /*linkedLlvmIRCallback=*/prepareLinkedModule);
  std::optional<SmallVector<char, 0>> object =
      cast<gpu::TargetAttrInterface>(target).serializeToObject(copy, options);
  if (!object)
    return kernels.emitError() << "could not compile the kernels to PTX";
  return std::string(object->begin(), object->end());
}

LLVM::GlobalOp EmbedKernelsPass::createBytes(OpBuilder &b, Location loc,
                                             StringRef name, StringRef bytes) {
  std::string data = bytes.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Internal,
                                       uniqueName(name), b.getStringAttr(data),
                                       /*alignment=*/8);
  symbolTable->insert(global);
  return global;
}

LLVM::GlobalOp EmbedKernelsPass::createImage(OpBuilder &b, Location loc,
                                             StringRef name, int32_t format,
                                             LLVM::GlobalOp data, uint64_t size,
                                             LLVM::GlobalOp fallback,
                                             uint64_t fallbackSize) {
  MLIRContext *context = &getContext();
  auto pointer = LLVM::LLVMPointerType::get(context);
  auto i64 = b.getI64Type();
  auto type = abi::ModuleImage::get(context);
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Internal,
                                       uniqueName(name), Attribute());
  symbolTable->insert(global);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value value = LLVM::UndefOp::create(b, loc, type);
  auto insert = [&](Value field, abi::ModuleImage::Field index) {
    value = abi::insertField<abi::ModuleImage>(b, loc, value, index, field);
  };
  insert(LLVM::ConstantOp::create(b, loc, b.getI32Type(), format),
         abi::ModuleImage::Format);
  insert(LLVM::AddressOfOp::create(b, loc, data), abi::ModuleImage::Data);
  insert(LLVM::ConstantOp::create(b, loc, i64, static_cast<int64_t>(size)),
         abi::ModuleImage::Size);
  insert(fallback ? Value(LLVM::AddressOfOp::create(b, loc, fallback))
                  : Value(LLVM::ZeroOp::create(b, loc, pointer)),
         abi::ModuleImage::FallbackData);
  insert(LLVM::ConstantOp::create(b, loc, i64,
                                  static_cast<int64_t>(fallbackSize)),
         abi::ModuleImage::FallbackSize);
  LLVM::ReturnOp::create(b, loc, value);
  return global;
}

LLVM::GlobalOp EmbedKernelsPass::createSite(OpBuilder &b, Location loc,
                                            StringRef node, StringRef kernel,
                                            LLVM::GlobalOp cuda,
                                            LLVM::GlobalOp opencl,
                                            LLVM::GlobalOp library) {
  MLIRContext *context = &getContext();
  auto pointer = LLVM::LLVMPointerType::get(context);
  // The node as the runtime shows it; the kernel as the device module names it.
  std::string display = getNodeDisplayName(node);
  LLVM::GlobalOp nodeName =
      createBytes(b, loc, ("__hpvm_name_" + node).str(), display);
  LLVM::GlobalOp kernelName =
      kernel == display ? nodeName
                        : createBytes(b, loc, ("__hpvm_kernel_" + kernel).str(), kernel);
  auto type = abi::KernelSite::get(context);
  // The runtime writes its state into the site: not constant.
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                       LLVM::Linkage::Internal,
                                       uniqueName("__hpvm_site_" + node),
                                       Attribute());
  symbolTable->insert(global);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value value = LLVM::UndefOp::create(b, loc, type);
  auto insert = [&](LLVM::GlobalOp field, abi::KernelSite::Field index) {
    Value address = field ? Value(LLVM::AddressOfOp::create(b, loc, field))
                          : Value(LLVM::ZeroOp::create(b, loc, pointer));
    value = abi::insertField<abi::KernelSite>(b, loc, value, index, address);
  };
  insert(nodeName, abi::KernelSite::Node);
  insert(kernelName, abi::KernelSite::Kernel);
  insert(cuda, abi::KernelSite::Cuda);
  insert(opencl, abi::KernelSite::OpenCL);
  insert({}, abi::KernelSite::State); // runtime-owned, zero-initialized
  insert(library, abi::KernelSite::Library);
  LLVM::ReturnOp::create(b, loc, value);
  return global;
}

void EmbedKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable table(module);
  symbolTable = &table;
  SmallVector<gpu::GPUModuleOp> kernelModules(module.getOps<gpu::GPUModuleOp>());

  SmallVector<Device> targets;
  for (const std::string &name : devices) {
    if (name == "cuda")
      targets.push_back(Device::CUDA);
    else if (name == "opencl")
      targets.push_back(Device::OpenCL);
    else {
      module.emitError() << "hpvm-embed-kernels: unknown device '" << name
                         << "'; expected 'cuda' or 'opencl'";
      return signalPassFailure();
    }
  }

  OpBuilder b(&getContext());
  b.setInsertionPointToStart(module.getBody());
  // Per kernel module and device kind, its image (null: not built).
  DenseMap<StringAttr, std::pair<LLVM::GlobalOp, LLVM::GlobalOp>> images;
  bool failedAny = false;
  for (gpu::GPUModuleOp kernels : kernelModules) {
    std::pair<LLVM::GlobalOp, LLVM::GlobalOp> built;
    for (Device device : targets) {
      FailureOr<std::string> image = compile(kernels, device);
      if (failed(image)) {
        failedAny = true;
        continue;
      }
      // CUDA: cubins next to the PTX where the toolkit is there.
      std::optional<std::string> fatbin;
      if (device == Device::CUDA) {
        SmallVector<StringRef> names;
        StringRef(cubins).split(names, ',', -1, /*KeepEmpty=*/false);
        SmallVector<std::string> architectures;
        for (StringRef name : names)
          architectures.push_back(name.trim().str());
        std::string why;
        fatbin = buildCudaFatbin(*image, architectures, why);
        if (!fatbin && !why.empty())
          kernels.emitWarning()
              << "the CUDA image holds PTX only: building cubins failed: " << why;
      }
      // OpenCL: the SPIR 1.2 bitcode next to the SPIR-V where llvm-spirv is.
      std::optional<std::string> spir;
      if (device == Device::OpenCL && spirFallback) {
        std::string why;
        spir = translateToSPIR12(*image, why);
        if (!spir && !why.empty())
          kernels.emitWarning() << "the OpenCL image has no SPIR 1.2 fallback "
                                   "(devices without SPIR-V support translate "
                                   "it at run time): "
                                << why;
      }
      auto dump = [&](StringRef extension, StringRef bytes) {
        SmallString<128> path(dumpDir);
        llvm::sys::path::append(path, kernels.getName() + extension);
        std::error_code error;
        llvm::raw_fd_ostream file(path, error);
        if (error) {
          module.emitError() << "cannot write '" << path
                             << "': " << error.message();
          failedAny = true;
        } else {
          file << bytes;
        }
      };
      if (!dumpDir.empty()) {
        dump(device == Device::CUDA ? ".ptx" : ".spv", *image);
        if (fatbin)
          dump(".fatbin", *fatbin);
        if (spir)
          dump(".spir.bc", *spir);
      }
      Location loc = kernels.getLoc();
      std::string base =
          ("__hpvm_" + kernels.getName() + "_" + getDeviceName(device)).str();
      StringRef bytes = fatbin ? StringRef(*fatbin) : StringRef(*image);
      LLVM::GlobalOp data = createBytes(b, loc, base + "_data", bytes);
      LLVM::GlobalOp fallback =
          spir ? createBytes(b, loc, base + "_spir", *spir) : LLVM::GlobalOp();
      LLVM::GlobalOp descriptor = createImage(
          b, loc, base,
          fatbin                    ? HPVM_RT_IMAGE_CUBIN
          : device == Device::CUDA ? HPVM_RT_IMAGE_PTX
                                   : HPVM_RT_IMAGE_SPIRV,
          data, bytes.size(), fallback, spir ? spir->size() : 0);
      (device == Device::CUDA ? built.first : built.second) = descriptor;
    }
    images[kernels.getSymNameAttr()] = built;
  }
  if (failedAny)
    return signalPassFailure();

  // Every kernel node gets its site; without any image it keeps only its CPU
  // version.
  for (Operation &op : module.getOps()) {
    auto node = dyn_cast<NodeOpInterface>(&op);
    if (!node)
      continue;
    auto reference =
        op.getAttrOfType<SymbolRefAttr>(HPVMDialect::getKernelAttrName());
    if (!reference || reference.getNestedReferences().empty())
      continue;
    auto found = images.find(reference.getRootReference());
    if (found == images.end()) {
      op.emitError() << "names the kernel " << reference
                     << ", which is not in a gpu.module of this module";
      return signalPassFailure();
    }
    auto [cuda, opencl] = found->second;
    auto call = op.getAttrOfType<DictionaryAttr>(
        HPVMDialect::getTensorLibraryAttrName());
    op.removeAttr(HPVMDialect::getTensorLibraryAttrName());
    if (!cuda && !opencl) {
      op.removeAttr(HPVMDialect::getKernelAttrName());
      continue;
    }
    // A tensor leaf that is one library call: its descriptor, for CUDA.
    LLVM::GlobalOp library;
    if (call && cuda) {
      library = createTensorLibraryCallGlobal(
          b, op.getLoc(), call,
          uniqueName("__hpvm_library_" +
                     SymbolTable::getSymbolName(node).getValue()),
          *symbolTable);
      symbolTable->insert(library);
    }
    LLVM::GlobalOp site = createSite(b, op.getLoc(), SymbolTable::getSymbolName(node).getValue(),
                                     reference.getLeafReference().getValue(),
                                     cuda, opencl, library);
    op.setAttr(HPVMDialect::getKernelAttrName(),
               FlatSymbolRefAttr::get(site.getSymNameAttr()));
  }
  for (gpu::GPUModuleOp kernels : kernelModules)
    kernels.erase();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
}

} // namespace
