//===- TileTensorBatch.cpp - The hpvm-tile-tensor-batch pass ---------------===//
// Runs a tensor leaf's convolution and the ops after it a chunk of images at
// a time: each chunk's convolution writes an image that stays in the
// second-level cache while the ops after it (a batch normalization, a pool,
// an activation no kernel absorbs) read it, instead of each op streaming the
// whole batch through memory. The leaf's outputs are built chunk by chunk
// with tensor.insert_slice in an scf.for; every value is computed per image
// exactly as before.
#include "HPVM/Transforms/Passes.h"
#include "HPVM/Dialect/HPVM/IR/ImageChunks.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMTILETENSORBATCH
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// An image: NCHW (rank 4) or with its channels in blocks (rank 5).
static bool isImageRank(RankedTensorType type) {
  return type.getRank() == 4 || type.getRank() == 5;
}

/// A static f32 image of `batch` images, NCHW or blocked.
static bool isBatchImage(Type type, int64_t batch) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isImageRank(tensor) && tensor.hasStaticShape() &&
         tensor.getElementType().isF32() && tensor.getDimSize(0) == batch;
}

/// The ops a chunk runs: each computes every image from that image alone.
static bool isPerImage(Operation *op) {
  return isa<TensorConv2DOp, TensorAddOp, TensorBatchNormOp, TensorReluOp,
             TensorClippedReluOp, TensorTanhOp, TensorSigmoidOp, TensorMapOp,
             TensorPoolOp, TensorToBlockedOp, TensorFromBlockedOp>(op) &&
         !op->hasAttr(HPVMDialect::getKnobAttrName());
}

/// An op that stays above the loop: a constant (a filter, the byte sizes
/// HPVM-C leaves return), or a per-image op on one image of broadcast
/// values (a bias put in blocks) where the batch has more, whose operands
/// the loop does not compute.
static bool staysAbove(Operation &op, int64_t batch, const SmallVector<Operation *> &ops) {
  if (op.hasTrait<::mlir::OpTrait::ConstantLike>())
    return true;
  if (!isPerImage(&op) || op.getNumResults() != 1 || batch <= 1)
    return false;
  auto result = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  return result && isImageRank(result) && result.getDimSize(0) == 1 &&
         llvm::none_of(op.getOperands(), [&](Value operand) {
           return llvm::is_contained(ops, operand.getDefiningOp());
         });
}

/// The batch of the leaf's first convolution, or 0.
static int64_t batchOf(Block &body) {
  for (Operation &op : body.without_terminator())
    if (auto conv = dyn_cast<TensorConv2DOp>(op))
      if (auto result = dyn_cast<RankedTensorType>(conv.getType());
          result && result.hasStaticShape())
        return result.getDimSize(0);
  return 0;
}

/// Operands a chunk reads whole: a convolution's filter and a normalization's
/// statistics, whatever their shapes.
static bool isParameter(Operation *op, unsigned operand) {
  return (isa<TensorConv2DOp>(op) && operand == 1) ||
         (isa<TensorBatchNormOp>(op) && operand >= 1);
}

namespace {
/// One leaf's plan: the ops a chunk runs, the batch and the chunk.
struct BatchPlan {
  SmallVector<Operation *> ops;
  int64_t batch = 0, chunk = 0;
};
} // namespace

/// Whether the ops after the convolutions hold one no kernel epilogue
/// absorbs (the kernels take a bias and one activation).
static bool hasUnabsorbedTail(ArrayRef<Operation *> ops) {
  bool seenConv = false;
  unsigned activations = 0;
  for (Operation *op : ops) {
    if (isa<TensorConv2DOp>(op)) {
      seenConv = true;
      activations = 0;
      continue;
    }
    if (!seenConv)
      continue;
    if (isa<TensorBatchNormOp, TensorPoolOp, TensorMapOp>(op))
      return true;
    if (isa<TensorReluOp, TensorClippedReluOp, TensorTanhOp, TensorSigmoidOp>(op) &&
        ++activations > 1)
      return true;
  }
  return false;
}

/// The plan for `leaf`, or nothing when it does not qualify.
static std::optional<BatchPlan> planLeaf(LeafOp leaf, int64_t chunkBytes) {
  if (leaf.getBody().empty() || !llvm::hasSingleElement(leaf.getBody()))
    return std::nullopt;
  BatchPlan plan;
  int64_t largest = 0; // bytes of one image of the largest value
  Block &body = leaf.getBodyBlock();
  plan.batch = batchOf(body);
  for (Operation &op : body.without_terminator()) {
    if (staysAbove(op, plan.batch, plan.ops))
      continue;
    if (!isPerImage(&op) || op.getNumResults() != 1)
      return std::nullopt;
    auto result = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!result || !isBatchImage(result, plan.batch))
      return std::nullopt;
    largest = std::max(largest, result.getNumElements() / plan.batch * 4);
    for (OpOperand &operand : op.getOpOperands()) {
      if (isParameter(&op, operand.getOperandNumber()))
        continue;
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      // Images of the batch are sliced (and count towards a chunk's bytes);
      // broadcast operands (leading 1) are read whole.
      if (!type || !isImageRank(type) || !type.hasStaticShape() ||
          (type.getDimSize(0) != plan.batch && type.getDimSize(0) != 1))
        return std::nullopt;
      if (type.getDimSize(0) == plan.batch)
        largest = std::max(largest, type.getNumElements() / plan.batch * 4);
    }
    plan.ops.push_back(&op);
  }
  // At least two images a chunk: a chunk of one reads the filters once per
  // image and splits the kernels' work too finely.
  if (plan.batch < 2 || !llvm::any_of(plan.ops, llvm::IsaPred<TensorConv2DOp>) ||
      !hasUnabsorbedTail(plan.ops) || largest * plan.batch <= 2 * chunkBytes ||
      2 * largest > chunkBytes)
    return std::nullopt;
  // The values the leaf returns: results of the chunk's ops (or not tensors).
  for (Value value : body.getTerminator()->getOperands())
    if (isa<TensorType>(value.getType()) &&
        (!value.getDefiningOp() || !llvm::is_contained(plan.ops, value.getDefiningOp())))
      return std::nullopt;
  plan.chunk = 0;
  for (int64_t k = plan.batch / 2; k > 1 && !plan.chunk; --k)
    if (plan.batch % k == 0 && k * largest <= chunkBytes)
      plan.chunk = k;
  if (!plan.chunk) // a prime batch
    return std::nullopt;
  // Each chunk reads every filter again (and packs one that is not a
  // constant): filters larger than half a chunk's image (the deep layers'
  // 512 x 512 pointwise ones) cost more than the passes the chunks save.
  for (Operation *op : plan.ops)
    if (auto conv = dyn_cast<TensorConv2DOp>(op))
      if (2 * cast<RankedTensorType>(conv.getFilter().getType()).getNumElements() * 4 >
          plan.chunk * largest)
        return std::nullopt;
  return plan;
}

/// `type` with `batch` images.
static RankedTensorType withBatch(Type type, int64_t batch) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = batch;
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// Offsets [image, 0, ...], sizes `type`'s, strides 1.
static void sliceOf(OpBuilder &b, Value image, RankedTensorType type,
                    SmallVectorImpl<OpFoldResult> &offsets,
                    SmallVectorImpl<OpFoldResult> &sizes,
                    SmallVectorImpl<OpFoldResult> &strides) {
  offsets.assign(type.getRank(), b.getIndexAttr(0));
  offsets[0] = image;
  sizes = llvm::map_to_vector(type.getShape(), [&](int64_t size) -> OpFoldResult {
    return b.getIndexAttr(size);
  });
  strides.assign(type.getRank(), b.getIndexAttr(1));
}

/// Wraps the plan's ops in an scf.for over chunks of images, at the end of
/// the leaf (after everything that stays above it).
static void tileLeaf(LeafOp leaf, const BatchPlan &plan) {
  Operation *ret = leaf.getBodyBlock().getTerminator();
  Location loc = plan.ops.front()->getLoc();
  OpBuilder b(ret);
  // The returned tensors, each built in a loop-carried value.
  SmallVector<Value> returned;
  for (Value value : ret->getOperands())
    if (isa<TensorType>(value.getType()) && !llvm::is_contained(returned, value))
      returned.push_back(value);
  SmallVector<Value> inits = llvm::map_to_vector(returned, [&](Value value) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  });
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, plan.batch);
  Value step = arith::ConstantIndexOp::create(b, loc, plan.chunk);
  DenseSet<Operation *> inLoop(plan.ops.begin(), plan.ops.end());
  auto loop = scf::ForOp::create(
      b, loc, zero, upper, step, inits,
      [&](OpBuilder &lb, Location l, Value image, ValueRange accumulators) {
        IRMapping mapping;
        SmallVector<OpFoldResult> offsets, sizes, strides;
        for (Operation *op : plan.ops) {
          for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
            if (mapping.contains(operand) || isParameter(op, index) ||
                inLoop.contains(operand.getDefiningOp()))
              continue;
            auto type = cast<RankedTensorType>(operand.getType());
            if (type.getDimSize(0) != plan.batch)
              continue;
            auto sliced = withBatch(type, plan.chunk);
            sliceOf(lb, image, sliced, offsets, sizes, strides);
            mapping.map(operand, tensor::ExtractSliceOp::create(lb, l, sliced, operand,
                                                                offsets, sizes, strides)
                                     .getResult());
          }
          Operation *clone = lb.clone(*op, mapping);
          clone->getResult(0).setType(withBatch(op->getResult(0).getType(), plan.chunk));
        }
        SmallVector<Value> yielded;
        for (auto [value, accumulator] : llvm::zip(returned, accumulators)) {
          Value chunk = mapping.lookup(value);
          sliceOf(lb, image, cast<RankedTensorType>(chunk.getType()), offsets, sizes,
                  strides);
          yielded.push_back(tensor::InsertSliceOp::create(lb, l, chunk, accumulator, offsets,
                                                          sizes, strides)
                                .getResult());
        }
        scf::YieldOp::create(lb, l, yielded);
      });
  loop->setAttr(kImageChunksAttrName, b.getUnitAttr());
  for (auto [value, result] : llvm::zip(returned, loop.getResults()))
    ret->replaceUsesOfWith(value, result);
  for (Operation *op : llvm::reverse(plan.ops))
    op->erase();
}

namespace {
struct HPVMTileTensorBatchPass
    : public hpvm::impl::HPVMTileTensorBatchBase<HPVMTileTensorBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunkBytes <= 0) {
      getOperation().emitError() << "hpvm-tile-tensor-batch: chunk-bytes must be positive, "
                                    "got "
                                 << chunkBytes.getValue();
      return signalPassFailure();
    }
    for (LeafOp leaf : getOperation().getOps<LeafOp>()) {
      // Leaves of the CPU, and of the tensor runtime unless a device takes
      // them (its kernels take the whole batch).
      if (!llvm::all_of(leaf.getTargets(), [&](Target t) {
            return t == Target::cpu || (t == Target::tensor && tensorLeaves);
          }))
        continue;
      if (std::optional<BatchPlan> plan = planLeaf(leaf, chunkBytes))
        tileLeaf(leaf, *plan);
    }
  }
};
} // namespace
