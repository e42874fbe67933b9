//===- TensorKernels.cpp - Tensor nodes as device kernels -----------------===//
// One thread per element of a tensor leaf's outputs; each tensor op's element
// is built from its operands' elements where it is needed (TensorKernels.h).
#include "TensorKernels.h"
#include "TensorElements.h"
#include "TensorPerforation.h"
#include "TensorTiling.h"
#include "WorkgroupMemory.h"

#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Conversion/TensorScalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>


using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::tensor_kernels;

namespace {

std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Why the region of a map or reduce has no element form, or "".
std::string checkScalarRegion(Region &region) {
  for (Operation &op : region.front()) {
    if (isa<TensorYieldOp>(op))
      continue;
    Dialect *dialect = op.getDialect();
    if (op.getNumRegions() || !dialect ||
        !isa<arith::ArithDialect, math::MathDialect>(dialect))
      return "its region computes with '" + op.getName().getStringRef().str() +
             "' (arith and math only)";
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (operand.getParentRegion() != &region &&
          !(def && def->hasTrait<::mlir::OpTrait::ConstantLike>()))
        return "its region reads a value defined outside it";
    }
  }
  return "";
}

/// Why the tensor op `op` has no element form in a kernel, or "".
std::string checkTensorOp(Operation *op, ElementwiseValues &known) {
  std::string name = op->getName().getStringRef().str();
  auto elementwiseOperands = [&](ValueRange operands) -> std::string {
    for (Value operand : operands)
      if (isa<RankedTensorType>(operand.getType()) && !isElementwise(operand, known))
        return "its '" + name +
               "' reads the result of a reduction (a kernel would compute it "
               "again for every use)";
    return "";
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<TensorConv2DOp, TensorMulOp, TensorSoftmaxOp>(
          [&](Operation *reducing) {
            return elementwiseOperands(reducing->getOperands());
          })
      .Case([&](TensorReduceOp reduce) {
        std::string reason = elementwiseOperands(reduce.getInput());
        Operation *init = reduce.getInit().getDefiningOp();
        if (reason.empty() &&
            !(init && init->hasTrait<::mlir::OpTrait::ConstantLike>()))
          reason = "its 'hpvm.tensor.reduce' starts from a value that is not "
                   "a constant";
        return reason.empty() ? checkScalarRegion(reduce.getCombiner()) : reason;
      })
      .Case([&](TensorPoolOp pool) -> std::string {
        // A pool of a reduction computes an element of it once per window
        // that holds it: per dimension ceil(window / stride), or fewer when
        // there are fewer windows (a global pool: one). At most 4 in all
        // (a 3x3 stride-2 max pool after a convolution: 2.25 on average).
        if (isElementwise(pool.getInput(), known))
          return "";
        SmallVector<int64_t> window = getInts(pool.getWindow());
        SmallVector<int64_t> strides = getInts(pool.getStrides());
        ArrayRef<int64_t> out = tensorType(pool.getResult()).getShape();
        int64_t windows = 1;
        for (unsigned d = 0; d < 2; ++d)
          windows *= std::min<int64_t>(
              llvm::divideCeilSigned(window[d], strides[d]), out[2 + d]);
        if (windows <= 4)
          return "";
        return "its 'hpvm.tensor.pool' reads the result of a reduction in up "
               "to " + std::to_string(windows) +
               " overlapping windows (a kernel would compute it again for "
               "every window; at most 4)";
      })
      .Case([&](TensorMapOp map) { return checkScalarRegion(map.getMapper()); })
      .Case<TensorAddOp, TensorBatchNormOp>([](Operation *) { return ""; })
      .Default([&](Operation *other) -> std::string {
        if (scalars::isActivation(other))
          return "";
        return "it computes with '" + name + "' (no element form on devices)";
      });
}

/// Whether `type` is a scalar a tensor kernel takes or returns as itself:
/// integers of whole bytes and floats.
bool isKernelScalar(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() % 8 == 0;
  return isa<FloatType>(type);
}

/// The most ops the element expression of one output may take.
constexpr uint64_t kMaxEmitted = 4096;

/// How many tensor ops the element of `value` takes, each use of a value
/// counted (as the emitter builds it again), at most kMaxEmitted + 1.
uint64_t emittedSize(Value value, DenseMap<Value, uint64_t> &sizes) {
  if (auto it = sizes.find(value); it != sizes.end())
    return it->second;
  uint64_t size = 1;
  Operation *def = value.getDefiningOp();
  if (def && !isa<arith::ConstantOp>(def))
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        size = std::min(size + emittedSize(operand, sizes), kMaxEmitted + 1);
  sizes[value] = size;
  return size;
}

/// Whether `op` is a reshape a kernel reads through: tensor.collapse_shape
/// or tensor.expand_shape of static shapes.
bool isStaticReshape(Operation *op) {
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return false;
  return cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape() &&
         cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape();
}

/// Why the interface of `leaf` does not suit a tensor kernel, or "". Tensors
/// are statically shaped, of one float type, the outputs of one shape;
/// scalars (HPVM-C passes each tensor with its size in bytes) are inputs the
/// tensor ops do not read and outputs that are constants or inputs.
std::string checkInterface(LeafOp leaf, Type &element) {
  auto check = [&](Type type, const std::string &where) -> std::string {
    if (!isa<TensorType>(type)) {
      if (!isKernelScalar(type))
        return "its " + where + " is a " + describe(type) +
               " (tensor kernels take float tensors, integers of whole bytes "
               "and floats)";
      return "";
    }
    auto tensor = cast<TensorType>(type);
    if (!tensor.hasStaticShape() || !isa<FloatType>(tensor.getElementType()))
      return "its " + where + " is a " + describe(type) +
             " (tensor kernels take statically shaped float tensors)";
    if (!element)
      element = tensor.getElementType();
    if (tensor.getElementType() != element)
      return "its tensors have elements of more than one type (" +
             describe(element) + " and " + describe(tensor.getElementType()) +
             ")";
    return "";
  };
  Block &body = leaf.getBody().front();
  for (auto [index, type] : llvm::enumerate(leaf.getInputTypes())) {
    std::string where = "input " + std::to_string(index);
    if (std::string reason = check(type, where); !reason.empty())
      return reason;
    if (!isa<TensorType>(type) &&
        llvm::any_of(body.getArgument(index).getUsers(),
                     [](Operation *user) { return !isa<ReturnOp>(user); }))
      return "its tensor ops read its scalar " + where;
  }
  auto ret = cast<ReturnOp>(body.getTerminator());
  ArrayRef<int64_t> shape;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    std::string where = "output " + std::to_string(index);
    if (std::string reason = check(value.getType(), where); !reason.empty())
      return reason;
    if (auto tensor = dyn_cast<RankedTensorType>(value.getType())) {
      if (!shape.empty() && tensor.getShape() != shape)
        return "its outputs differ in shape (one thread per element of all)";
      shape = tensor.getShape();
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (def && !(def->hasTrait<::mlir::OpTrait::ConstantLike>() &&
                 def->getNumOperands() == 0))
      return "its scalar " + where +
             " is computed (tensor kernels return constants and inputs)";
  }
  if (shape.empty() && !llvm::any_of(ret.getOperandTypes(), llvm::IsaPred<TensorType>))
    return "it has no tensor output";
  return "";
}

/// Makes the constant tables (weights) of `leaf` globals the host passes to
/// its kernel, named in its `hpvm.tensor_kernel`; returns the tables.
SmallVector<Value> makeTableGlobals(LeafOp leaf, ModuleOp module) {
  OpBuilder b(leaf);
  SymbolTable symbols(module);
  SmallVector<Value> tables;
  SmallVector<Attribute> globals;
  for (auto constant : leaf.getBody().front().getOps<arith::ConstantOp>()) {
    if (!isTableConstant(constant))
      continue;
    auto tensor = cast<RankedTensorType>(constant.getType());
    auto global = memref::GlobalOp::create(
        b, leaf.getLoc(),
        ("__hpvm_tensor_constant_" + leaf.getSymName() + "_" +
         Twine(globals.size()))
            .str(),
        b.getStringAttr("private"),
        MemRefType::get(tensor.getShape(), tensor.getElementType()),
        constant.getValue(), /*constant=*/true, b.getI64IntegerAttr(64));
    symbols.insert(global);
    tables.push_back(constant);
    globals.push_back(FlatSymbolRefAttr::get(global.getSymNameAttr()));
  }
  leaf->setAttr(HPVMDialect::getTensorKernelAttrName(), b.getArrayAttr(globals));
  return tables;
}

/// Stores the element `id` (row-major) of each tensor output.
void emitElements(ElementEmitter &emitter, Value id, ValueRange values,
                  ValueRange outputs) {
  OpBuilder &b = emitter.builder();
  Location loc = emitter.location();
  SmallVector<Value> indices = emitter.delinearize(
      id, cast<RankedTensorType>(values.front().getType()).getShape());
  for (auto [value, output] : llvm::zip(values, outputs)) {
    // A product with a precision knob, its bias and activation: the result
    // rounded to the format once, as the runtime's kernels round it.
    emitter.roundedAtStore = getRoundedProduct(value);
    Value element = emitter.emit(value, indices);
    if (emitter.roundedAtStore)
      element = emitter.roundTo(*getPrecision(emitter.roundedAtStore), element);
    memref::StoreOp::create(b, loc, element, output, indices);
  }
}

/// The parameter types of a tensor kernel in the order the host passes them
/// (RuntimeABI.h, KernelShape::Tensor), and where each group starts.
struct TensorParameters {
  SmallVector<Type> types;
  DenseMap<unsigned, unsigned> starts;
  unsigned first(abi::KernelParamGroup group) const {
    return starts.lookup(static_cast<unsigned>(group));
  }
};

/// Inputs, constants (`tables`) and tensor outputs as memrefs, scalars as
/// themselves, the grid, a pointer to the struct of the scalar outputs
/// (which the first thread stores) and the work-group memory `tileMemory`.
TensorParameters layoutTensorParameters(Block &body, ArrayRef<Value> tables,
                                        ArrayRef<Value> tensorOutputs,
                                        ArrayRef<Value> scalarOutputs,
                                        ArrayRef<MemRefType> tileMemory) {
  MLIRContext *context = body.getParent()->getContext();
  auto memrefOf = [](Type type) -> Type {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };
  TensorParameters layout;
  SmallVector<Type> &types = layout.types;
  for (abi::KernelParamGroup group :
       abi::getKernelParamGroups(abi::KernelShape::Tensor)) {
    layout.starts[static_cast<unsigned>(group)] = types.size();
    switch (group) {
    case abi::KernelParamGroup::Inputs:
      for (Value input : body.getArguments())
        types.push_back(isa<TensorType>(input.getType()) ? memrefOf(input.getType())
                                                         : input.getType());
      break;
    case abi::KernelParamGroup::Constants:
      for (Value table : tables)
        types.push_back(memrefOf(table.getType()));
      break;
    case abi::KernelParamGroup::OutputBuffers:
      for (Value output : tensorOutputs)
        types.push_back(memrefOf(output.getType()));
      break;
    case abi::KernelParamGroup::GridExtents:
      types.append(3, IntegerType::get(context, 64));
      break;
    case abi::KernelParamGroup::Outputs:
      if (!scalarOutputs.empty())
        types.push_back(LLVM::LLVMPointerType::get(context));
      break;
    case abi::KernelParamGroup::WorkgroupMemory:
      types.append(tileMemory.size(),
                   LLVM::LLVMPointerType::get(context, kWorkgroupAddressSpace));
      break;
    case abi::KernelParamGroup::AncestorQueries:
    case abi::KernelParamGroup::PerInstanceOutputs:
      llvm_unreachable("not a group of tensor kernels");
    }
  }
  return layout;
}

} // namespace

bool mlir::hpvm::isTensorLeaf(LeafOp leaf) {
  return llvm::any_of(
      llvm::concat<const Type>(leaf.getInputTypes(), leaf.getOutputTypes()),
      [](Type type) { return isa<TensorType>(type); });
}

std::string mlir::hpvm::checkTensorLeaf(LeafOp leaf, ModuleOp module) {
  if (!leaf.getBody().hasOneBlock())
    return "its body has more than one block";
  Type element;
  if (std::string reason = checkInterface(leaf, element); !reason.empty())
    return reason;
  std::string reason;
  module.walk([&](CreateNodeOp create) {
    if (reason.empty() && create.getNodeAttr().getAttr() == leaf.getSymNameAttr() &&
        create.getRank() != 0)
      reason = "it is created with a grid (a tensor node runs as one instance)";
  });
  if (!reason.empty())
    return reason;
  ElementwiseValues known;
  for (Operation &op : leaf.getBody().front()) {
    if (isa<ReturnOp>(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isa<RankedTensorType>(constant.getType())) {
      if (cast<RankedTensorType>(constant.getType()).getElementType() != element)
        return "it has a constant of " + describe(constant.getType());
      continue;
    }
    // Scalar constants: a reduction's start, a returned size.
    if (op.hasTrait<::mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0 &&
        op.getNumResults() == 1 && isKernelScalar(op.getResult(0).getType()))
      continue;
    if (isStaticReshape(&op))
      continue;
    if (!isa<HPVMDialect>(op.getDialect()) ||
        !op.getName().getStringRef().starts_with("hpvm.tensor."))
      return "it computes with '" + op.getName().getStringRef().str() +
             "' (tensor ops only)";
    for (Type type : llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.getElementType() != element)
        return "its '" + op.getName().getStringRef().str() +
               "' mixes element types";
    if (std::string why = checkTensorOp(&op, known); !why.empty())
      return why;
  }
  std::optional<PerforatedConv> perforated;
  if (std::string reason = checkPerforation(leaf, perforated); !reason.empty())
    return reason;
  // A value used twice is built twice: a kernel whose element takes more
  // than kMaxEmitted ops (2^n of them after n ops that each use the last
  // twice) is not built.
  DenseMap<Value, uint64_t> sizes;
  auto ret = cast<ReturnOp>(leaf.getBody().front().getTerminator());
  for (Value value : ret.getOperands())
    if (isa<TensorType>(value.getType()) &&
        emittedSize(value, sizes) > kMaxEmitted)
      return "its element would take more than " + std::to_string(kMaxEmitted) +
             " ops (values used more than once are computed again for each "
             "use)";
  return "";
}

SymbolRefAttr mlir::hpvm::buildTensorKernel(LeafOp leaf, ModuleOp module,
                                            gpu::GPUModuleOp kernels,
                                            TilingMode tiling) {
  MLIRContext *context = module.getContext();
  Location loc = leaf.getLoc();
  Block &body = leaf.getBody().front();
  OpBuilder b(context);
  SmallVector<Value> tables = makeTableGlobals(leaf, module);

  auto ret = cast<ReturnOp>(body.getTerminator());
  SmallVector<Value> tensorOutputs, scalarOutputs;
  for (Value value : ret.getOperands())
    (isa<TensorType>(value.getType()) ? tensorOutputs : scalarOutputs)
        .push_back(value);
  // A tiled product: its operand slices in work-group memory, one parameter
  // each (WorkgroupMemory.h), sized by the leaf's hpvm.tensor_launch.
  std::optional<TiledProduct> tiled = getTiledProduct(leaf, tiling);
  std::optional<PerforatedConv> perforated;
  (void)checkPerforation(leaf, perforated);
  if (perforated)
    leaf->setAttr(HPVMDialect::getTensorLaunchAttrName(),
                  b.getDenseI64ArrayAttr({perforated->getThreads(), 0}));
  SmallVector<MemRefType, 3> tileMemory;
  if (tiled) {
    tileMemory = getTileMemoryTypes(context, *tiled);
    SmallVector<int64_t> launch{tiled->getWorkgroups() * kTileThreads,
                                kTileThreads};
    for (MemRefType type : tileMemory)
      launch.push_back(type.getNumElements() *
                       type.getElementTypeBitWidth() / 8);
    leaf->setAttr(HPVMDialect::getTensorLaunchAttrName(),
                  b.getDenseI64ArrayAttr(launch));
  }
  TensorParameters layout =
      layoutTensorParameters(body, tables, tensorOutputs, scalarOutputs, tileMemory);
  b.setInsertionPointToEnd(kernels.getBody());
  auto func = gpu::GPUFuncOp::create(
      b, loc, leaf.getSymName(), FunctionType::get(context, layout.types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SymbolTable(kernels).insert(func);
  Block *entry = &func.getBody().front();
  auto parametersOf = [&](abi::KernelParamGroup group, size_t count) {
    return entry->getArguments().slice(layout.first(group), count);
  };
  IRMapping memory;
  IRMapping scalars;
  for (auto [input, parameter] :
       llvm::zip(body.getArguments(), parametersOf(abi::KernelParamGroup::Inputs,
                                                   body.getNumArguments()))) {
    if (isa<TensorType>(input.getType()))
      memory.map(input, parameter);
    else
      scalars.map(input, parameter);
  }
  memory.map(tables, parametersOf(abi::KernelParamGroup::Constants, tables.size()));
  ValueRange outputs =
      parametersOf(abi::KernelParamGroup::OutputBuffers, tensorOutputs.size());
  Value elements = parametersOf(abi::KernelParamGroup::GridExtents, 3).front();

  b.setInsertionPointToStart(entry);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockDim = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block, blockDim), thread);
  ElementEmitter emitter(b, loc, memory);
  if (tiled) {
    // Every thread of a work-group runs the tile (barriers).
    func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({kTileThreads, 1, 1}));
    ValueRange tileParameters =
        parametersOf(abi::KernelParamGroup::WorkgroupMemory, tileMemory.size());
    SmallVector<Value, 3> views;
    for (auto [type, parameter] : llvm::zip(tileMemory, tileParameters))
      views.push_back(viewWorkgroupMemory(b, loc, type, parameter, {}));
    emitTiledProduct(b, loc, emitter, *tiled, views, outputs.front());
  } else {
    // One thread per element (per run of a perforated convolution);
    // threads past the last return.
    Value count = arith::IndexCastOp::create(b, loc, b.getIndexType(), elements);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, count);
    auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    if (perforated)
      emitPerforated(emitter, *perforated, id, outputs.front());
    else
      emitElements(emitter, id, tensorOutputs, outputs);
  }
  b.setInsertionPointToEnd(entry);
  if (!scalarOutputs.empty()) {
    // The first thread stores the scalar outputs (inputs or constants).
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, id,
                                        arith::ConstantIndexOp::create(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    auto fields = LLVM::LLVMStructType::getLiteral(
        context, llvm::map_to_vector(scalarOutputs,
                                     [](Value v) { return v.getType(); }));
    Value base = parametersOf(abi::KernelParamGroup::Outputs, 1).front();
    for (auto [index, value] : llvm::enumerate(scalarOutputs)) {
      Value stored = scalars.lookupOrNull(value);
      if (!stored)
        stored = b.clone(*value.getDefiningOp())->getResult(0);
      Value field = LLVM::GEPOp::create(
          b, loc, LLVM::LLVMPointerType::get(context), fields, base,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
      LLVM::StoreOp::create(b, loc, stored, field);
    }
  }
  gpu::ReturnOp::create(b, loc);
  return SymbolRefAttr::get(kernels.getSymNameAttr(),
                            {FlatSymbolRefAttr::get(func.getNameAttr())});
}
