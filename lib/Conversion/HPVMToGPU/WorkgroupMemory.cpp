//===- WorkgroupMemory.cpp - Work-group memory parameters of kernels ------===//
// Memrefs over the work-group memory a kernel takes as parameters
// (WorkgroupMemory.h).
#include "WorkgroupMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

Value mlir::hpvm::viewWorkgroupMemory(OpBuilder &b, Location loc,
                                      MemRefType type, Value memory,
                                      ValueRange dynamicSizes) {
  MLIRContext *context = b.getContext();
  auto i64 = b.getI64Type();
  // The descriptor the LLVM lowering expects: both pointers, offset 0, the
  // sizes and the row-major strides.
  SmallVector<Type> fields(2, memory.getType());
  fields.push_back(i64);
  int64_t rank = type.getRank();
  if (rank) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto descriptorType = LLVM::LLVMStructType::getLiteral(context, fields);
  Value descriptor = LLVM::PoisonOp::create(b, loc, descriptorType);
  auto insert = [&](Value value, ArrayRef<int64_t> position) {
    descriptor =
        LLVM::InsertValueOp::create(b, loc, descriptor, value, position);
  };
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, value);
  };
  insert(memory, {0});
  insert(memory, {1});
  insert(constant(0), {2});
  SmallVector<Value> sizes;
  unsigned dynamic = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size)
                        ? Value(arith::IndexCastOp::create(
                              b, loc, i64, dynamicSizes[dynamic++]))
                        : constant(size));
  Value stride = constant(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    insert(sizes[d], {3, d});
    insert(stride, {4, d});
    stride = LLVM::MulOp::create(b, loc, stride, sizes[d]);
  }
  auto workgroupType =
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(),
                      b.getI64IntegerAttr(kWorkgroupAddressSpace));
  return UnrealizedConversionCastOp::create(b, loc, workgroupType, descriptor)
      .getResult(0);
}
