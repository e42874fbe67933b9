//===- CPULowering.cpp - Storage types, runtime calls, grid checks --------===//
// The helpers every part of convert-hpvm-to-cpu uses.
#include "CPULowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

// #hpvm.access values are hpvm_rt_access_t values (and the C API's
// MlirHPVMAccess): an access mode crosses every layer as the same number.
static_assert(static_cast<int>(Access::in) == HPVM_RT_ACCESS_IN);
static_assert(static_cast<int>(Access::out) == HPVM_RT_ACCESS_OUT);
static_assert(static_cast<int>(Access::inout) == HPVM_RT_ACCESS_INOUT);

CPULowering::CPULowering(ModuleOp module)
    : module(module), context(module.getContext()), typeConverter(context),
      pointerType(LLVM::LLVMPointerType::get(context)) {
  Type i64 = IntegerType::get(context, 64);
  Type triple = LLVM::LLVMArrayType::get(i64, 3);
  frameType =
      LLVM::LLVMStructType::getLiteral(context, {triple, triple, pointerType});
  rangeType = InstanceRange::get(context);
  for (Operation &op : module.getOps())
    if (op.getNumRegions() && !isa<NodeOpInterface>(op))
      hostCode.push_back(&op);
}

Type CPULowering::getStorageType(Type type) {
  if (isa<MemRefType>(type))
    return typeConverter.convertType(type);
  if (type.isIndex())
    return IntegerType::get(context, 64);
  if (type.isIntOrFloat() || isa<LLVM::LLVMPointerType>(type))
    return type;
  if (auto vector = dyn_cast<VectorType>(type))
    if (vector.getRank() == 1 && !vector.isScalable() &&
        vector.getElementType().isIntOrFloat())
      return type;
  return {};
}

Value CPULowering::toStorage(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  if (isa<MemRefType>(type))
    return UnrealizedConversionCastOp::create(b, loc, getStorageType(type),
                                              value)
        .getResult(0);
  if (type.isIndex())
    return toI64(b, loc, value);
  return value;
}

Value CPULowering::fromStorage(OpBuilder &b, Location loc, Value stored,
                               Type type) {
  if (isa<MemRefType>(type))
    return UnrealizedConversionCastOp::create(b, loc, type, stored)
        .getResult(0);
  if (type.isIndex())
    return toIndex(b, loc, stored);
  return stored;
}

LLVM::LLVMStructType CPULowering::getStorageStruct(TypeRange types,
                                                   ArrayRef<Type> extra) {
  SmallVector<Type> fields;
  for (Type type : types)
    fields.push_back(getStorageType(type));
  fields.append(extra.begin(), extra.end());
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

Value CPULowering::fieldAddress(OpBuilder &b, Location loc,
                                LLVM::LLVMStructType type, Value base,
                                ArrayRef<LLVM::GEPArg> indices) {
  auto constant = [](LLVM::GEPArg index) -> std::optional<int32_t> {
    if (isa<LLVM::GEPConstantIndex>(index))
      return static_cast<int32_t>(cast<LLVM::GEPConstantIndex>(index));
    return std::nullopt;
  };
  // The first field (and the first element of a leading array) is at the
  // base itself.
  if (llvm::all_of(indices, [&](LLVM::GEPArg index) { return constant(index) == 0; }))
    return base;
  // The runtime's frames and instance ranges start with i64[3] arrays:
  // address their elements as i64 words (what LLVM canonicalizes to anyway).
  if ((type == frameType || type == rangeType) && indices.size() == 2) {
    std::optional<int32_t> field = constant(indices[0]), element = constant(indices[1]);
    // Only the i64[3] arrays: the frame's first two fields, the box's first three.
    int32_t arrays = type == frameType ? 2 : 3;
    if (field && element && *field < arrays && *element < 3)
      return LLVM::GEPOp::create(b, loc, pointerType, b.getI64Type(), base,
                                 ArrayRef<LLVM::GEPArg>{*field * 3 + *element});
  }
  SmallVector<LLVM::GEPArg> all{0};
  all.append(indices.begin(), indices.end());
  return LLVM::GEPOp::create(b, loc, pointerType, type, base, all);
}

Value CPULowering::loadField(OpBuilder &b, Location loc,
                             LLVM::LLVMStructType type, Value base,
                             unsigned index) {
  Value address = fieldAddress(b, loc, type, base, {static_cast<int32_t>(index)});
  return LLVM::LoadOp::create(b, loc, type.getBody()[index], address);
}
Value CPULowering::readGridOutput(OpBuilder &b, Location loc, Operation *node,
                                  unsigned port, ValueRange inputs, Value slots,
                                  TypeRange outputTypes) {
  if (std::optional<unsigned> passedOn = getPassedOnInput(node, port))
    return inputs[*passedOn];
  return fromStorage(
      b, loc, loadField(b, loc, getStorageStruct(outputTypes), slots, port),
      outputTypes[port]);
}

void CPULowering::storeField(OpBuilder &b, Location loc,
                             LLVM::LLVMStructType type, Value base,
                             unsigned index, Value value) {
  Value address = fieldAddress(b, loc, type, base, {static_cast<int32_t>(index)});
  LLVM::StoreOp::create(b, loc, value, address);
}

Value CPULowering::allocaInEntry(OpBuilder &b, Location loc, Type type) {
  // Allocas in the entry block are allocated once per call, not per loop trip.
  Operation *parent = b.getInsertionBlock()->getParentOp();
  if (!isa<FunctionOpInterface>(parent))
    parent = parent->getParentOfType<FunctionOpInterface>();
  Block *entry = &parent->getRegion(0).front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value one = i64Constant(b, loc, 1);
  return LLVM::AllocaOp::create(b, loc, pointerType, type, one);
}

Value CPULowering::i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(value));
}

Value CPULowering::i32Constant(OpBuilder &b, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

Value CPULowering::nullPointer(OpBuilder &b, Location loc) {
  return LLVM::ZeroOp::create(b, loc, pointerType);
}

/// The size of `type` from the address of element 1 of a null array of it.
Value CPULowering::sizeOf(OpBuilder &b, Location loc, Type type) {
  Value end = LLVM::GEPOp::create(b, loc, pointerType, type, nullPointer(b, loc),
                                  ArrayRef<LLVM::GEPArg>{1});
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), end);
}

Value CPULowering::toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value CPULowering::toIndex(OpBuilder &b, Location loc, Value i64) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i64);
}

Value CPULowering::callRuntime(OpBuilder &b, Location loc, RuntimeFn fn,
                               ValueRange args) {
  // Declared once per module: lookupOrCreate scans the module each time.
  LLVM::LLVMFuncOp &declaration = runtimeFunctions[static_cast<unsigned>(fn)];
  if (!declaration) {
    FailureOr<LLVM::LLVMFuncOp> function = abi::lookupOrCreate(b, module, fn);
    // The declarations are ours; a clash with a user symbol is a user error
    // that lookupOrCreate reports.
    if (failed(function))
      return {};
    declaration = *function;
    usedNames.insert(abi::getName(fn));
  }
  auto call = LLVM::CallOp::create(b, loc, declaration, args);
  return call.getNumResults() ? call.getResult() : Value();
}

std::string CPULowering::uniqueName(StringRef base) {
  // The names in the module, collected once: a symbol lookup per generated
  // name would scan the module each time (quadratic in the number of nodes).
  if (!namesCollected) {
    for (Operation &op : module.getBody()->getOperations())
      if (auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        usedNames.insert(name.getValue());
    namesCollected = true;
  }
  std::string name = base.str();
  while (usedNames.contains(name))
    name = (base + "_" + Twine(nameCounter++)).str();
  usedNames.insert(name);
  return name;
}

LLVM::GlobalOp CPULowering::createStringGlobal(OpBuilder &b, Location loc,
                                               StringRef base, StringRef text) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, uniqueName(base),
                                b.getStringAttr(text));
}

Value CPULowering::nodeNameString(OpBuilder &b, Location loc,
                                  NodeOpInterface node) {
  LLVM::GlobalOp &global = nodeNames[node.getOperation()];
  if (!global) {
    StringRef name = cast<SymbolOpInterface>(node.getOperation()).getName();
    std::string text = getNodeDisplayName(name);
    text.push_back('\0');
    global = createStringGlobal(b, loc, ("__hpvm_node_" + name).str(), text);
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

Value CPULowering::whereString(OpBuilder &b, Location loc, StringRef what) {
  // "file:line:col: what" names the HPVM op that failed in the message.
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn() << ": ";
  os << what;
  text.push_back('\0');
  // One global per text: the siblings of a wide graph share theirs.
  LLVM::GlobalOp &global = whereStrings[text];
  if (!global)
    global = createStringGlobal(b, loc, "__hpvm_where", text);
  return LLVM::AddressOfOp::create(b, loc, global);
}

void CPULowering::checkStatus(OpBuilder &b, Location loc, Value status,
                              StringRef what) {
  callRuntime(b, loc, RuntimeFn::CheckAt, {status, whereString(b, loc, what)});
}

//===----------------------------------------------------------------------===//
// Grids against the arrays their leaves index (shared by every way to run a grid)
//===----------------------------------------------------------------------===//

void CPULowering::findGridAccesses() {
  for (auto leaf : module.getOps<LeafOp>()) {
    if (leaf.getBody().empty())
      continue;
    SmallVector<std::tuple<unsigned, unsigned, unsigned>> accesses;
    Block &entry = leaf.getBodyBlock();
    auto note = [&](Value memref, ValueRange indices) {
      auto input = dyn_cast<BlockArgument>(memref);
      if (!input || input.getOwner() != &entry)
        return;
      for (auto [axis, index] : llvm::enumerate(indices)) {
        auto id = index.getDefiningOp<InstanceIdOp>();
        if (!id || id.getLevel() != 0)
          continue;
        auto access = std::make_tuple(input.getArgNumber(), unsigned(axis),
                                      static_cast<unsigned>(id.getDim()));
        if (!llvm::is_contained(accesses, access))
          accesses.push_back(access);
      }
    };
    // Only the entry block's own ops run in every instance: an access under a
    // condition (`if (i < n)`) may be how the leaf handles a larger grid.
    for (Operation &op : entry) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        note(load.getMemRef(), load.getIndices());
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        note(store.getMemRef(), store.getIndices());
    }
    if (!accesses.empty())
      gridAccesses[leaf] = std::move(accesses);
  }
}

void CPULowering::checkGridFitsInputs(OpBuilder &b, Location loc, LeafOp leaf,
                                      ValueRange dims, ValueRange inputs,
                                      uint64_t perInstanceInputs) {
  auto found = gridAccesses.find(leaf);
  if (found == gridAccesses.end())
    return;
  for (auto [input, axis, dim] : found->second) {
    // A value per instance is not the array the instances share.
    if (dim >= dims.size() || input >= inputs.size() ||
        (input < 64 && (perInstanceInputs >> input & 1)))
      continue;
    Value array = inputs[input];
    if (!isa<MemRefType>(array.getType()))
      continue;
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    Value size = arith::IndexCastOp::create(
        b, loc, i64, memref::DimOp::create(b, loc, array, axis).getResult());
    Value extent = arith::IndexCastOp::create(b, loc, i64, dims[dim]);
    auto i32Constant = [&](unsigned value) {
      return arith::ConstantIntOp::create(b, loc, i32, value).getResult();
    };
    Value status = callRuntime(b, loc, RuntimeFn::GridFits, {nodeNameString(b, loc, leaf), i32Constant(dim), extent,
                                i32Constant(input), i32Constant(axis), size});
    checkStatus(b, loc, status, "running " + atName(leaf.getSymName()));
  }
}
