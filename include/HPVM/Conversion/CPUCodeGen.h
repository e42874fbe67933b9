//===- CPUCodeGen.h - Code generation helper of the CPU backend -*- C++ -*-===//
// What every part of convert-hpvm-to-cpu emits with: values in storage form,
// struct fields, constants, runtime calls and their status checks, unique
// symbol names and the string globals of run-time messages. It owns the caches
// of the module's runtime declarations and string globals.
#ifndef HPVM_CONVERSION_CPUCODEGEN_H
#define HPVM_CONVERSION_CPUCODEGEN_H

#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::hpvm {

/// The symbol name of a node definition.
inline StringRef nodeName(NodeOpInterface node) {
  return cast<SymbolOpInterface>(node.getOperation()).getName();
}

/// "@name" of a node or symbol for run-time messages, a C++ name demangled
/// without its parameters ("@root", not "@_Z4rootPfm").
inline std::string atName(StringRef symbol) { return "@" + getNodeDisplayName(symbol); }
inline std::string atName(NodeOpInterface node) { return atName(nodeName(node)); }

/// Index of the fields of a frame ({ i64 ids[3], i64 extents[3], ptr parent }).
enum FrameField : int32_t { FrameIds = 0, FrameExtents = 1, FrameParent = 2 };

/// The code-generation helper of one module's CPU lowering. Values cross
/// runtime calls (parallel-for contexts, launch blocks, stream items) in
/// "storage" form: memrefs as their LLVM descriptors, index as i64, other
/// LLVM-compatible types as themselves.
class CPUCodeGen {
public:
  explicit CPUCodeGen(ModuleOp module);

  ModuleOp getModule() { return module; }
  MLIRContext *getContext() { return context; }
  LLVM::LLVMPointerType getPointerType() { return pointerType; }
  /// The frame of one instance of an internal node, seen by its descendants:
  /// { i64 ids[3], i64 extents[3], ptr parent }.
  LLVM::LLVMStructType getFrameType() { return frameType; }

  //===--------------------------------------------------------------------===//
  // Types and values in storage form
  //===--------------------------------------------------------------------===//

  /// The storage type of `type`, or null when the CPU backend cannot pass it.
  Type getStorageType(Type type);
  Value toStorage(OpBuilder &b, Location loc, Value value);
  Value fromStorage(OpBuilder &b, Location loc, Value stored, Type type);
  /// A struct of the storage types of `types` followed by `extra` fields.
  LLVM::LLVMStructType getStorageStruct(TypeRange types,
                                        ArrayRef<Type> extra = {});
  /// The layout of a launch block of `root`, which hpvm_rt_launch hands to
  /// the root's entry function: { ptr launch, inputs..., outputs... }.
  LLVM::LLVMStructType getLaunchBlockType(NodeOpInterface root);

  /// Pointer to field `index` of the struct `type` at `base`.
  Value fieldAddress(OpBuilder &b, Location loc, LLVM::LLVMStructType type,
                     Value base, ArrayRef<LLVM::GEPArg> indices);
  Value loadField(OpBuilder &b, Location loc, LLVM::LLVMStructType type,
                  Value base, unsigned index);
  void storeField(OpBuilder &b, Location loc, LLVM::LLVMStructType type,
                  Value base, unsigned index, Value value);
  /// One stack slot of `type` in the entry block of the enclosing function.
  Value allocaInEntry(OpBuilder &b, Location loc, Type type);
  Value i64Constant(OpBuilder &b, Location loc, int64_t value);
  Value i32Constant(OpBuilder &b, Location loc, int32_t value);
  Value nullPointer(OpBuilder &b, Location loc);
  /// The size in bytes of `type` as an i64 value.
  Value sizeOf(OpBuilder &b, Location loc, Type type);
  Value toI64(OpBuilder &b, Location loc, Value index);
  Value toIndex(OpBuilder &b, Location loc, Value i64);

  /// A frame with ids 0 and the i64 `extents` (3) below `parentFrame`.
  Value allocateFrame(OpBuilder &b, Location loc, ArrayRef<Value> extents,
                      Value parentFrame);
  /// A frame for a single instance (ids 0, extents 1) below `parentFrame`.
  Value allocateSingleInstanceFrame(OpBuilder &b, Location loc, Value parentFrame);

  //===--------------------------------------------------------------------===//
  // The runtime
  //===--------------------------------------------------------------------===//

  /// Calls the runtime function `fn` (declared on first use, with its
  /// signature in RuntimeABI.h) and returns its result, or null for void
  /// functions.
  Value callRuntime(OpBuilder &b, Location loc, abi::RuntimeFn fn, ValueRange args);
  /// Exits the program with the status's message (and `loc`) if it is an error.
  void checkStatus(OpBuilder &b, Location loc, Value status, StringRef what);
  /// The address of a global holding "file:line:col: what" (NUL-terminated),
  /// one global per text.
  Value whereString(OpBuilder &b, Location loc, StringRef what);
  /// The address of a global holding the node's name (NUL-terminated).
  Value nodeNameString(OpBuilder &b, Location loc, NodeOpInterface node);

  //===--------------------------------------------------------------------===//
  // Symbols
  //===--------------------------------------------------------------------===//

  /// `base`, or `base_N` when a symbol of the module has that name.
  std::string uniqueName(StringRef base);
  /// A constant internal global holding `text` (which carries its NUL), named
  /// uniquely after `base`, at the start of the module.
  LLVM::GlobalOp createStringGlobal(OpBuilder &b, Location loc, StringRef base,
                                    StringRef text);

protected:
  ModuleOp module;
  MLIRContext *context;
  LLVMTypeConverter typeConverter;
  LLVM::LLVMPointerType pointerType;
  LLVM::LLVMStructType frameType;
  LLVM::LLVMStructType rangeType;

private:
  unsigned nameCounter = 0;
  /// Symbol names taken in the module (uniqueName), collected on first use.
  llvm::StringSet<> usedNames;
  bool namesCollected = false;
  /// Runtime functions declared so far (callRuntime), by RuntimeFn.
  DenseMap<unsigned, LLVM::LLVMFuncOp> runtimeFunctions;
  /// The name globals of nodeNameString.
  DenseMap<Operation *, LLVM::GlobalOp> nodeNames;
  /// The globals of whereString, by text.
  llvm::StringMap<LLVM::GlobalOp> whereStrings;
};

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_CPUCODEGEN_H
