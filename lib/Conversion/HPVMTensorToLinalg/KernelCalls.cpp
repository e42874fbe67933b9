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
/// The external declaration of `name` with `inputs`, created at the end of the
/// module when missing.
func::FuncOp declareKernel(Operation *from, StringRef name, TypeRange inputs) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
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

/// What a kernel applies after its sums: a bias (a tensor of one value per
/// filter or column) and an activation, absorbed from the ops that follow.
struct Epilogue {
  Value bias;
  int64_t activation = 0; // hpvm_rt_tensor_activation_t
  double max = 0.0;
  /// The op whose result the call replaces, and the absorbed ops (in order).
  Value result;
  SmallVector<Operation *> absorbed;
};

/// True when `value` is available at `op` (an argument of its block or
/// defined before it in the block), or made so: a constant defined later in
/// the block (a fused leaf's bias comes after the convolution) moves up.
bool makeAvailableAt(Value value, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op->getBlock();
  Operation *def = value.getDefiningOp();
  if (def->getBlock() != op->getBlock())
    return false;
  if (def->isBeforeInBlock(op))
    return true;
  if (!def->hasTrait<::mlir::OpTrait::ConstantLike>() || def->getNumOperands() != 0)
    return false;
  def->moveBefore(op);
  return true;
}

/// The bias add and activation that consume `op`'s result alone. A bias must
/// have the shape `biasShape` (a per-filter [1, F, 1, 1] or a per-column
/// [1, ..., N]) and be available where the call goes.
Epilogue findEpilogue(Operation *op, ArrayRef<int64_t> biasShape) {
  Epilogue epilogue;
  epilogue.result = op->getResult(0);
  auto single = [](Value v) -> Operation * {
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  };
  if (auto add = dyn_cast_or_null<TensorAddOp>(single(epilogue.result))) {
    Value other = add.getLhs() == epilogue.result ? add.getRhs() : add.getLhs();
    auto otherType = cast<RankedTensorType>(other.getType());
    if (other != epilogue.result && otherType.getElementType().isF32() &&
        otherType.getShape() == biasShape &&
        add.getType() == epilogue.result.getType() && makeAvailableAt(other, op)) {
      epilogue.bias = other;
      epilogue.absorbed.push_back(add);
      epilogue.result = add.getResult();
    }
  }
  Operation *next = single(epilogue.result);
  if (isa_and_nonnull<TensorReluOp>(next)) {
    epilogue.activation = 1;
  } else if (auto clipped = dyn_cast_or_null<TensorClippedReluOp>(next)) {
    epilogue.activation = 2;
    epilogue.max = clipped.getMax().convertToDouble();
  }
  if (epilogue.activation) {
    epilogue.absorbed.push_back(next);
    epilogue.result = next->getResult(0);
  }
  return epilogue;
}

/// Calls `name` with the pointers of `inputs`, of the epilogue's bias (or
/// null) and of a fresh result buffer of `resultType`, then `integers`, the
/// activation and its bound; replaces the epilogue's result by the call's and
/// erases `op` and the absorbed ops (recorded in `lowered`).
void callKernel(OpBuilder &b, Operation *op, StringRef name, ValueRange inputs,
                RankedTensorType resultType, ArrayRef<int64_t> integers,
                const Epilogue &epilogue,
                llvm::SmallPtrSetImpl<Operation *> &lowered) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Type pointer = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> types(inputs.size() + 2, pointer);
  types.append(integers.size() + 1, b.getI64Type());
  types.push_back(b.getF64Type());
  func::FuncOp kernel = declareKernel(op, name, types);
  SmallVector<Value> arguments;
  for (Value input : inputs)
    arguments.push_back(readPointer(b, loc, input));
  arguments.push_back(epilogue.bias ? readPointer(b, loc, epilogue.bias)
                                    : LLVM::ZeroOp::create(b, loc, pointer).getResult());
  auto bufferType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value result = memref::AllocOp::create(b, loc, bufferType);
  arguments.push_back(pointerOf(b, loc, result));
  for (int64_t value : integers)
    arguments.push_back(i64(b, loc, value));
  arguments.push_back(i64(b, loc, epilogue.activation));
  arguments.push_back(arith::ConstantOp::create(b, loc, b.getF64FloatAttr(epilogue.max)));
  func::CallOp::create(b, loc, kernel, arguments);
  Value tensor = bufferization::ToTensorOp::create(b, loc, resultType, result,
                                                   /*restrict=*/true,
                                                   /*writable=*/true);
  Value replaced = epilogue.result;
  replaced.replaceAllUsesWith(tensor);
  for (Operation *absorbed : llvm::reverse(epilogue.absorbed)) {
    lowered.insert(absorbed);
    absorbed->erase();
  }
  lowered.insert(op);
  op->erase();
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

/// An f32 pool as hpvm_rt_tensor_pool_f32(input, output, kind, n, c, h, w,
/// window, strides, padding, oh, ow).
void callPoolKernel(OpBuilder &b, TensorPoolOp pool,
                    llvm::SmallPtrSetImpl<Operation *> &lowered) {
  Location loc = pool.getLoc();
  Type pointer = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> types(2, pointer);
  types.append(13, b.getI64Type());
  func::FuncOp kernel = declareKernel(pool, "hpvm_rt_tensor_pool_f32", types);
  auto input = cast<RankedTensorType>(pool.getInput().getType());
  auto resultType = cast<RankedTensorType>(pool.getType());
  SmallVector<int64_t> window = getInts(pool.getWindow());
  SmallVector<int64_t> strides = getInts(pool.getStrides());
  SmallVector<int64_t> padding = getInts(pool.getPadding());
  // hpvm_rt_tensor_pool_kind_t.
  int64_t kind = pool.getKind() == PoolKind::max ? 0 : pool.getKind() == PoolKind::min ? 1 : 2;
  Value result = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), resultType.getElementType()));
  SmallVector<Value> arguments = {readPointer(b, loc, pool.getInput()),
                                  pointerOf(b, loc, result)};
  for (int64_t value :
       {kind, input.getDimSize(0), input.getDimSize(1), input.getDimSize(2),
        input.getDimSize(3), window[0], window[1], strides[0], strides[1], padding[0],
        padding[1], resultType.getDimSize(2), resultType.getDimSize(3)})
    arguments.push_back(i64(b, loc, value));
  func::CallOp::create(b, loc, kernel, arguments);
  Value tensor = bufferization::ToTensorOp::create(b, loc, resultType, result,
                                                   /*restrict=*/true, /*writable=*/true);
  pool.getResult().replaceAllUsesWith(tensor);
  lowered.insert(pool);
  pool->erase();
}
} // namespace

bool mlir::hpvm::lowerToKernelCall(Operation *op,
                                   llvm::SmallPtrSetImpl<Operation *> &lowered) {
  OpBuilder b(op);
  if (auto pool = dyn_cast<TensorPoolOp>(op)) {
    if (!isF32(pool.getType()) || !isF32(pool.getInput().getType()))
      return false;
    callPoolKernel(b, pool, lowered);
    return true;
  }
  if (auto conv = dyn_cast<TensorConv2DOp>(op)) {
    if (!isF32(conv.getType()) || !isF32(conv.getInput().getType()) ||
        !isF32(conv.getFilter().getType()))
      return false;
    auto input = cast<RankedTensorType>(conv.getInput().getType());
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    auto result = cast<RankedTensorType>(conv.getType());
    SmallVector<int64_t> padding = getInts(conv.getPadding());
    SmallVector<int64_t> strides = getInts(conv.getStrides());
    int64_t perFilter[] = {1, result.getDimSize(1), 1, 1};
    callKernel(b, op, "hpvm_rt_tensor_conv2d_f32", {conv.getInput(), conv.getFilter()},
               result,
               {input.getDimSize(0), input.getDimSize(1), input.getDimSize(2),
                input.getDimSize(3), filter.getDimSize(0), filter.getDimSize(2),
                filter.getDimSize(3), result.getDimSize(2), result.getDimSize(3),
                padding[0], padding[1], strides[0], strides[1],
                static_cast<int64_t>(conv.getGroups())},
               findEpilogue(op, perFilter), lowered);
    return true;
  }
  if (auto mul = dyn_cast<TensorMulOp>(op)) {
    if (!isF32(mul.getType()) || !isF32(mul.getLhs().getType()) ||
        !isF32(mul.getRhs().getType()))
      return false;
    auto lhs = cast<RankedTensorType>(mul.getLhs().getType());
    auto result = cast<RankedTensorType>(mul.getType());
    int64_t rank = result.getRank(), batch = 1;
    for (int64_t d = 0; d < rank - 2; ++d)
      batch *= result.getDimSize(d);
    SmallVector<int64_t> perColumn(rank, 1);
    perColumn.back() = result.getDimSize(rank - 1);
    callKernel(b, op, "hpvm_rt_tensor_matmul_f32", {mul.getLhs(), mul.getRhs()}, result,
               {batch, result.getDimSize(rank - 2), result.getDimSize(rank - 1),
                lhs.getDimSize(rank - 1)},
               findEpilogue(op, perColumn), lowered);
    return true;
  }
  return false;
}
