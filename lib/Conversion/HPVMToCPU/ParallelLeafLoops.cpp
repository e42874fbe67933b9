//===- ParallelLeafLoops.cpp - The hpvm-parallel-leaf-loops pass ----------===//
// The large parallel loops of leaves instantiated once run on the runtime's
// pool: outlined into a body hpvm_rt_parallel_for calls with boxes of their
// outer dimensions (Passes.td).
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "HPVM/Dialect/HPVM/IR/ImageChunks.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMPARALLELLEAFLOOPS
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// How many outer dimensions of a loop the pool splits (the rest run whole
/// in each call): two give enough boxes for a batch of one (channels) and
/// keep each box's inner loops long.
constexpr unsigned kSplitDimensions = 2;

/// The names of the leaves some hpvm.create_node instantiates with a grid.
llvm::StringSet<> leavesWithGrids(ModuleOp module) {
  llvm::StringSet<> names;
  module.walk([&](CreateNodeOp create) {
    if (!create.getDims().empty())
      names.insert(create.getNode());
  });
  return names;
}

/// Whether a value the loop uses can travel in its context: a buffer (as its
/// descriptor), an index or a scalar.
bool canTravel(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.getMemorySpace() == nullptr;
  return type.isIndex() || type.isIntOrFloat();
}

/// Values a constant-like op makes are rebuilt in the body, not carried.
bool isRebuilt(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         (def->hasTrait<::mlir::OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(def));
}

/// The work estimate of `op`: its iterations times the ops of its body (at
/// least one); nullopt when a loop range is not static.
std::optional<int64_t> estimateWork(linalg::LinalgOp op) {
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    iterations *= range;
  }
  int64_t ops = 0;
  op->getRegion(0).walk([&](Operation *) { ++ops; });
  return iterations * std::max<int64_t>(ops - 1, 1);
}

/// How many leading dimensions of `op` (at most kSplitDimensions) the pool
/// may split: parallel, and each indexes every output (projected permutation
/// maps), so that two boxes never write one element; none when an output is
/// also read through another map (the loop order would matter).
unsigned splittableDimensions(linalg::LinalgOp op) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap outputMap = op.getMatchingIndexingMap(&init);
    if (!outputMap.isProjectedPermutation())
      return 0;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() && op.getMatchingIndexingMap(input) != outputMap)
        return 0;
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned count = 0;
  for (; count < kSplitDimensions && count < iterators.size(); ++count) {
    if (!linalg::isParallelIterator(iterators[count]))
      break;
    bool everyOutput = llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      return op.getMatchingIndexingMap(&init).isFunctionOfDim(count);
    });
    if (!everyOutput)
      break;
  }
  return count;
}

/// How many dimensions of `op` (a generic, a transpose, a fill, ... — the
/// kernels are calls by now) the pool splits (splittableDimensions), or 0
/// when it does not qualify: on buffers, every value from above it
/// transportable, enough work.
unsigned qualifies(linalg::LinalgOp op, int64_t minWork) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 || op->getNumRegions() != 1)
    return 0;
  for (Value operand : op->getOperands())
    if (!canTravel(operand.getType()))
      return 0;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegion(0), above);
  if (!llvm::all_of(above, [](Value v) { return canTravel(v.getType()) || isRebuilt(v); }))
    return 0;
  std::optional<int64_t> work = estimateWork(op);
  return work && *work >= minWork ? splittableDimensions(op) : 0;
}

/// Builds the parallel-for bodies of one module and the calls to them.
class Outliner {
public:
  explicit Outliner(ModuleOp module)
      : module(module), context(module.getContext()), converter(context) {}

  /// Replaces `loop` (an scf.parallel at the top of `leaf`'s body, bounds
  /// 0..n step 1 in its first dimensions) by a call of hpvm_rt_parallel_for.
  LogicalResult outline(LeafOp leaf, scf::ParallelOp loop, unsigned splittable);

private:
  Type storageType(Type type) {
    if (isa<MemRefType>(type))
      return converter.convertType(type);
    return type.isIndex() ? IntegerType::get(context, 64) : type;
  }
  LLVM::LLVMFuncOp createBody(LeafOp leaf, scf::ParallelOp loop, ArrayRef<Value> carried,
                              LLVM::LLVMStructType contextType, unsigned rank);
  Value packContext(OpBuilder &b, Location loc, LeafOp leaf, ArrayRef<Value> carried,
                    LLVM::LLVMStructType contextType);
  Value whereString(OpBuilder &b, Location loc, StringRef leafName);
  /// `base`_N with the first N naming no symbol of the module.
  std::string uniqueName(StringRef base) {
    std::string name;
    do
      name = (base + "_" + Twine(counter++)).str();
    while (module.lookupSymbol(name));
    return name;
  }

  ModuleOp module;
  MLIRContext *context;
  LLVMTypeConverter converter;
  unsigned counter = 0;
};

Value Outliner::whereString(OpBuilder &b, Location loc, StringRef leafName) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn() << ": ";
  os << "a parallel loop of leaf @" << leafName;
  text.push_back('\0');
  return LLVM::createGlobalString(loc, b, uniqueName("__hpvm_where_loop"), text,
                                  LLVM::Linkage::Internal);
}

LLVM::LLVMFuncOp Outliner::createBody(LeafOp leaf, scf::ParallelOp loop,
                                      ArrayRef<Value> carried,
                                      LLVM::LLVMStructType contextType,
                                      unsigned rank) {
  Location loc = loop.getLoc();
  OpBuilder b(context);
  b.setInsertionPoint(leaf);
  auto type = abi::getFunctionType(context, abi::RuntimeCallback::ParallelForFn);
  auto body = LLVM::LLVMFuncOp::create(
      b, loc, uniqueName(("__hpvm_loop_" + leaf.getSymName()).str()), type,
      LLVM::Linkage::Internal);
  Block *entry = body.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value contextArg = entry->getArgument(0), rangeArg = entry->getArgument(1);
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);

  IRMapping mapping;
  for (auto [index, value] : llvm::enumerate(carried)) {
    Value address = LLVM::GEPOp::create(
        b, loc, ptrType, contextType, contextArg,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    Type stored = contextType.getBody()[index];
    Value field = LLVM::LoadOp::create(b, loc, stored, address);
    if (isa<MemRefType>(value.getType()))
      field = UnrealizedConversionCastOp::create(b, loc, value.getType(), field)
                  .getResult(0);
    else if (value.getType().isIndex())
      field = arith::IndexCastOp::create(b, loc, b.getIndexType(), field);
    mapping.map(value, field);
  }
  // Constants and globals the loop uses are made again here.
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(loop->getRegions(), above);
  for (Value operand : loop->getOperands())
    above.insert(operand);
  for (Value value : above)
    if (!mapping.contains(value))
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));

  // Range dimension d (x = 0 innermost) is loop dimension rank - 1 - d.
  auto bound = [&](abi::InstanceRange::Field field, unsigned d) -> Value {
    Value address = abi::getFieldGEP<abi::InstanceRange>(b, loc, rangeArg, field,
                                                         static_cast<int32_t>(d));
    Value value = LLVM::LoadOp::create(b, loc, i64, address);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  };
  auto clone = cast<scf::ParallelOp>(b.clone(*loop, mapping));
  b.setInsertionPoint(clone);
  SmallVector<Value> lower(clone.getLowerBound()), upper(clone.getUpperBound());
  for (unsigned d = 0; d < rank; ++d) {
    lower[rank - 1 - d] = bound(abi::InstanceRange::Begin, d);
    upper[rank - 1 - d] = bound(abi::InstanceRange::End, d);
  }
  clone.getLowerBoundMutable().assign(lower);
  clone.getUpperBoundMutable().assign(upper);
  b.setInsertionPointAfter(clone);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return body;
}

Value Outliner::packContext(OpBuilder &b, Location loc, LeafOp leaf,
                            ArrayRef<Value> carried, LLVM::LLVMStructType contextType) {
  auto ptrType = LLVM::LLVMPointerType::get(context);
  Value one;
  Value storage;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&leaf.getBody().front());
    one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
    storage = LLVM::AllocaOp::create(b, loc, ptrType, contextType, one);
  }
  for (auto [index, value] : llvm::enumerate(carried)) {
    Value stored = value;
    if (isa<MemRefType>(value.getType()))
      stored = UnrealizedConversionCastOp::create(b, loc, storageType(value.getType()), value)
                   .getResult(0);
    else if (value.getType().isIndex())
      stored = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
    Value address = LLVM::GEPOp::create(
        b, loc, ptrType, contextType, storage,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    LLVM::StoreOp::create(b, loc, stored, address);
  }
  return storage;
}

LogicalResult Outliner::outline(LeafOp leaf, scf::ParallelOp loop,
                                unsigned splittable) {
  unsigned rank = std::min<unsigned>(loop.getNumLoops(), splittable);
  SmallVector<int64_t> extents;
  for (unsigned d = 0; d < rank; ++d) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[d]);
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound()[d]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[d]);
    if (!lower || !upper || !step || *lower != 0 || *step != 1)
      return failure();
    extents.push_back(*upper);
  }
  // Carried: what the loop uses from the leaf, but constants and globals.
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(loop->getRegions(), above);
  SmallVector<Value> carried;
  for (Value value : above)
    if (!isRebuilt(value))
      carried.push_back(value);
  SmallVector<Type> fields = llvm::map_to_vector(
      carried, [&](Value value) { return storageType(value.getType()); });
  if (fields.empty())
    fields.push_back(IntegerType::get(context, 8));
  auto contextType = LLVM::LLVMStructType::getLiteral(context, fields);

  LLVM::LLVMFuncOp body = createBody(leaf, loop, carried, contextType, rank);
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value contextPtr = packContext(b, loc, leaf, carried, contextType);
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64 = b.getI64Type();
  auto extentsType = abi::Uint64Array::get(context);
  Value extentsPtr;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&leaf.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
    extentsPtr = LLVM::AllocaOp::create(b, loc, ptrType, extentsType, one);
  }
  // Range dimension d (x = 0 innermost) is loop dimension rank - 1 - d.
  for (unsigned d = 0; d < 3; ++d) {
    Value extent =
        LLVM::ConstantOp::create(b, loc, i64, d < rank ? extents[rank - 1 - d] : 1);
    Value address = abi::Uint64Array::getElementAddress(b, loc, extentsType, extentsPtr,
                                                        static_cast<int32_t>(d));
    LLVM::StoreOp::create(b, loc, extent, address);
  }
  Value function = LLVM::AddressOfOp::create(b, loc, body);
  Value rankValue = LLVM::ConstantOp::create(b, loc, b.getI32Type(), rank);
  Value status = abi::call(b, loc, module, abi::RuntimeFn::ParallelFor,
                           {rankValue, extentsPtr, function, contextPtr});
  if (!status)
    return failure();
  abi::call(b, loc, module, abi::RuntimeFn::CheckAt,
            {status, whereString(b, loc, leaf.getSymName())});
  loop.erase();
  return success();
}

struct ParallelLeafLoopsPass
    : public hpvm::impl::HPVMParallelLeafLoopsBase<ParallelLeafLoopsPass> {
  using HPVMParallelLeafLoopsBase::HPVMParallelLeafLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> withGrids = leavesWithGrids(module);
    Outliner outliner(module);
    IRRewriter rewriter(&getContext());
    for (LeafOp leaf : llvm::make_early_inc_range(module.getOps<LeafOp>())) {
      if (leaf.getBody().empty() || withGrids.contains(leaf.getSymName()))
        continue;
      SmallVector<std::pair<linalg::LinalgOp, unsigned>> candidates;
      // The leaf's loops, and those of the loops over chunks of images
      // (hpvm-tile-tensor-batch) in it.
      auto collect = [&](Block &block) {
        for (Operation &op : block)
          if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
            if (unsigned splittable = qualifies(linalgOp, minWork))
              candidates.push_back({linalgOp, splittable});
      };
      collect(leaf.getBody().front());
      for (auto loop : leaf.getBody().front().getOps<scf::ForOp>())
        if (loop->hasAttr(kImageChunksAttrName))
          collect(*loop.getBody());
      for (auto [candidate, splittable] : candidates) {
        rewriter.setInsertionPoint(candidate);
        FailureOr<linalg::LinalgLoops> loops =
            linalg::linalgOpToParallelLoops(rewriter, candidate);
        if (failed(loops) || loops->empty())
          continue;
        auto outer = dyn_cast<scf::ParallelOp>(loops->front());
        rewriter.eraseOp(candidate);
        if (!outer || failed(outliner.outline(leaf, outer, splittable)))
          continue; // the loops stay, sequential: still correct
      }
    }
  }
};

} // namespace
