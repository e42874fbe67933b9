//===- KernelCalls.cpp - hpvm.tensor ops as calls of the runtime's kernels ===//
// Convolutions, matrix products and pools in f32 call the runtime's kernels
// (runtime/src/tensor): an operand is read through `bufferization.to_buffer`
// (read-only, identity layout: bufferization copies a strided view first),
// the result is a fresh `memref.alloc` the call fills and the leaf reads back
// through `bufferization.to_tensor restrict`; buffers pass as their aligned
// pointers (identity layout, offset 0) and shapes as i64 constants. The
// activation and pool kinds are hpvm_rt.h's own constants.
#include "KernelCalls.h"
#include "LowerTensorOps.h"

#include "HPVM/Dialect/HPVM/Analysis/ElementwiseForms.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "HPVM/Conversion/RuntimeABI.h"

using namespace mlir;
using namespace mlir::hpvm;

Value mlir::hpvm::pointerOf(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value address;
  if (type.getLayout().isIdentity()) {
    address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  } else {
    // A view into a larger buffer: its base's aligned pointer plus its offset.
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, metadata.getBaseBuffer());
    Value bytes = arith::ConstantIndexOp::create(
        b, loc, static_cast<int64_t>(type.getElementTypeBitWidth() / 8));
    address = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, metadata.getOffset(), bytes));
  }
  Value integer = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                  integer);
}

namespace {

/// The aligned pointer of the read-only buffer of `tensor`, dense in
/// row-major order: an identity-layout buffer, or, for a slice, a run of
/// images of a larger one (a chunk of a batch, hpvm-tile-tensor-batch) read
/// in place.
Value readPointer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  MemRefLayoutAttrInterface layout;
  if (tensor.getDefiningOp<tensor::ExtractSliceOp>()) {
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (int64_t d = type.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * type.getDimSize(d + 1);
    layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  }
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType(), layout), tensor,
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
  int64_t activation = HPVM_RT_TENSOR_IDENTITY;
  double max = 0.0;
  /// The op whose result the call replaces, and the absorbed ops (in order).
  Value result;
  SmallVector<Operation *> absorbed;
};

/// True when `value` is available at `op` (an argument of its block or of a
/// block around it, or defined before it there), or made so: a constant
/// defined later (a fused leaf's bias comes after the convolution) moves up.
bool makeAvailableAt(RewriterBase &rewriter, Value value, Operation *op) {
  Block *owner = isa<BlockArgument>(value) ? cast<BlockArgument>(value).getOwner()
                                            : value.getDefiningOp()->getBlock();
  // `op`, or the op around it, in the block that holds `value`.
  Operation *anchor = owner->findAncestorOpInBlock(*op);
  if (!anchor)
    return false;
  if (isa<BlockArgument>(value))
    return true;
  Operation *def = value.getDefiningOp();
  if (def == anchor)
    return false;
  if (def->isBeforeInBlock(anchor))
    return true;
  if (!def->hasTrait<::mlir::OpTrait::ConstantLike>() || def->getNumOperands() != 0)
    return false;
  rewriter.moveOpBefore(def, anchor);
  return true;
}

/// The product `y` of `x` and `s` as a tensor map whose region is one mulf of
/// its two elements (either order), or null.
TensorMapOp productOf(Operation *y, Value x, Value s) {
  auto map = dyn_cast_or_null<TensorMapOp>(y);
  if (!map || map->getNumOperands() != 2 || map.getType() != x.getType())
    return {};
  Value lhs = map->getOperand(0), rhs = map->getOperand(1);
  if (!((lhs == x && rhs == s) || (lhs == s && rhs == x)))
    return {};
  Block &body = map.getMapper().front();
  if (body.getNumArguments() != 2 || body.getOperations().size() != 2)
    return {};
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto yield = dyn_cast<TensorYieldOp>(body.getTerminator());
  if (!mul || !yield || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != mul.getResult() ||
      mul.getFastmath() != arith::FastMathFlags::none)
    return {};
  Value a = mul.getLhs(), b = mul.getRhs();
  Value e0 = body.getArgument(0), e1 = body.getArgument(1);
  return (a == e0 && b == e1) || (a == e1 && b == e0) ? map : TensorMapOp();
}

/// The logistic activations after `result`: a sigmoid used once (SIGMOID),
/// or a sigmoid whose input and result feed one product and nothing else
/// (SILU: x * sigmoid(x), as ONNX writes it). The ops go to `absorbed`;
/// returns the activation's result, or null.
Value findLogistic(Value result, int64_t &activation,
                   SmallVectorImpl<Operation *> &absorbed) {
  TensorSigmoidOp sigmoid;
  Operation *other = nullptr;
  for (Operation *user : result.getUsers()) {
    if (auto s = dyn_cast<TensorSigmoidOp>(user); s && !sigmoid)
      sigmoid = s;
    else if (!other)
      other = user;
    else
      return {};
  }
  if (!sigmoid || sigmoid.getType() != result.getType() || !sigmoid->hasOneUse())
    return {};
  if (!other) {
    activation = HPVM_RT_TENSOR_SIGMOID;
    absorbed.push_back(sigmoid);
    return sigmoid.getResult();
  }
  TensorMapOp product = productOf(other, result, sigmoid.getResult());
  // The result used by the product once (not as both operands).
  if (!product || *sigmoid->getUsers().begin() != product.getOperation() ||
      llvm::count(product->getOperands(), result) != 1)
    return {};
  activation = HPVM_RT_TENSOR_SILU;
  absorbed.push_back(sigmoid);
  absorbed.push_back(product);
  return product.getResult();
}

/// The bias add and activation that consume `op`'s result alone. A bias must
/// have the shape `biasShape` (a per-filter [1, F, 1, 1] or a per-column
/// [1, ..., N]) and be available where the call goes. `logistic`: sigmoid
/// and SiLU may be absorbed too (exact f32 kernels only: a knob's
/// interpolation or rounding would come before them unfused, after fused).
Epilogue findEpilogue(RewriterBase &rewriter, Operation *op,
                      ArrayRef<int64_t> biasShape, bool logistic) {
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
        add.getType() == epilogue.result.getType() &&
        makeAvailableAt(rewriter, other, op)) {
      epilogue.bias = other;
      epilogue.absorbed.push_back(add);
      epilogue.result = add.getResult();
    }
  }
  Operation *next = single(epilogue.result);
  if (isa_and_nonnull<TensorReluOp>(next)) {
    epilogue.activation = HPVM_RT_TENSOR_RELU;
  } else if (auto clipped = dyn_cast_or_null<TensorClippedReluOp>(next)) {
    epilogue.activation = HPVM_RT_TENSOR_CLIPPED_RELU;
    epilogue.max = clipped.getMax().convertToDouble();
  }
  // HardSwish as the importer writes it (a map the kernels compute operation for operation),
  // exact f32 kernels only, as the logistic ones.
  auto hardSwish = dyn_cast_or_null<TensorMapOp>(next);
  if (logistic && hardSwish && hardSwish.getType() == epilogue.result.getType() &&
      isHardSwishMap(hardSwish))
    epilogue.activation = HPVM_RT_TENSOR_HARDSWISH;
  if (epilogue.activation != HPVM_RT_TENSOR_IDENTITY) {
    epilogue.absorbed.push_back(next);
    epilogue.result = next->getResult(0);
  } else if (logistic) {
    if (Value result =
            findLogistic(epilogue.result, epilogue.activation, epilogue.absorbed))
      epilogue.result = result;
  }
  return epilogue;
}

/// Calls the kernel `kernel` at `op` with `pointers`, the pointer of a fresh
/// buffer of `resultType` and then `trailing` (declared as RuntimeABI.h says);
/// returns that buffer read back as a tensor.
Value callKernel(OpBuilder &b, Operation *op, abi::RuntimeFn kernel, ValueRange pointers,
                 RankedTensorType resultType, ValueRange trailing) {
  Location loc = op->getLoc();
  Value result = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), resultType.getElementType()));
  SmallVector<Value> arguments(pointers);
  arguments.push_back(pointerOf(b, loc, result));
  llvm::append_range(arguments, trailing);
  abi::call(b, loc, op->getParentOfType<ModuleOp>(), kernel, arguments);
  return bufferization::ToTensorOp::create(b, loc, resultType, result,
                                           /*restrict=*/true, /*writable=*/true);
}

SmallVector<Value> i64s(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t v) { return i64(b, loc, v); });
}

/// Replaces `from` by `to` and erases the ops that computed it (last first).
void replaceLowered(RewriterBase &rewriter, Value from, Value to,
                    ArrayRef<Operation *> ops) {
  rewriter.replaceAllUsesWith(from, to);
  for (Operation *op : llvm::reverse(ops))
    rewriter.eraseOp(op);
}

/// A convolution or product with its epilogue: the kernel `name` on the
/// pointers of `inputs` and of the bias (or null), the result buffer, then
/// `integers`, the activation and its bound, then `after`.
void callWithEpilogue(RewriterBase &b, Operation *op, abi::RuntimeFn kernel,
                      ValueRange inputs, RankedTensorType resultType,
                      ArrayRef<int64_t> integers, const Epilogue &epilogue,
                      ArrayRef<int64_t> after = {}) {
  Location loc = op->getLoc();
  Type pointer = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Value> pointers = llvm::map_to_vector(
      inputs, [&](Value input) { return readPointer(b, loc, input); });
  pointers.push_back(epilogue.bias ? readPointer(b, loc, epilogue.bias)
                                   : LLVM::ZeroOp::create(b, loc, pointer).getResult());
  SmallVector<Value> trailing = i64s(b, loc, integers);
  trailing.push_back(i64(b, loc, epilogue.activation));
  trailing.push_back(arith::ConstantOp::create(b, loc, b.getF64FloatAttr(epilogue.max)));
  llvm::append_range(trailing, i64s(b, loc, after));
  Value tensor = callKernel(b, op, kernel, pointers, resultType, trailing);
  SmallVector<Operation *> ops = {op};
  llvm::append_range(ops, epilogue.absorbed);
  replaceLowered(b, epilogue.result, tensor, ops);
}

SmallVector<int64_t> getInts(ArrayAttr attr) {
  SmallVector<int64_t> values;
  for (Attribute a : attr)
    values.push_back(cast<IntegerAttr>(a).getInt());
  return values;
}

/// True when every operand and result of `op` is an f32 tensor.
bool allF32(Operation *op) {
  return llvm::all_of(llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()),
                      [](Type type) {
                        return cast<RankedTensorType>(type).getElementType().isF32();
                      });
}

int64_t runtimePoolKind(PoolKind kind) {
  switch (kind) {
  case PoolKind::max:
    return HPVM_RT_TENSOR_POOL_MAX;
  case PoolKind::min:
    return HPVM_RT_TENSOR_POOL_MIN;
  case PoolKind::mean:
    return HPVM_RT_TENSOR_POOL_MEAN;
  }
  llvm_unreachable("a pool kind the runtime does not know");
}

int64_t runtimeKnobKind(KnobKind kind) {
  switch (kind) {
  case KnobKind::perforate_rows:
    return HPVM_RT_TENSOR_KNOB_PERFORATE_ROWS;
  case KnobKind::perforate_cols:
    return HPVM_RT_TENSOR_KNOB_PERFORATE_COLS;
  case KnobKind::sample_filter:
    return HPVM_RT_TENSOR_KNOB_SAMPLE_FILTER;
  case KnobKind::sample_reduction: // sampled by the reduction's linalg lowering
  case KnobKind::fp16:             // hpvm_rt_tensor_matmul_half's format
  case KnobKind::bf16:
    break;
  }
  llvm_unreachable("a knob the runtime does not know");
}

/// hpvm_rt_tensor_matmul_half's format argument for a precision knob.
int64_t runtimeHalfFormat(KnobKind kind) {
  return kind == KnobKind::fp16 ? HPVM_RT_TENSOR_FP16 : HPVM_RT_TENSOR_BF16;
}

/// `tensor` (f32) stored in the 16-bit `format` of a precision knob: a
/// constant converted here (to nearest, ties to even, as the runtime rounds),
/// anything else by hpvm_rt_tensor_narrow_f32 where the product runs.
Value toHalfStorage(RewriterBase &b, Operation *op, Value tensor, KnobKind format) {
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(tensor.getType());
  Type element = format == KnobKind::fp16 ? Type(b.getF16Type()) : Type(b.getBF16Type());
  auto halfType = RankedTensorType::get(type.getShape(), element);
  DenseFPElementsAttr values;
  if (matchPattern(tensor, m_Constant(&values))) {
    const llvm::fltSemantics &semantics = cast<FloatType>(element).getFloatSemantics();
    auto narrowed = values.mapValues(element, [&](const APFloat &value) {
      APFloat rounded = value;
      bool losesInfo = false;
      rounded.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      return rounded.bitcastToAPInt();
    });
    return arith::ConstantOp::create(b, loc, halfType, cast<TypedAttr>(narrowed));
  }
  int64_t count = type.getNumElements();
  return callKernel(b, op, abi::RuntimeFn::TensorNarrowF32, {readPointer(b, loc, tensor)},
                    halfType,
                    i64s(b, loc, {count, runtimeHalfFormat(format)}));
}

/// The sizes n, c, h, w of an NCHW image or one with its channels in blocks
/// ([N, C / 16, H, W, 16]).
std::array<int64_t, 4> imageSizes(Type type) {
  auto image = cast<RankedTensorType>(type);
  int64_t block = image.getRank() == 5 ? image.getDimSize(4) : 1;
  return {image.getDimSize(0), image.getDimSize(1) * block, image.getDimSize(2),
          image.getDimSize(3)};
}

bool isBlocked(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank() == 5;
}

/// An f32 pool as hpvm_rt_tensor_pool_f32(input, output, kind, n, c, h, w,
/// window, strides, padding, oh, ow), or hpvm_rt_tensor_pool_blocked_f32 on
/// an image with its channels in blocks.
void callPoolKernel(RewriterBase &b, TensorPoolOp pool) {
  Location loc = pool.getLoc();
  std::array<int64_t, 4> input = imageSizes(pool.getInput().getType());
  auto resultType = cast<RankedTensorType>(pool.getType());
  SmallVector<int64_t> window = getInts(pool.getWindow());
  SmallVector<int64_t> strides = getInts(pool.getStrides());
  SmallVector<int64_t> padding = getInts(pool.getPadding());
  Value tensor = callKernel(
      b, pool,
      isBlocked(pool.getInput()) ? abi::RuntimeFn::TensorPoolBlockedF32
                                 : abi::RuntimeFn::TensorPoolF32,
      {readPointer(b, loc, pool.getInput())}, resultType,
      i64s(b, loc,
           {runtimePoolKind(pool.getKind()), input[0], input[1], input[2], input[3],
            window[0], window[1], strides[0], strides[1], padding[0], padding[1],
            resultType.getDimSize(2), resultType.getDimSize(3)}));
  replaceLowered(b, pool.getResult(), tensor, {pool.getOperation()});
}

/// An f32 change of layout as hpvm_rt_tensor_to_blocked_f32 or
/// _from_blocked_f32 (input, output, n, c, h, w of the NCHW image).
template <typename OpTy>
void callLayoutKernel(RewriterBase &b, OpTy op) {
  bool toBlocked = std::is_same_v<OpTy, TensorToBlockedOp>;
  std::array<int64_t, 4> sizes =
      imageSizes(toBlocked ? op.getInput().getType() : op.getType());
  Value tensor = callKernel(
      b, op,
      toBlocked ? abi::RuntimeFn::TensorToBlockedF32 : abi::RuntimeFn::TensorFromBlockedF32,
      {readPointer(b, op.getLoc(), op.getInput())}, cast<RankedTensorType>(op.getType()),
      i64s(b, op.getLoc(), sizes));
  replaceLowered(b, op.getResult(), tensor, {op.getOperation()});
}

/// An f32 convolution (with its epilogue) as hpvm_rt_tensor_conv2d_f32, its
/// constant-filter variant, or the approximate kernel its knob asks for.
void callConvKernel(RewriterBase &b, TensorConv2DOp conv) {
  Operation *op = conv;
  std::array<int64_t, 4> input = imageSizes(conv.getInput().getType());
  std::array<int64_t, 4> output = imageSizes(conv.getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getType());
  SmallVector<int64_t> padding = getInts(conv.getPadding());
  SmallVector<int64_t> strides = getInts(conv.getStrides());
  SmallVector<int64_t> sizes = {input[0],  input[1],   input[2],   input[3],
                                output[1], filter.getDimSize(2), filter.getDimSize(3),
                                output[2], output[3],  padding[0], padding[1],
                                strides[0], strides[1], static_cast<int64_t>(conv.getGroups())};
  auto isConstant = [](Value value) {
    return !value || value.getDefiningOp<arith::ConstantOp>();
  };
  // Blocked operands: hpvm_rt_tensor_conv2d_blocked_f32 (the pattern leaves
  // knobs to the linalg lowering), its bias one value per filter in the
  // layout of the result (the same bytes as [F]); a filter or bias that is
  // not a constant is packed on each call.
  if (isBlocked(conv.getInput()) || isBlocked(conv.getResult())) {
    SmallVector<int64_t> perFilter = {1, result.getDimSize(1), 1, 1};
    if (isBlocked(conv.getResult()))
      perFilter = {1, result.getDimSize(1), 1, 1, result.getDimSize(4)};
    Epilogue epilogue = findEpilogue(b, op, perFilter, /*logistic=*/true);
    int64_t layouts = (isBlocked(conv.getInput()) ? HPVM_RT_TENSOR_INPUT_BLOCKED : 0) |
                      (isBlocked(conv.getResult()) ? HPVM_RT_TENSOR_OUTPUT_BLOCKED : 0);
    if (!isConstant(conv.getFilter()) || !isConstant(epilogue.bias))
      layouts |= HPVM_RT_TENSOR_FILTER_VARIABLE;
    callWithEpilogue(b, op, abi::RuntimeFn::TensorConv2DBlockedF32,
                     {conv.getInput(), conv.getFilter()}, result, sizes, epilogue,
                     {layouts});
    return;
  }
  int64_t perFilter[] = {1, result.getDimSize(1), 1, 1};
  // An approximation knob: the approximate kernel, told which and how.
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  SmallVector<int64_t> knobArguments;
  if (knob)
    knobArguments = {runtimeKnobKind(knob.getKind()), knob.getRate(), knob.getOffset()};
  // A filter (and bias) that are constants of the program: the runtime packs
  // them once and keeps them, instead of on every call.
  Epilogue epilogue = findEpilogue(b, op, perFilter, /*logistic=*/!knob);
  bool constant = isConstant(conv.getFilter()) && isConstant(epilogue.bias);
  callWithEpilogue(b, op,
                   knob       ? abi::RuntimeFn::TensorConv2DApproxF32
                   : constant ? abi::RuntimeFn::TensorConv2DConstantF32
                              : abi::RuntimeFn::TensorConv2DF32,
                   {conv.getInput(), conv.getFilter()}, result, sizes, epilogue,
                   knobArguments);
}

/// An f32 product (with its epilogue) as hpvm_rt_tensor_matmul_f32, or in 16
/// bits (hpvm_rt_tensor_matmul_half) under a precision knob.
void callMatmulKernel(RewriterBase &b, TensorMulOp mul) {
  Operation *op = mul;
  auto lhs = cast<RankedTensorType>(mul.getLhs().getType());
  auto result = cast<RankedTensorType>(mul.getType());
  int64_t rank = result.getRank(), batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch *= result.getDimSize(d);
  SmallVector<int64_t> perColumn(rank, 1);
  perColumn.back() = result.getDimSize(rank - 1);
  // A precision knob: the operands in 16 bits, the result rounded by the kernel.
  auto knob = op->getAttrOfType<KnobAttr>(HPVMDialect::getKnobAttrName());
  Epilogue epilogue = findEpilogue(b, op, perColumn, /*logistic=*/!knob);
  SmallVector<int64_t> sizes = {batch, result.getDimSize(rank - 2),
                                result.getDimSize(rank - 1), lhs.getDimSize(rank - 1)};
  if (!knob || !knob.isPrecision()) {
    // Weights (and bias) that are constants of the program: the runtime packs
    // them once and keeps them, instead of on every call.
    bool constant = mul.getRhs().getDefiningOp<arith::ConstantOp>() &&
                    (!epilogue.bias || epilogue.bias.getDefiningOp<arith::ConstantOp>());
    callWithEpilogue(b, op,
                     constant ? abi::RuntimeFn::TensorMatmulConstantF32
                              : abi::RuntimeFn::TensorMatmulF32,
                     {mul.getLhs(), mul.getRhs()}, result, sizes, epilogue);
    return;
  }
  Value operands[] = {toHalfStorage(b, op, mul.getLhs(), knob.getKind()),
                      toHalfStorage(b, op, mul.getRhs(), knob.getKind())};
  Value stored[] = {mul.getLhs(), mul.getRhs()};
  callWithEpilogue(b, op, abi::RuntimeFn::TensorMatmulHalf, operands, result,
                   sizes, epilogue, {runtimeHalfFormat(knob.getKind())});
  // A constant now only in 16 bits is not kept in f32 too.
  for (Value value : stored)
    if (auto constant = value.getDefiningOp<arith::ConstantOp>();
        constant && constant->use_empty())
      b.eraseOp(constant);
}

/// The kernel call `call` of an f32 op with static shapes, as a pattern.
template <typename OpTy, void (*call)(RewriterBase &, OpTy)>
struct KernelCallLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!allF32(op) || !hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "not f32 with static shapes");
    if constexpr (std::is_same_v<OpTy, TensorConv2DOp>)
      if ((isBlocked(op.getInput()) || isBlocked(op.getResult())) &&
          op->hasAttr(HPVMDialect::getKnobAttrName()))
        return rewriter.notifyMatchFailure(op, "blocked operands with a knob");
    call(rewriter, op);
    return success();
  }
};
} // namespace

void mlir::hpvm::populateKernelCallPatterns(RewritePatternSet &patterns,
                                            PatternBenefit benefit) {
  patterns.add<KernelCallLowering<TensorConv2DOp, callConvKernel>,
               KernelCallLowering<TensorMulOp, callMatmulKernel>,
               KernelCallLowering<TensorPoolOp, callPoolKernel>,
               KernelCallLowering<TensorToBlockedOp, callLayoutKernel<TensorToBlockedOp>>,
               KernelCallLowering<TensorFromBlockedOp,
                                  callLayoutKernel<TensorFromBlockedOp>>>(
      patterns.getContext(), benefit);
}
