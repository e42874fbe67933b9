//===- CPUCodeGen.cpp - Storage types, struct fields, runtime calls -------===//
// The code-generation helper every part of convert-hpvm-to-cpu emits with.
#include "HPVM/Conversion/CPUCodeGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::abi;

CPUCodeGen::CPUCodeGen(ModuleOp module)
    : module(module), context(module.getContext()), typeConverter(context),
      pointerType(LLVM::LLVMPointerType::get(context)) {
  Type i64 = IntegerType::get(context, 64);
  Type triple = LLVM::LLVMArrayType::get(i64, 3);
  frameType =
      LLVM::LLVMStructType::getLiteral(context, {triple, triple, pointerType});
  rangeType = InstanceRange::get(context);
}

Type CPUCodeGen::getStorageType(Type type) {
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

Value CPUCodeGen::toStorage(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  if (isa<MemRefType>(type))
    return UnrealizedConversionCastOp::create(b, loc, getStorageType(type),
                                              value)
        .getResult(0);
  if (type.isIndex())
    return toI64(b, loc, value);
  return value;
}

Value CPUCodeGen::fromStorage(OpBuilder &b, Location loc, Value stored,
                               Type type) {
  if (isa<MemRefType>(type))
    return UnrealizedConversionCastOp::create(b, loc, type, stored)
        .getResult(0);
  if (type.isIndex())
    return toIndex(b, loc, stored);
  return stored;
}

LLVM::LLVMStructType CPUCodeGen::getStorageStruct(TypeRange types,
                                                   ArrayRef<Type> extra) {
  SmallVector<Type> fields;
  for (Type type : types)
    fields.push_back(getStorageType(type));
  fields.append(extra.begin(), extra.end());
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

LLVM::LLVMStructType CPUCodeGen::getLaunchBlockType(NodeOpInterface root) {
  SmallVector<Type> types(root.getInputTypes());
  types.append(root.getOutputTypes().begin(), root.getOutputTypes().end());
  SmallVector<Type> fields{pointerType};
  for (Type type : types)
    fields.push_back(getStorageType(type));
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

Value CPUCodeGen::fieldAddress(OpBuilder &b, Location loc,
                                LLVM::LLVMStructType type, Value base,
                                ArrayRef<LLVM::GEPArg> indices) {
  // The runtime's instance ranges and the frames start with i64[3] arrays.
  unsigned triples = type == frameType   ? 2
                     : type == rangeType ? InstanceRange::kLeadingTriples
                                         : 0;
  return abi::getFieldAddress(b, loc, type, base, indices, triples);
}

Value CPUCodeGen::loadField(OpBuilder &b, Location loc,
                             LLVM::LLVMStructType type, Value base,
                             unsigned index) {
  Value address = fieldAddress(b, loc, type, base, {static_cast<int32_t>(index)});
  return LLVM::LoadOp::create(b, loc, type.getBody()[index], address);
}
void CPUCodeGen::storeField(OpBuilder &b, Location loc,
                             LLVM::LLVMStructType type, Value base,
                             unsigned index, Value value) {
  Value address = fieldAddress(b, loc, type, base, {static_cast<int32_t>(index)});
  LLVM::StoreOp::create(b, loc, value, address);
}

Value CPUCodeGen::allocaInEntry(OpBuilder &b, Location loc, Type type) {
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

Value CPUCodeGen::i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(value));
}

Value CPUCodeGen::i32Constant(OpBuilder &b, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

Value CPUCodeGen::nullPointer(OpBuilder &b, Location loc) {
  return LLVM::ZeroOp::create(b, loc, pointerType);
}

/// The size of `type` from the address of element 1 of a null array of it.
Value CPUCodeGen::sizeOf(OpBuilder &b, Location loc, Type type) {
  Value end = LLVM::GEPOp::create(b, loc, pointerType, type, nullPointer(b, loc),
                                  ArrayRef<LLVM::GEPArg>{1});
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), end);
}

Value CPUCodeGen::allocateFrame(OpBuilder &b, Location loc,
                                 ArrayRef<Value> extents, Value parentFrame) {
  Value frame = allocaInEntry(b, loc, frameType);
  for (int32_t d = 0; d < 3; ++d) {
    LLVM::StoreOp::create(b, loc, extents[d],
                          fieldAddress(b, loc, frameType, frame, {FrameExtents, d}));
    LLVM::StoreOp::create(b, loc, i64Constant(b, loc, 0),
                          fieldAddress(b, loc, frameType, frame, {FrameIds, d}));
  }
  LLVM::StoreOp::create(b, loc, parentFrame,
                        fieldAddress(b, loc, frameType, frame, {FrameParent}));
  return frame;
}

Value CPUCodeGen::allocateSingleInstanceFrame(OpBuilder &b, Location loc,
                                               Value parentFrame) {
  Value one = i64Constant(b, loc, 1);
  return allocateFrame(b, loc, {one, one, one}, parentFrame);
}

Value CPUCodeGen::toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value CPUCodeGen::toIndex(OpBuilder &b, Location loc, Value i64) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i64);
}

Value CPUCodeGen::callRuntime(OpBuilder &b, Location loc, RuntimeFn fn,
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

std::string CPUCodeGen::uniqueName(StringRef base) {
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

LLVM::GlobalOp CPUCodeGen::createStringGlobal(OpBuilder &b, Location loc,
                                               StringRef base, StringRef text) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, uniqueName(base),
                                b.getStringAttr(text));
}

Value CPUCodeGen::nodeNameString(OpBuilder &b, Location loc,
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

Value CPUCodeGen::whereString(OpBuilder &b, Location loc, StringRef what) {
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

void CPUCodeGen::checkStatus(OpBuilder &b, Location loc, Value status,
                              StringRef what) {
  callRuntime(b, loc, RuntimeFn::CheckAt, {status, whereString(b, loc, what)});
}
