//===- ConvertHPVMTensorToLinalg.cpp - convert-hpvm-tensor-to-linalg ------===//
// Lowers tensor ops in leaves to linalg on tensors, then (by default) turns
// tensor node interfaces into memrefs and bufferizes leaves and host code.
#include "LowerTensorOps.h"
#include "CollapseElementwise.h"
#include "DestinationOutputs.h"
#include "OwnedBuffers.h"

#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/HPVMTensorToLinalg.h"
#include "HPVM/Conversion/Passes.h"
#include "HPVM/Dialect/HPVM/IR/ImageChunks.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_CONVERTHPVMTENSORTOLINALG
#include "HPVM/Conversion/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

/// The buffer type a tensor crossing a node interface becomes; null for
/// types that stay as they are.
static MemRefType getBufferType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

static bool hasTensorValues(Operation *root) {
  // A node's signature counts even when no op inside names its tensors (an
  // internal node without inputs whose outputs are bound from a child).
  if (auto function = dyn_cast<FunctionOpInterface>(root))
    if (llvm::any_of(function.getArgumentTypes(), llvm::IsaPred<TensorType>) ||
        llvm::any_of(function.getResultTypes(), llvm::IsaPred<TensorType>))
      return true;
  bool found = false;
  root->walk([&](Operation *op) {
    auto isTensor = [](Type type) { return isa<TensorType>(type); };
    if (llvm::any_of(op->getResultTypes(), isTensor) ||
        llvm::any_of(op->getOperandTypes(), isTensor))
      found = true;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArgumentTypes(), isTensor))
          found = true;
  });
  return found;
}

/// Tensor inputs and outputs of a node definition become memrefs: inputs are
/// read through `bufferization.to_tensor restrict` (leaves never write them),
/// outputs leave a leaf through `bufferization.to_buffer`.
static LogicalResult convertNodeInterface(NodeOpInterface node) {
  auto function = cast<FunctionOpInterface>(node.getOperation());
  for (Type type : llvm::concat<const Type>(function.getArgumentTypes(),
                                            function.getResultTypes()))
    if (auto tensor = dyn_cast<TensorType>(type);
        tensor && !tensor.hasStaticShape())
      return node->emitOpError()
             << "has a tensor input or output of type " << type
             << ", which convert-hpvm-tensor-to-linalg cannot bufferize yet "
                "(expected static shapes)";
  Block &entry = function.getFunctionBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs, outputs;
  for (BlockArgument arg : entry.getArguments()) {
    Type tensorType = arg.getType();
    MemRefType bufferType = getBufferType(tensorType);
    if (!bufferType) {
      inputs.push_back(tensorType);
      continue;
    }
    arg.setType(bufferType);
    inputs.push_back(bufferType);
    if (!node.isLeafNode())
      continue; // binds and edges take the new type from the argument
    auto read = bufferization::ToTensorOp::create(b, arg.getLoc(), tensorType,
                                                  arg, /*restrict=*/true);
    arg.replaceAllUsesExcept(read, read);
    if (!function.getArgAttr(arg.getArgNumber(),
                             HPVMDialect::getAccessAttrName()))
      function.setArgAttr(arg.getArgNumber(), HPVMDialect::getAccessAttrName(),
                          AccessAttr::get(b.getContext(), Access::in));
  }
  for (Type type : function.getResultTypes()) {
    MemRefType bufferType = getBufferType(type);
    outputs.push_back(bufferType ? Type(bufferType) : type);
  }
  if (node.isLeafNode()) {
    function.walk([&](ReturnOp ret) {
      OpBuilder rb(ret);
      for (OpOperand &operand : ret->getOpOperands())
        if (MemRefType bufferType = getBufferType(operand.get().getType()))
          operand.set(bufferization::ToBufferOp::create(
              rb, ret.getLoc(), bufferType, operand.get()));
    });
  }
  function.setType(b.getFunctionType(inputs, outputs));
  return success();
}

/// Host ops pass buffers to graphs and receive buffers from them.
static void convertHostOps(Operation *function) {
  function->walk([&](Operation *op) {
    if (isa<LaunchOp, PushOp>(op)) {
      // Graphs never write their tensor inputs (leaves read them through
      // non-writable to_tensor ops), so the host's buffers are passed as is.
      OpBuilder b(op);
      for (OpOperand &operand : op->getOpOperands())
        if (MemRefType bufferType = getBufferType(operand.get().getType()))
          operand.set(bufferization::ToBufferOp::create(
              b, op->getLoc(), bufferType, operand.get(), b.getUnitAttr()));
    } else if (isa<WaitOp, PopOp>(op)) {
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        Type tensorType = result.getType();
        MemRefType bufferType = getBufferType(tensorType);
        if (!bufferType)
          continue;
        result.setType(bufferType);
        auto read = bufferization::ToTensorOp::create(
            b, op->getLoc(), tensorType, result, /*restrict=*/true);
        result.replaceAllUsesExcept(read, read);
      }
    }
  });
}

/// The loops over chunks of images (hpvm-tile-tensor-batch) once bufferized:
/// each carries the buffers of the leaf's outputs unchanged (the chunks are
/// written into them in place), so the loop's results are those buffers, as
/// the leaf's outputs must be for the runtime to own them; and the chunks'
/// temporaries are allocated once, before the loop, not on every iteration.
static void simplifyChunkLoops(LeafOp leaf,
                               const llvm::SmallPtrSetImpl<Operation *> &before) {
  if (!leaf.getBody().hasOneBlock())
    return;
  for (auto loop : leaf.getBodyBlock().getOps<scf::ForOp>()) {
    if (!loop->hasAttr(kImageChunksAttrName))
      continue; // a loop of the program's own
    Operation *yield = loop.getBody()->getTerminator();
    for (auto [index, operand] : llvm::enumerate(yield->getOperands())) {
      BlockArgument carried = loop.getRegionIterArgs()[index];
      if (operand != carried || !isa<MemRefType>(carried.getType()))
        continue;
      Value init = loop.getInitArgs()[index];
      carried.replaceAllUsesWith(init);
      loop.getResult(index).replaceAllUsesWith(init);
    }
    // The insertion of a chunk written in place: a copy between two equal
    // views of the output.
    for (auto copy : llvm::make_early_inc_range(loop.getBody()->getOps<memref::CopyOp>())) {
      auto from = copy.getSource().getDefiningOp<memref::SubViewOp>();
      auto to = copy.getTarget().getDefiningOp<memref::SubViewOp>();
      if (from && to &&
          OperationEquivalence::isEquivalentTo(from, to, OperationEquivalence::exactValueMatch,
                                               nullptr, OperationEquivalence::IgnoreLocations))
        copy->erase();
    }
    // (A buffer the body yields lives on into the next iteration: not one.)
    for (auto alloc : llvm::make_early_inc_range(loop.getBody()->getOps<memref::AllocOp>()))
      if (alloc->getNumOperands() == 0 && !before.contains(alloc) &&
          !mayEscape(alloc.getResult()) &&
          !llvm::is_contained(yield->getOperands(), alloc.getResult()))
        alloc->moveBefore(loop);
  }
}

/// Frees, before the leaf returns, the buffers bufferization allocated for
/// intermediate values (padded images, reductions, chained ops' results);
/// those of a loop's body (a chunk of images, hpvm-tile-tensor-batch) at the
/// end of each iteration.
static void freeTemporaries(LeafOp leaf,
                            const llvm::SmallPtrSetImpl<Operation *> &before) {
  if (!leaf.getBody().hasOneBlock())
    return;
  auto freeIn = [&](Block &block) {
    OpBuilder b(block.getTerminator());
    for (auto alloc : llvm::make_early_inc_range(block.getOps<memref::AllocOp>()))
      if (!before.contains(alloc) && !mayEscape(alloc.getResult()))
        memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
  };
  Block &body = leaf.getBodyBlock();
  for (auto loop : body.getOps<scf::ForOp>())
    if (loop->hasAttr(kImageChunksAttrName))
      freeIn(*loop.getBody());
  freeIn(body);
}

static LogicalResult bufferize(Operation *op) {
  // A loop over chunks of images (hpvm-tile-tensor-batch) writes each chunk's
  // last result straight into the output it is inserted in.
  if (isa<LeafOp>(op) && !op->getRegion(0).getOps<scf::ForOp>().empty()) {
    IRRewriter rewriter(op->getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, op)))
      return failure(); // not expected: the analysis of bufferization below
  }
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = false;
  bufferization::BufferizationState state;
  if (failed(bufferization::runOneShotBufferize(op, options, state)))
    return op->emitError() << "convert-hpvm-tensor-to-linalg: one-shot "
                              "bufferization failed here";
  return success();
}

namespace {
struct ConvertHPVMTensorToLinalgPass
    : public hpvm::impl::ConvertHPVMTensorToLinalgBase<
          ConvertHPVMTensorToLinalgPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    arith::registerBufferizableOpInterfaceExternalModels(registry);
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    // The loops over chunks of images (hpvm-tile-tensor-batch).
    scf::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
  }

  /// The exponentials of the lowered ops (softmax, tanh, sigmoid) as the
  /// math dialect's f32 polynomial (range reduction, then a polynomial on
  /// [-ln2/2, ln2/2]; within a few ulp of libm's expf): plain arithmetic
  /// that vectorizes, where a call of expf per element does not. The leaves'
  /// own math ops (HPVM-C's, a tensor.map's) are left as they are.
  void approximateExponentials() {
    SmallVector<Operation *> created;
    getOperation().walk([&](LeafOp leaf) {
      leaf.walk([&](math::ExpOp exp) {
        if (exp->removeAttr(kLoweredExpAttr))
          created.push_back(exp);
      });
    });
    if (created.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == math::ExpOp::getOperationName(); });
    (void)applyOpPatternsGreedily(created, FrozenRewritePatternSet(std::move(patterns)));
  }

  /// Elementwise linalg ops that feed only each other in a leaf (a batch
  /// normalization and its activation, fused tensor nodes) become one loop
  /// nest: one pass over the data instead of one per op, each element
  /// computed by the same operations in the same order.
  void fuseElementwise(ArrayRef<Operation *> leaves) {
    if (leaves.empty())
      return;
    RewritePatternSet patterns(&getContext());
    // Only maps into maps: reductions, kernel calls and the knobs' sampled
    // loops keep the shapes they were lowered to.
    auto elementwise = [](Operation *op) {
      auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
      return generic && generic.getNumLoops() == generic.getNumParallelLoops();
    };
    // Whole results only: a producer read through a broadcast (a per-channel
    // value) would be computed again for every element.
    linalg::populateElementwiseOpsFusionPatterns(patterns, [&](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      if (!producer || !producer->hasOneUse() || !elementwise(producer) ||
          !elementwise(operand->getOwner()))
        return false;
      auto consumer = cast<linalg::GenericOp>(operand->getOwner());
      return consumer.getMatchingIndexingMap(operand).isPermutation();
    });
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.enableFolding(false);
    config.enableConstantCSE(false);
    for (Operation *leaf : leaves)
      (void)applyPatternsGreedily(leaf, frozen, config);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ConversionTarget target(getContext());
    configureHPVMTensorToLinalgTarget(target);
    SmallVector<Operation *> tensorOps;
    llvm::SetVector<Operation *> tensorLeaves; // the leaves that hold them
    module.walk([&](LeafOp leaf) {
      leaf.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (target.isIllegal(op)) {
          tensorOps.push_back(op);
          tensorLeaves.insert(leaf);
          return WalkResult::skip(); // map / reduce bodies go with their op
        }
        return WalkResult::advance();
      });
    });
    // A program without tensors is left as it is, and said to be (so that the
    // pass manager does not verify it again).
    if (tensorOps.empty() &&
        llvm::none_of(module.getBody()->getOperations(), [](Operation &op) {
          return isa<NodeOpInterface, func::FuncOp>(op) && hasTensorValues(&op);
        }))
      return markAllAnalysesPreserved();
    // The buffers a leaf allocated itself, before the lowering adds its own
    // (kernel results), which are temporaries like bufferization's.
    llvm::SmallPtrSet<Operation *, 4> userAllocations;
    module.walk([&](memref::AllocOp alloc) { userAllocations.insert(alloc); });
    RewritePatternSet patterns(&getContext());
    populateHPVMTensorToLinalgPatterns(patterns, kernels);
    // Once per op, in program order: a kernel pattern absorbs the bias add
    // and activation after its root, which must still be tensor ops then.
    auto refuse = [&](Operation *op) { emitUnloweredTensorOpError(op, kernels); };
    if (failed(applyPatternsOncePerOp(tensorOps,
                                      FrozenRewritePatternSet(std::move(patterns)),
                                      refuse, /*stopAtFailure=*/false)))
      return signalPassFailure();
    bool ok = true;
    approximateExponentials();
    fuseElementwise(tensorLeaves.getArrayRef());
    collapseElementwiseLoops(tensorLeaves.getArrayRef());
    if (!bufferizeGraphs)
      return;

    // The host's unaliased destinations, seen before bufferization hides them.
    SmallVector<DestinationOutput> destinations = findDestinationOutputs(module);
    // The node definitions whose tensor interfaces become buffers here.
    llvm::SmallPtrSet<Operation *, 16> converted;
    for (Operation &op : module.getBody()->getOperations()) {
      auto node = dyn_cast<NodeOpInterface>(op);
      if (!node || !hasTensorValues(&op))
        continue;
      converted.insert(&op);
      if (failed(convertNodeInterface(node)) ||
          (node.isLeafNode() && failed(bufferize(&op)))) {
        ok = false;
        continue;
      }
      if (auto leaf = dyn_cast<LeafOp>(op)) {
        simplifyChunkLoops(leaf, userAllocations);
        freeTemporaries(leaf, userAllocations);
      }
    }
    for (auto function : module.getOps<func::FuncOp>()) {
      if (!hasTensorValues(function))
        continue;
      convertHostOps(function);
      if (failed(bufferize(function)))
        ok = false;
    }
    if (!ok)
      return signalPassFailure();
    writeIntoDestinations(module, destinations, converted);
    freeHandedOnBuffers(module, converted);
    forwardOwnedInputCopies(module, converted);
  }
};
} // namespace
