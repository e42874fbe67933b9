//===- KernelCalls.cpp - hpvm.tensor ops as calls of the runtime's kernels ===//
// Convolutions and matrix products in f32 call the runtime's packed kernels
// (runtime/src/tensor): an operand is read through `bufferization.to_buffer`
// (read-only, identity layout: bufferization copies a strided view first),
// the result is a fresh `memref.alloc` the call fills and the leaf reads back
// through `bufferization.to_tensor restrict`; buffers pass as their aligned
// pointers (identity layout, offset 0) and shapes as i64 constants.
#include "KernelCalls.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// The external declaration of `name` taking `pointers` !llvm.ptr and then
/// `integers` i64 arguments, created at the end of the module when missing.
func::FuncOp declareKernel(Operation *from, StringRef name, unsigned pointers,
                           unsigned integers) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<Type> inputs(pointers, LLVM::LLVMPointerType::get(ctx));
  inputs.append(integers, IntegerType::get(ctx, 64));
  auto function = func::FuncOp::create(b, from->getLoc(), name,
                                       b.getFunctionType(inputs, {}));
  function.setPrivate();
  return function;
}

/// The aligned pointer of `buffer` as an !llvm.ptr.
Value pointerOf(OpBuilder &b, Location loc, Value buffer) {
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value integer = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                  integer);
}

/// The aligned pointer of the read-only, identity-layout buffer of `tensor`.
Value readPointer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      b.getUnitAttr());
  return pointerOf(b, loc, buffer);
}

Value i64(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 64);
}

/// Calls `name` with the pointers of `inputs` and of a fresh result buffer of
/// `resultType`, then `integers`; returns the result as a tensor.
Value callKernel(OpBuilder &b, Operation *op, StringRef name, ValueRange inputs,
                 RankedTensorType resultType, ArrayRef<int64_t> integers) {
  Location loc = op->getLoc();
  func::FuncOp kernel =
      declareKernel(op, name, inputs.size() + 1, integers.size());
  SmallVector<Value> arguments;
  for (Value input : inputs)
    arguments.push_back(readPointer(b, loc, input));
  auto bufferType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value result = memref::AllocOp::create(b, loc, bufferType);
  arguments.push_back(pointerOf(b, loc, result));
  for (int64_t value : integers)
    arguments.push_back(i64(b, loc, value));
  func::CallOp::create(b, loc, kernel, arguments);
  return bufferization::ToTensorOp::create(b, loc, resultType, result,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

SmallVector<int64_t> getInts(ArrayAttr attr) {
  SmallVector<int64_t> values;
  for (Attribute a : attr)
    values.push_back(cast<IntegerAttr>(a).getInt());
  return values;
}

bool isF32(Type type) {
  return cast<RankedTensorType>(type).getElementType().isF32();
}
} // namespace

Value mlir::hpvm::buildKernelCall(OpBuilder &b, Operation *op) {
  if (auto conv = dyn_cast<TensorConv2DOp>(op)) {
    if (!isF32(conv.getType()) || !isF32(conv.getInput().getType()) ||
        !isF32(conv.getFilter().getType()))
      return {};
    auto input = cast<RankedTensorType>(conv.getInput().getType());
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    auto result = cast<RankedTensorType>(conv.getType());
    SmallVector<int64_t> padding = getInts(conv.getPadding());
    SmallVector<int64_t> strides = getInts(conv.getStrides());
    return callKernel(
        b, op, "hpvm_rt_tensor_conv2d_f32", {conv.getInput(), conv.getFilter()},
        result,
        {input.getDimSize(0), input.getDimSize(1), input.getDimSize(2),
         input.getDimSize(3), filter.getDimSize(0), filter.getDimSize(2),
         filter.getDimSize(3), result.getDimSize(2), result.getDimSize(3),
         padding[0], padding[1], strides[0], strides[1],
         static_cast<int64_t>(conv.getGroups())});
  }
  if (auto mul = dyn_cast<TensorMulOp>(op)) {
    if (!isF32(mul.getType()) || !isF32(mul.getLhs().getType()) ||
        !isF32(mul.getRhs().getType()))
      return {};
    auto lhs = cast<RankedTensorType>(mul.getLhs().getType());
    auto result = cast<RankedTensorType>(mul.getType());
    int64_t rank = result.getRank(), batch = 1;
    for (int64_t d = 0; d < rank - 2; ++d)
      batch *= result.getDimSize(d);
    return callKernel(b, op, "hpvm_rt_tensor_matmul_f32",
                      {mul.getLhs(), mul.getRhs()}, result,
                      {batch, result.getDimSize(rank - 2),
                       result.getDimSize(rank - 1), lhs.getDimSize(rank - 1)});
  }
  return {};
}
