//===- ConvertHPVMToGPU.cpp - The convert-hpvm-to-gpu pass ----------------===//
// The kernel extraction shared by the CUDA and OpenCL backends: GPU-hinted
// nodes of the two kernel shapes become gpu.func kernels in
// gpu.module @hpvm_kernels, and the nodes name them in `hpvm.kernel`.
#include "PointerOutputs.h"
#include "TensorKernels.h"
#include "TensorLibraryCalls.h"
#include "WorkgroupMemory.h"

#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/GridQueries.h"
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/Analysis/TileShape.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_CONVERTHPVMTOGPU
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// The name of the module that receives every kernel.
constexpr StringLiteral kKernelModuleName = "hpvm_kernels";

bool hasGPUTarget(NodeOpInterface node) {
  return llvm::any_of(node.getTargets(), [](Target target) {
    return target == Target::gpu || target == Target::spirv;
  });
}

/// Why an input of `type` cannot be a kernel parameter, or "".
std::string checkParameterType(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    if (memref.getMemorySpace())
      return "a memref input in a memory space";
    if (!memref.getLayout().isIdentity() &&
        !isa<StridedLayoutAttr>(memref.getLayout()))
      return "a memref input with an affine-map layout";
    return checkParameterType(memref.getElementType());
  }
  if (isa<LLVM::LLVMPointerType, IndexType, FloatType>(type))
    return "";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    // Booleans travel as bytes (OpenCL kernels take no bool parameters).
    if (integer.getWidth() == 1)
      return "";
    if (integer.getWidth() % 8 || integer.getWidth() > 64)
      return "an integer input of an odd width";
    return "";
  }
  return "an input of type that kernels do not take";
}

/// The C math functions kernels may call (float and double versions): they
/// become `math` ops, which both devices lower (libdevice on CUDA, OpenCL's
/// built-ins through LLVM's SPIR-V backend).
std::optional<StringRef> getMathOpName(StringRef function) {
  static const llvm::StringMap<StringRef> names = {
      {"sqrt", "math.sqrt"},   {"exp", "math.exp"},     {"exp2", "math.exp2"},
      {"log", "math.log"},     {"log2", "math.log2"},   {"log10", "math.log10"},
      {"pow", "math.powf"},    {"sin", "math.sin"},     {"cos", "math.cos"},
      {"fabs", "math.absf"},   {"floor", "math.floor"}, {"ceil", "math.ceil"},
      {"round", "math.round"}, {"trunc", "math.trunc"}, {"fma", "math.fma"},
      {"copysign", "math.copysign"}, {"tan", "math.tan"},
      {"tanh", "math.tanh"},   {"sinh", "math.sinh"},   {"cosh", "math.cosh"},
      {"asin", "math.asin"},   {"acos", "math.acos"},   {"atan", "math.atan"},
      {"atan2", "math.atan2"}, {"erf", "math.erf"},     {"erfc", "math.erfc"},
      {"cbrt", "math.cbrt"},   {"expm1", "math.expm1"}, {"log1p", "math.log1p"},
      {"asinh", "math.asinh"}, {"acosh", "math.acosh"}, {"atanh", "math.atanh"}};
  StringRef base = function;
  if (base.ends_with("f") && names.count(base.drop_back()))
    base = base.drop_back();
  auto found = names.find(base);
  if (found == names.end())
    return std::nullopt;
  return found->second;
}

/// Whether `call` calls a C math function with the float or double signature
/// its name promises.
bool isMathCall(CallOpInterface call, StringRef callee) {
  if (!getMathOpName(callee))
    return false;
  // No double function's name ends in 'f': "sqrtf" is float, "sqrt" double.
  bool isFloat = callee.ends_with("f") && getMathOpName(callee.drop_back());
  Type type = isFloat ? Type(Float32Type::get(call->getContext()))
                      : Type(Float64Type::get(call->getContext()));
  return call->getNumResults() == 1 && call->getResult(0).getType() == type &&
         llvm::all_of(call->getOperandTypes(),
                      [&](Type operand) { return operand == type; });
}

/// Replaces the C math calls of `kernels` with `math` ops.
void rewriteMathCalls(gpu::GPUModuleOp kernels) {
  kernels.walk([&](LLVM::CallOp call) {
    auto callee = call.getCallee();
    if (!callee || !isMathCall(call, *callee))
      return;
    OpBuilder b(call);
    OperationState state(call.getLoc(), *getMathOpName(*callee));
    state.addOperands(call.getOperands());
    state.addTypes(call.getResultTypes());
    Operation *math = b.create(state);
    call.getResult().replaceAllUsesWith(math->getResult(0));
    call.erase();
  });
}

/// Whether `value`, a memref output of `leaf` (the body of a leaf kernel, or
/// of the tile kernel `tile`), is one of the kernel's inputs passed on: an
/// argument of the leaf (bound from the tile's inputs, in a tile). The kernel
/// hands it back as the index of that input, and the host turns the index
/// into the memref it passed (KernelSiteRunner::decodeMemRefOutput).
bool isKernelInputPassedOn(Value value, LeafOp leaf, const TileShape *tile) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || argument.getOwner() != &leaf.getBody().front())
    return false;
  return !tile || tile->inputSources[argument.getArgNumber()].tileInput >= 0;
}

/// Checks the body of a kernel (the leaf, and everything it calls); collects
/// the functions it calls. Returns the reason it cannot run as a kernel.
class BodyChecker {
public:
  BodyChecker(ModuleOp module, SymbolTableCollection &symbols)
      : module(module), symbols(symbols) {}

  /// Checks `leaf`, the body of a leaf kernel, or of the tile kernel `tile`.
  std::string checkLeaf(LeafOp leaf, const TileShape *tile = nullptr) {
    bool tiled = tile;
    // A leaf kernel's first instance writes the outputs (equal in every
    // instance, as HPVM requires of outputs that leave a grid) for the host:
    // numbers, memrefs that are inputs of the kernel passed on, and (leaf
    // kernels) pointers that are inputs passed on or null, as codes
    // (PointerOutputs.h).
    std::string reason;
    for (auto [index, type] : llvm::enumerate(leaf.getOutputTypes())) {
      if (isa<MemRefType>(type)) {
        leaf.walk([&, index = index](ReturnOp ret) {
          if (reason.empty() &&
              !isKernelInputPassedOn(ret.getOperand(index), leaf, tile))
            reason = "it has a memref output that is not one of the "
                     "kernel's memref inputs passed on (kernels return the "
                     "buffers they were given)";
        });
        if (!reason.empty())
          return reason;
        continue;
      }
      if (isa<LLVM::LLVMPointerType>(type) && !tiled) {
        leaf.walk([&, index = index](ReturnOp ret) {
          if (reason.empty())
            reason = checkPointerOrigins(ret.getOperand(index),
                                         &leaf.getBody().front());
        });
        if (!reason.empty())
          return reason;
        continue;
      }
      if (!isa<IntegerType, FloatType, IndexType>(type) ||
          type.isInteger(1))
        return "it has an output that is not a number, a memref input "
               "passed on or a pointer input passed on (kernels return "
               "integers, floats and the buffers they were given)";
    }
    leaf.walk([&](Operation *op) {
      if (!reason.empty())
        return WalkResult::interrupt();
      if (isa<AllocOp>(op))
        reason = "it uses 'hpvm.alloc'";
      else if (isa<BarrierOp>(op) && !tiled)
        reason = "it has a barrier across the whole grid (only the leaf of "
                 "a tile may have barriers)";
      else
        reason = checkOp(op);
      return reason.empty() ? WalkResult::advance() : WalkResult::interrupt();
    });
    return reason;
  }

  /// Checks the body of an allocation node of a tile kernel (its
  /// allocations become the work-group's memory).
  std::string checkAllocator(LeafOp leaf) {
    std::string reason;
    leaf.walk([&](Operation *op) {
      if (!isa<AllocOp>(op))
        reason = checkOp(op);
      return reason.empty() ? WalkResult::advance() : WalkResult::interrupt();
    });
    return reason;
  }

  /// The functions the kernels call and the constants they read, in the
  /// order they were found.
  ArrayRef<Operation *> getDependencies() { return dependencies.getArrayRef(); }

private:
  /// Whether `op` calls UBSan's runtime or hands it its data (the checks
  /// hpvm-cc -fsanitize=undefined compiles into leaves).
  static bool isSanitizerCheck(Operation *op) {
    auto reports = [](Operation *user) {
      auto call = dyn_cast<CallOpInterface>(user);
      auto callee = call ? llvm::dyn_cast_if_present<SymbolRefAttr>(
                               call.getCallableForCallee())
                         : nullptr;
      return callee &&
             callee.getRootReference().getValue().starts_with("__ubsan_handle_");
    };
    return reports(op) || llvm::any_of(op->getUsers(), reports);
  }

  std::string checkOp(Operation *op) {
    if (isSanitizerCheck(op))
      return "it has UBSan's checks (-fsanitize=undefined), which report "
             "through the sanitizer's runtime on the host";
    if (isa<ApproximableOpInterface, TensorYieldOp>(op))
      return "it has tensor ops";
    if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
      // Constant tables travel with the kernels; anything else would need
      // one copy shared by the host and every device.
      auto global = symbols.lookupNearestSymbolFrom<LLVM::GlobalOp>(
          module, address.getGlobalNameAttr());
      if (!global || !global.getConstant() ||
          (!global.getValueOrNull() && global.getInitializerRegion().empty()))
        return "it uses the global '" + address.getGlobalName().str() +
               "', which is not a constant";
      dependencies.insert(global);
      return "";
    }
    if (isa<LLVM::InlineAsmOp>(op))
      return "it has inline assembly";
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee =
          llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
      if (!callee)
        return "it calls a function through a pointer";
      Operation *function = symbols.lookupNearestSymbolFrom(module, callee);
      auto interface = dyn_cast_if_present<FunctionOpInterface>(function);
      if ((!interface || interface.isExternal()) &&
          isMathCall(call, callee.getRootReference().getValue()))
        return "";
      if (!interface || interface.isExternal())
        return "it calls the external function '" +
               callee.getRootReference().str() + "'";
      if (isa<NodeOpInterface>(function))
        return "it calls a node";
      return checkCallee(function);
    }
    return "";
  }

  std::string checkCallee(Operation *function) {
    if (dependencies.contains(function) || active.contains(function))
      return active.contains(function) ? "it calls a function recursively"
                                       : "";
    active.insert(function);
    std::string reason;
    function->walk([&](Operation *op) {
      if (op == function)
        return WalkResult::advance();
      reason = checkOp(op);
      return reason.empty() ? WalkResult::advance() : WalkResult::interrupt();
    });
    active.remove(function);
    if (reason.empty())
      dependencies.insert(function);
    return reason;
  }

  ModuleOp module;
  SymbolTableCollection &symbols;
  llvm::SetVector<Operation *> dependencies;
  llvm::SetVector<Operation *> active;
};

/// One node that becomes a kernel.
struct KernelSite {
  NodeOpInterface node; // what the host runs: the leaf, or the tile's parent
  LeafOp leaf;          // the kernel's body
  /// The 3-level shape: the tile (`node`) around `leaf`.
  std::optional<TileShape> tile;
  PerInstancePorts perInstance = {};
};

/// The per-instance ports of every use (create_node) of every node.
class PerInstanceUses {
public:
  explicit PerInstanceUses(ModuleOp module) {
    module.walk([&](CreateNodeOp create) {
      uses[create.getNodeAttr().getAttr()].push_back(create);
    });
    // As the CPU backend decides it (NodeLowering), graph by graph.
    SymbolTableCollection symbols;
    masks = collectPerInstancePorts(module, symbols);
  }

  /// The masks every use of `node` has, or the reason they differ.
  FailureOr<PerInstancePorts> get(NodeOpInterface node, std::string &reason) {
    auto symbol = cast<SymbolOpInterface>(node.getOperation()).getNameAttr();
    std::optional<PerInstancePorts> common;
    for (CreateNodeOp create : uses.lookup(symbol)) {
      PerInstancePorts mine = masks.lookup(create);
      if (common && !(*common == mine)) {
        reason = "its uses exchange different values per instance with "
                 "their siblings (one kernel serves them all)";
        return failure();
      }
      common = mine;
    }
    return common.value_or(PerInstancePorts{});
  }

private:
  llvm::DenseMap<StringAttr, SmallVector<CreateNodeOp>> uses;
  llvm::DenseMap<Operation *, PerInstancePorts> masks;
};

/// Why a value of `type` cannot travel per instance between kernels, or "".
std::string checkPerInstanceType(Type type) {
  if (isa<FloatType, IndexType>(type))
    return "";
  if (auto integer = dyn_cast<IntegerType>(type))
    if (integer.getWidth() % 8 == 0 && integer.getWidth() <= 64)
      return "";
  return isa<LLVM::LLVMPointerType>(type)
             ? "a pointer per instance (a device cannot use the host "
               "pointers in the array)"
             : "a value per instance of a type kernels do not exchange";
}


/// Why the tile's memory cannot be work-group memory, or "".
std::string checkTileMemory(const TileShape &shape) {
  for (AllocOp alloc : shape.getAllocations()) {
    auto memref = dyn_cast<MemRefType>(alloc.getType());
    if (!memref)
      continue; // bytes
    Type element = memref.getElementType();
    if (memref.getMemorySpace() || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() % 8)
    {
      std::string text;
      llvm::raw_string_ostream(text) << alloc.getType();
      return "its allocation node allocates " + text +
             " (work-group memory holds integers and floats of whole bytes)";
    }
  }
  // A memref of work-group memory keeps its address space in the kernel, so
  // the instances may only load and store through it.
  Block &body = LeafOp(shape.instances).getBody().front();
  for (auto [index, source] : llvm::enumerate(shape.inputSources)) {
    if (source.tileInput >= 0)
      continue;
    LeafOp allocator = shape.allocators[source.allocator].leaf;
    Value output =
        allocator.getBody().front().getTerminator()->getOperand(source.output);
    if (!isa<MemRefType>(output.getType()))
      continue;
    if (!output.getDefiningOp<AllocOp>())
      return "a memref from its allocation node is not one it allocates";
    for (OpOperand &use : body.getArgument(index).getUses())
      if (!isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(
              use.getOwner()))
        return "its leaf uses the tile's memory in '" +
               use.getOwner()->getName().getStringRef().str() +
               "' (kernels load, store and update it)";
  }
  return "";
}

class KernelBuilder {
public:
  KernelBuilder(ModuleOp module, gpu::GPUModuleOp kernels)
      : module(module), kernels(kernels) {}

  /// Creates the kernel of `site`; returns its symbol reference.
  SymbolRefAttr build(KernelSite site);
  /// Copies the called functions and read constants into the kernel module.
  void copyDependencies(ArrayRef<Operation *> dependencies);

private:
  /// The kernel of one site while it is built: what the steps share.
  struct KernelState {
    explicit KernelState(KernelSite site)
        : site(site), tiled(site.tile.has_value()), loc(site.node->getLoc()),
          firstAncestor(tiled ? 2 : 1),
          ancestors(collectAncestorQueries(site.leaf, firstAncestor)) {}

    KernelSite site;
    bool tiled;
    Location loc;
    /// The grids above the kernel's own levels, from the host.
    unsigned firstAncestor;
    SmallVector<AncestorQuery> ancestors;
    /// Outputs: a pointer to { outputs... } (index as i64, a pointer or a
    /// memref as the i64 code of the input it is).
    SmallVector<Type> outputFields;
    SmallVector<unsigned> perInstanceOutputs;
    SmallVector<AllocOp> allocations;
    /// Where each group of parameters starts.
    unsigned gridParameter = 0, ancestorParameter = 0, outputsParameter = 0,
             perInstanceOutputParameter = 0, memoryParameter = 0;
    gpu::GPUFuncOp func;
    Block *entry = nullptr;
    /// Ids and extents per level and dimension.
    Value ids[2][3], extents[2][3];
    /// The instance's linear id (i64), where values travel per instance.
    Value linear;
  };
  /// An input that is one per instance, and the placeholder that stands in
  /// for the value loaded from its array.
  using PerInstanceInput = std::pair<unsigned, Value>;

  /// Lays out the outputs and the parameters (RuntimeABI.h); returns the
  /// parameter types.
  SmallVector<Type> layoutParameters(KernelState &kernel, OpBuilder &b);
  /// Maps the leaf's arguments to the kernel's inputs (and, in a tile, to
  /// the allocation nodes' outputs); returns the per-instance inputs.
  SmallVector<PerInstanceInput> mapInputs(KernelState &kernel, OpBuilder &b,
                                          IRMapping &mapping);
  /// Builds the ids and extents; returns whether the thread lies in the grid
  /// (leaf kernels), or null.
  Value buildIds(KernelState &kernel, OpBuilder &b);
  /// Computes the linear id and loads the per-instance inputs where the
  /// leaf's copy `body` starts.
  void loadPerInstanceInputs(KernelState &kernel, OpBuilder &b, Block *body,
                             ArrayRef<PerInstanceInput> perInstanceInputs);
  /// Replaces the HPVM intrinsics of the copied body.
  void lowerIntrinsics(KernelState &kernel);
  /// Replaces the copied `ret` with the stores of the outputs.
  void lowerReturn(KernelState &kernel, Operation *ret,
                   PointerCodeBuilder &pointerCodes);

  ModuleOp module;
  gpu::GPUModuleOp kernels;
};

/// The memory of `alloc` in work-group memory at `memory` (a kernel
/// parameter): a generic pointer for bytes, a memref in address space 3 for
/// memrefs (whose uses the checker limited to loads and stores).
static Value materializeTileMemory(OpBuilder &b, Location loc, AllocOp alloc,
                                   Value memory, ValueRange dynamicSizes) {
  if (isa<LLVM::LLVMPointerType>(alloc.getType()))
    return LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), memory);
  return viewWorkgroupMemory(b, loc, cast<MemRefType>(alloc.getType()), memory,
                             dynamicSizes);
}

SymbolRefAttr KernelBuilder::build(KernelSite site) {
  KernelState kernel(site);
  LeafOp leaf = site.leaf;
  Location loc = kernel.loc;
  MLIRContext *context = module.getContext();
  OpBuilder b(context);
  b.setInsertionPointToEnd(kernels.getBody());
  // The function, with the parameters in the order the host passes them.
  SmallVector<Type> parameters = layoutParameters(kernel, b);
  auto type = FunctionType::get(context, parameters, {});
  kernel.func = gpu::GPUFuncOp::create(
      b, loc, SymbolTable::getSymbolName(site.node).getValue(), type);
  kernel.func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                       b.getUnitAttr());
  SymbolTable(kernels).insert(kernel.func);

  kernel.entry = &kernel.func.getBody().front();
  b.setInsertionPointToStart(kernel.entry);
  // The leaf's arguments as the kernel's values; the ids and extents.
  IRMapping mapping;
  SmallVector<PerInstanceInput> perInstanceInputs =
      mapInputs(kernel, b, mapping);
  Value inGrid = buildIds(kernel, b);

  // The leaf's blocks follow the entry; threads past the grid return.
  Region &region = kernel.func.getBody();
  leaf.getBody().cloneInto(&region, mapping);
  Block *body = mapping.lookup(&leaf.getBody().front());
  b.setInsertionPointToEnd(kernel.entry);
  if (inGrid) {
    Block *exit = b.createBlock(&region);
    gpu::ReturnOp::create(b, loc);
    b.setInsertionPointToEnd(kernel.entry);
    cf::CondBranchOp::create(b, loc, inGrid, body, ValueRange{}, exit,
                             ValueRange{});
  } else {
    cf::BranchOp::create(b, loc, body);
  }

  // The values per instance from their arrays; the intrinsics and returns.
  if (site.perInstance.any())
    loadPerInstanceInputs(kernel, b, body, perInstanceInputs);
  lowerIntrinsics(kernel);
  return SymbolRefAttr::get(
      kernels.getSymNameAttr(),
      {FlatSymbolRefAttr::get(kernel.func.getNameAttr())});
}

SmallVector<Type> KernelBuilder::layoutParameters(KernelState &kernel,
                                                  OpBuilder &b) {
  KernelSite &site = kernel.site;
  MLIRContext *context = b.getContext();
  auto i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(context);
  for (Type type : site.node.getOutputTypes())
    kernel.outputFields.push_back(
        isa<IndexType, LLVM::LLVMPointerType, MemRefType>(type) ? Type(i64)
                                                               : type);
  for (unsigned port = 0; port < kernel.outputFields.size(); ++port)
    if ((site.perInstance.outputs >> port) & 1)
      kernel.perInstanceOutputs.push_back(port);
  if (kernel.tiled)
    kernel.allocations = site.tile->getAllocations();
  // The parameters in the order the host passes them (RuntimeABI.h), and
  // where each group starts.
  SmallVector<Type> parameters;
  for (abi::KernelParamGroup group : abi::getKernelParamGroups(
           kernel.tiled ? abi::KernelShape::Tile : abi::KernelShape::Leaf)) {
    switch (group) {
    case abi::KernelParamGroup::Inputs:
      for (auto [index, type] : llvm::enumerate(site.node.getInputTypes())) {
        if ((site.perInstance.inputs >> index) & 1)
          // Inputs that are one per instance arrive as the array of them.
          parameters.push_back(pointer);
        else if (type.isInteger(1))
          // A boolean input is a byte parameter (OpenCL kernels take no bool;
          // the host passes 0 or 1).
          parameters.push_back(b.getI8Type());
        else
          parameters.push_back(type);
      }
      break;
    case abi::KernelParamGroup::GridExtents:
      kernel.gridParameter = parameters.size();
      parameters.append(3, i64);
      break;
    case abi::KernelParamGroup::AncestorQueries:
      kernel.ancestorParameter = parameters.size();
      parameters.append(kernel.ancestors.size(), i64);
      break;
    case abi::KernelParamGroup::Outputs:
      kernel.outputsParameter = parameters.size();
      if (!kernel.outputFields.empty())
        parameters.push_back(pointer);
      break;
    case abi::KernelParamGroup::PerInstanceOutputs:
      // One array per output that is one per instance, in port order.
      kernel.perInstanceOutputParameter = parameters.size();
      parameters.append(kernel.perInstanceOutputs.size(), pointer);
      break;
    case abi::KernelParamGroup::WorkgroupMemory:
      // The tile's memory, one work-group pointer per allocation.
      kernel.memoryParameter = parameters.size();
      parameters.append(
          kernel.allocations.size(),
          LLVM::LLVMPointerType::get(context, kWorkgroupAddressSpace));
      break;
    case abi::KernelParamGroup::Constants:
    case abi::KernelParamGroup::OutputBuffers:
      break; // tensor kernels only (TensorKernels.cpp)
    }
  }
  return parameters;
}

SmallVector<KernelBuilder::PerInstanceInput>
KernelBuilder::mapInputs(KernelState &kernel, OpBuilder &b,
                         IRMapping &mapping) {
  KernelSite &site = kernel.site;
  Location loc = kernel.loc;
  Block *entry = kernel.entry;
  unsigned inputCount = site.node.getInputTypes().size();
  // The node's inputs as the body sees them: booleans back from their bytes.
  SmallVector<Value> inputs(entry->getArguments().take_front(inputCount));
  for (auto [value, type] : llvm::zip(inputs, site.node.getInputTypes()))
    if (type.isInteger(1))
      value = arith::TruncIOp::create(b, loc, type, value);
  Block &leafEntry = site.leaf.getBody().front();
  // Inputs that are one per instance stand in for the value loaded from
  // their array, once the instance's linear id is known.
  SmallVector<PerInstanceInput> perInstanceInputs;
  if (!kernel.tiled) {
    for (auto [index, argument] : llvm::enumerate(leafEntry.getArguments())) {
      if ((site.perInstance.inputs >> index) & 1) {
        Value placeholder = UnrealizedConversionCastOp::create(
                                b, loc, argument.getType(), ValueRange{})
                                .getResult(0);
        perInstanceInputs.push_back({static_cast<unsigned>(index), placeholder});
        mapping.map(argument, placeholder);
        continue;
      }
      mapping.map(argument, inputs[index]);
    }
    return perInstanceInputs;
  }
  // The allocation nodes' bodies run in every thread, with their memory
  // in the work-group's.
  ValueRange tileInputs = inputs;
  SmallVector<SmallVector<Value>> allocatorOutputs;
  unsigned next = kernel.memoryParameter;
  for (const TileAllocator &allocator : site.tile->allocators) {
    IRMapping allocatorMapping;
    for (AllocOp alloc : allocator.allocations) {
      SmallVector<Value> sizes =
          cloneFromAllocator(b, allocator, tileInputs,
                             alloc.getDynamicSizes(), allocatorMapping);
      allocatorMapping.map(
          alloc.getMemory(),
          materializeTileMemory(b, alloc.getLoc(), alloc,
                                entry->getArgument(next++), sizes));
    }
    Operation *terminator =
        LeafOp(allocator.leaf).getBody().front().getTerminator();
    allocatorOutputs.push_back(
        cloneFromAllocator(b, allocator, tileInputs,
                           terminator->getOperands(), allocatorMapping));
  }
  for (auto [argument, source] :
       llvm::zip(leafEntry.getArguments(), site.tile->inputSources))
    mapping.map(argument,
                source.tileInput >= 0
                    ? inputs[source.tileInput]
                    : allocatorOutputs[source.allocator][source.output]);
  return perInstanceInputs;
}

/// The most dimensions any create_node of `node` gives it (3 when none
/// does): along the others its grid is one instance, in one work-group of
/// one (the runtime's launch), which needs no bounds check.
static unsigned getLaunchRank(ModuleOp module, NodeOpInterface node) {
  StringRef name = SymbolTable::getSymbolName(node).getValue();
  unsigned rank = 0;
  bool created = false;
  module.walk([&](CreateNodeOp create) {
    if (create.getNodeAttr().getAttr().getValue() != name)
      return;
    created = true;
    rank = std::max(rank, create.getRank());
  });
  return created ? rank : 3;
}

Value KernelBuilder::buildIds(KernelState &kernel, OpBuilder &b) {
  Location loc = kernel.loc;
  gpu::Dimension dims[3] = {gpu::Dimension::x, gpu::Dimension::y,
                            gpu::Dimension::z};
  unsigned rank = kernel.tiled ? 3 : getLaunchRank(module, kernel.site.node);
  Value inGrid;
  for (int d = 0; d < 3; ++d) {
    Value thread = gpu::ThreadIdOp::create(b, loc, dims[d]);
    Value block = gpu::BlockIdOp::create(b, loc, dims[d]);
    Value blockDim = gpu::BlockDimOp::create(b, loc, dims[d]);
    if (kernel.tiled) {
      kernel.ids[0][d] = thread;
      kernel.extents[0][d] = blockDim;
      kernel.ids[1][d] = block;
      kernel.extents[1][d] = gpu::GridDimOp::create(b, loc, dims[d]);
      continue;
    }
    Value first = arith::MulIOp::create(b, loc, block, blockDim);
    kernel.ids[0][d] = arith::AddIOp::create(b, loc, first, thread);
    kernel.extents[0][d] = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        kernel.entry->getArgument(kernel.gridParameter + d));
    if (static_cast<unsigned>(d) >= rank && d > 0)
      continue;
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         kernel.ids[0][d],
                                         kernel.extents[0][d]);
    inGrid = inGrid ? arith::AndIOp::create(b, loc, inGrid, inside) : inside;
  }
  return inGrid;
}

void KernelBuilder::loadPerInstanceInputs(
    KernelState &kernel, OpBuilder &b, Block *body,
    ArrayRef<PerInstanceInput> perInstanceInputs) {
  Location loc = kernel.loc;
  auto i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(b.getContext());
  auto &ids = kernel.ids;
  auto &extents = kernel.extents;
  // Values per instance: element x + nx * (y + ny * z) of their arrays (x
  // fastest, as the CPU backend lays them out), read where the leaf starts.
  b.setInsertionPointToStart(body);
  Value index = arith::AddIOp::create(
      b, loc, ids[0][0],
      arith::MulIOp::create(
          b, loc, extents[0][0],
          arith::AddIOp::create(
              b, loc, ids[0][1],
              arith::MulIOp::create(b, loc, extents[0][1], ids[0][2]))));
  kernel.linear = arith::IndexCastOp::create(b, loc, i64, index);
  for (auto [input, placeholder] : perInstanceInputs) {
    Type type = placeholder.getType();
    Type storage = isa<IndexType>(type) ? Type(i64) : type;
    Value element = LLVM::GEPOp::create(b, loc, pointer, storage,
                                        kernel.entry->getArgument(input),
                                        ArrayRef<LLVM::GEPArg>{kernel.linear});
    Value value = LLVM::LoadOp::create(b, loc, storage, element);
    if (storage != type)
      value = arith::IndexCastOp::create(b, loc, type, value);
    Operation *cast = placeholder.getDefiningOp();
    placeholder.replaceAllUsesWith(value);
    cast->erase();
  }
}

void KernelBuilder::lowerIntrinsics(KernelState &kernel) {
  /// A kernel's grid: the ids and extents of the levels it runs (its
  /// instances, and a tile's work-groups) are values the kernel computed
  /// first; an ancestor's are parameters.
  struct KernelGridQueries : GridQueryStrategy {
    explicit KernelGridQueries(KernelState &kernel) : kernel(kernel) {}
    Value lowerGridQuery(OpBuilder &b, Operation *query, bool isId, unsigned dim,
                         unsigned level) override {
      if (level < kernel.firstAncestor)
        return isId ? kernel.ids[level][dim] : kernel.extents[level][dim];
      auto found = llvm::find(kernel.ancestors, AncestorQuery{level, dim, isId});
      Value parameter = kernel.entry->getArgument(
          kernel.ancestorParameter +
          static_cast<unsigned>(found - kernel.ancestors.begin()));
      return arith::IndexCastOp::create(b, query->getLoc(), b.getIndexType(),
                                        parameter);
    }
    KernelState &kernel;
  } strategy(kernel);
  SmallVector<Operation *> queries;
  kernel.func.walk([&](Operation *op) {
    if (isa<InstanceIdOp, NumInstancesOp>(op))
      queries.push_back(op);
  });
  RewritePatternSet patterns(kernel.func.getContext());
  populateGridQueryPatterns(patterns, strategy);
  (void)applyPatternsOncePerOp(queries, FrozenRewritePatternSet(std::move(patterns)),
                               [](Operation *) {}, /*stopAtFailure=*/false);
  PointerCodeBuilder pointerCodes(kernel.entry);
  kernel.func.walk([&](Operation *op) {
    OpBuilder rewriter(op);
    if (isa<BarrierOp>(op)) {
      gpu::BarrierOp::create(rewriter, op->getLoc());
      op->erase();
    } else if (isa<ReturnOp>(op)) {
      lowerReturn(kernel, op, pointerCodes);
    }
  });
}

void KernelBuilder::lowerReturn(KernelState &kernel, Operation *ret,
                                PointerCodeBuilder &pointerCodes) {
  OpBuilder rewriter(ret);
  Location returnLoc = ret->getLoc();
  auto i64 = rewriter.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(rewriter.getContext());
  // Pointer and memref outputs as the codes of the inputs they are.
  SmallVector<Value> returned(ret->getOperands());
  for (Value &value : returned) {
    if (isa<LLVM::LLVMPointerType>(value.getType()))
      value = pointerCodes.build(rewriter, value);
    else if (isa<MemRefType>(value.getType()))
      // The checker made it an input of the leaf that is the kernel's
      // own input: an argument of the entry block, at the input's index.
      value = LLVM::ConstantOp::create(
          rewriter, returnLoc, i64,
          cast<BlockArgument>(value).getArgNumber());
  }
  // Every instance stores its values per instance into their arrays.
  for (auto [position, port] : llvm::enumerate(kernel.perInstanceOutputs)) {
    Value value = returned[port];
    if (isa<IndexType>(value.getType()))
      value = arith::IndexCastOp::create(rewriter, returnLoc, i64, value);
    Value element = LLVM::GEPOp::create(
        rewriter, returnLoc, pointer, value.getType(),
        kernel.entry->getArgument(kernel.perInstanceOutputParameter +
                                  position),
        ArrayRef<LLVM::GEPArg>{kernel.linear});
    LLVM::StoreOp::create(rewriter, returnLoc, value, element);
  }
  if (!kernel.outputFields.empty()) {
    // The first instance stores the outputs.
    auto outputStruct = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                         kernel.outputFields);
    Value zero = arith::ConstantIndexOp::create(rewriter, returnLoc, 0);
    Value first;
    for (int level = 0; level < (kernel.tiled ? 2 : 1); ++level)
      for (int d = 0; d < 3; ++d) {
        Value isZero = arith::CmpIOp::create(rewriter, returnLoc,
                                             arith::CmpIPredicate::eq,
                                             kernel.ids[level][d], zero);
        first = first ? arith::AndIOp::create(rewriter, returnLoc, first,
                                              isZero)
                      : isZero;
      }
    auto store = scf::IfOp::create(rewriter, returnLoc, first,
                                   /*withElseRegion=*/false);
    OpBuilder inner = store.getThenBodyBuilder();
    Value base = kernel.entry->getArgument(kernel.outputsParameter);
    for (unsigned index = 0, e = kernel.outputFields.size(); index < e;
         ++index) {
      Value value =
          returned[kernel.tiled ? kernel.site.tile->boundOutputs[index]
                                : index];
      Value stored = value;
      if (isa<IndexType>(value.getType()))
        stored = arith::IndexCastOp::create(inner, returnLoc, i64, value);
      Value field = LLVM::GEPOp::create(
          inner, returnLoc, pointer, outputStruct, base,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
      LLVM::StoreOp::create(inner, returnLoc, stored, field);
    }
  }
  gpu::ReturnOp::create(rewriter, returnLoc);
  ret->erase();
}

void KernelBuilder::copyDependencies(ArrayRef<Operation *> dependencies) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(kernels.getBody());
  for (Operation *dependency : dependencies) {
    Operation *copy = b.clone(*dependency);
    // Helpers and tables are private to the kernel module; a C++ inline function's
    // comdat (its group in the host module, which the kernel module has not) goes.
    if (auto function = dyn_cast<LLVM::LLVMFuncOp>(copy)) {
      function.setLinkage(LLVM::Linkage::Internal);
      function.removeComdatAttr();
    } else if (auto global = dyn_cast<LLVM::GlobalOp>(copy)) {
      global.setLinkage(LLVM::Linkage::Internal);
      global.removeComdatAttr();
    } else if (auto symbol = dyn_cast<SymbolOpInterface>(copy))
      symbol.setPrivate();
  }
}

struct ConvertHPVMToGPUPass
    : public hpvm::impl::ConvertHPVMToGPUBase<ConvertHPVMToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<tensor_kernels::TilingMode> tiling =
        llvm::StringSwitch<std::optional<tensor_kernels::TilingMode>>(tensorTiles)
            .Case("auto", tensor_kernels::TilingMode::Auto)
            .Case("always", tensor_kernels::TilingMode::Always)
            .Case("never", tensor_kernels::TilingMode::Never)
            .Default(std::nullopt);
    if (!tiling) {
      module.emitError() << "convert-hpvm-to-gpu: tensor-tiles expects auto, "
                            "always or never, found '"
                         << tensorTiles << "'";
      return signalPassFailure();
    }
    SymbolTableCollection symbols;
    BodyChecker checker(module, symbols);
    PerInstanceUses perInstanceUses(module);
    SmallVector<KernelSite, 4> sites;
    llvm::SmallPtrSet<Operation *, 8> tileLeaves;

    // Internal nodes that run as a single instance somewhere (launched
    // roots, unreplicated children): one work-group would have to hold their
    // child's whole grid, so they are no tile kernels; their leaf may be a
    // kernel of its own.
    llvm::DenseSet<StringAttr> singleInstance;
    module.walk([&](Operation *op) {
      if (auto launch = dyn_cast<LaunchOp>(op))
        singleInstance.insert(launch.getRootAttr().getAttr());
      else if (auto create = dyn_cast<CreateNodeOp>(op); create && create.getRank() == 0)
        singleInstance.insert(create.getNodeAttr().getAttr());
    });

    // Tiles first: their leaves are kernel bodies, not kernels of their own.
    for (InternalOp internal : module.getOps<InternalOp>()) {
      if (singleInstance.contains(internal.getSymNameAttr()))
        continue;
      std::string reason;
      FailureOr<TileShape> shape = matchTileShape(internal, symbols, reason);
      // A tile is a kernel when it is hinted for the GPU, or when its
      // instances are: one launch over all its instances, and their queries
      // of the tile's grid, barriers and memory mean what they say.
      if (!hasGPUTarget(internal) &&
          (failed(shape) || !hasGPUTarget(shape->instances)))
        continue;
      if (succeeded(shape))
        reason = checkInputs(internal);
      if (reason.empty()) {
        FailureOr<PerInstancePorts> masks = perInstanceUses.get(internal, reason);
        if (succeeded(masks) && masks->any())
          reason = "it exchanges values per instance with its siblings "
                   "(tile kernels take none)";
      }
      if (reason.empty())
        reason = checkTileMemory(*shape);
      for (const TileAllocator &allocator :
           succeeded(shape) ? ArrayRef(shape->allocators)
                            : ArrayRef<TileAllocator>())
        if (reason.empty())
          reason = checker.checkAllocator(allocator.leaf);
      if (reason.empty())
        reason = checker.checkLeaf(shape->instances, &*shape);
      if (!reason.empty()) {
        internal.emitWarning() << "runs on the CPU: no GPU kernel, because "
                               << reason;
        continue;
      }
      // The tile's leaves are parts of its kernel, not kernels of their own.
      tileLeaves.insert(shape->instances);
      for (const TileAllocator &allocator : shape->allocators)
        tileLeaves.insert(allocator.leaf);
      sites.push_back({internal, shape->instances, std::move(*shape)});
    }
    SmallVector<LeafOp> tensorLeaves;
    for (LeafOp leaf : module.getOps<LeafOp>()) {
      if (isTensorLeaf(leaf)) {
        // Tensor nodes hinted for a device or for the tensor runtime
        // (ApproxHPVM's CUDNN_TARGET / TENSOR_TARGET).
        if (!hasGPUTarget(leaf) &&
            !llvm::is_contained(leaf.getTargets(), Target::tensor))
          continue;
        if (std::string reason = checkTensorLeaf(leaf, module); !reason.empty())
          leaf.emitWarning() << "runs on the CPU: no GPU kernel, because "
                             << reason;
        else
          tensorLeaves.push_back(leaf);
        continue;
      }
      if (!hasGPUTarget(leaf) || tileLeaves.contains(leaf))
        continue;
      std::string reason = checkInputs(leaf);
      FailureOr<PerInstancePorts> masks = PerInstancePorts{};
      if (reason.empty())
        masks = perInstanceUses.get(leaf, reason);
      if (reason.empty())
        reason = checkPerInstancePorts(leaf, *masks);
      if (reason.empty())
        reason = checker.checkLeaf(leaf);
      if (!reason.empty()) {
        leaf.emitWarning() << "runs on the CPU: no GPU kernel, because "
                           << reason;
        continue;
      }
      if (masks->any())
        leaf->setAttr(HPVMDialect::getKernelPerInstanceAttrName(),
                      abi::getPerInstanceMasksAttr(
                          leaf.getContext(), {masks->inputs, masks->outputs}));
      sites.push_back({leaf, leaf, std::nullopt, *masks});
    }
    if (sites.empty() && tensorLeaves.empty())
      return;

    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    SymbolTable(module).insert(kernels);
    KernelBuilder builder(module, kernels);
    for (KernelSite &site : sites)
      site.node->setAttr(HPVMDialect::getKernelAttrName(), builder.build(site));
    for (LeafOp leaf : tensorLeaves) {
      leaf->setAttr(HPVMDialect::getKernelAttrName(),
                    buildTensorKernel(leaf, module, kernels, *tiling));
      // A leaf that is one cuDNN / cuBLAS call also carries the call, which
      // the runtime prefers on CUDA (its kernel stays the fallback).
      if (DictionaryAttr call = matchTensorLibraryCall(leaf))
        leaf->setAttr(HPVMDialect::getTensorLibraryAttrName(), call);
    }
    builder.copyDependencies(checker.getDependencies());
    rewriteMathCalls(kernels);
  }

  static std::string checkPerInstancePorts(NodeOpInterface node,
                                           PerInstancePorts masks) {
    for (auto [index, type] : llvm::enumerate(node.getInputTypes()))
      if ((masks.inputs >> index) & 1) {
        std::string reason = checkPerInstanceType(type);
        if (!reason.empty())
          return "it receives " + reason + " (input " + std::to_string(index) + ")";
      }
    for (auto [index, type] : llvm::enumerate(node.getOutputTypes()))
      if ((masks.outputs >> index) & 1) {
        std::string reason = checkPerInstanceType(type);
        if (!reason.empty())
          return "it sends " + reason + " (output " + std::to_string(index) + ")";
      }
    return "";
  }

  static std::string checkInputs(NodeOpInterface node) {
    for (auto [index, type] : llvm::enumerate(node.getInputTypes())) {
      std::string reason = checkParameterType(type);
      if (!reason.empty())
        return reason + " (input " + std::to_string(index) + ")";
    }
    return "";
  }
};

} // namespace
