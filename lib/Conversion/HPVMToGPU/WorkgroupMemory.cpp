//===- WorkgroupMemory.cpp - Work-group memory parameters of kernels ------===//
// Memrefs over the work-group memory a kernel takes as parameters
// (WorkgroupMemory.h).
#include "WorkgroupMemory.h"

#include "HPVM/Conversion/RuntimeABI.h"

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
  using abi::MemRefDescriptorField;
  auto insert = [&](Value value, MemRefDescriptorField::Field field,
                    std::optional<int64_t> d = std::nullopt) {
    descriptor = abi::insertMemRefField(b, loc, descriptor, field, value, d);
  };
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, value);
  };
  insert(memory, MemRefDescriptorField::Allocated);
  insert(memory, MemRefDescriptorField::Aligned);
  insert(constant(0), MemRefDescriptorField::Offset);
  SmallVector<Value> sizes;
  unsigned dynamic = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size)
                        ? Value(arith::IndexCastOp::create(
                              b, loc, i64, dynamicSizes[dynamic++]))
                        : constant(size));
  Value stride = constant(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    insert(sizes[d], MemRefDescriptorField::Sizes, d);
    insert(stride, MemRefDescriptorField::Strides, d);
    stride = LLVM::MulOp::create(b, loc, stride, sizes[d]);
  }
  auto workgroupType =
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(),
                      b.getI64IntegerAttr(kWorkgroupAddressSpace));
  return UnrealizedConversionCastOp::create(b, loc, workgroupType, descriptor)
      .getResult(0);
}
