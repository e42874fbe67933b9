//===- LowerHostOps.cpp - launch, wait and the tracker ops to runtime calls ===//
// A launch allocates a block { launch, inputs, outputs } that the entry function
// reads; wait joins the launch, reads the outputs and frees the block. Each op
// is lowered by a rewrite pattern (populateHPVMHostOpsToRuntimePatterns), after
// the launches a wait may read through branches are resolved.
#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/HPVMToCPU.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::abi;

namespace {
/// The start address and byte span of a buffer operand of a tracker op.
struct BufferExtent {
  Value pointer;
  Value bytes; // i64
};
} // namespace

/// The bytes of an element of the memref type `type` a tracker op names: 8
/// for index, whole bytes for integers and floats, 0 (not trackable) for
/// anything else.
static int64_t getTrackedElementBytes(Type type) {
  Type element = cast<MemRefType>(type).getElementType();
  return element.isIndex()         ? 8
         : element.isIntOrFloat() ? llvm::divideCeil(element.getIntOrFloatBitWidth(), 8)
                                  : 0;
}

/// Whether the CPU backend can track `memory` (a pointer, or a memref of
/// integers, floats or indices).
static bool isTrackable(Value memory) {
  return isa<LLVM::LLVMPointerType>(memory.getType()) ||
         getTrackedElementBytes(memory.getType()) != 0;
}

/// The extent of `memory` (isTrackable), `size` bytes from a pointer.
static BufferExtent getBufferExtent(CPUCodeGen &lowering, OpBuilder &b,
                                    Location loc, Value memory, Value size) {
  if (isa<LLVM::LLVMPointerType>(memory.getType())) {
    // untrack names a pointer without a size: the object is found by address.
    Value bytes = size ? lowering.toI64(b, loc, size)
                       : lowering.i64Constant(b, loc, 1);
    return BufferExtent{memory, bytes};
  }
  int64_t elementBytes = getTrackedElementBytes(memory.getType());
  // Strided memrefs track the span from their first to their last element.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memory);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value span = one, empty = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (auto [size, stride] :
       llvm::zip(metadata.getSizes(), metadata.getStrides())) {
    Value last = arith::SubIOp::create(b, loc, size, one);
    span = arith::AddIOp::create(b, loc, span,
                                 arith::MulIOp::create(b, loc, last, stride));
    Value isEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          size, zero);
    empty = arith::OrIOp::create(b, loc, empty, isEmpty);
  }
  Value width = arith::ConstantIndexOp::create(b, loc, elementBytes);
  Value bytes = arith::SelectOp::create(
      b, loc, empty, zero, arith::MulIOp::create(b, loc, span, width));
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory);
  Value start = arith::AddIOp::create(
      b, loc, aligned,
      arith::MulIOp::create(b, loc, metadata.getOffset(), width));
  Value pointer = LLVM::IntToPtrOp::create(b, loc, lowering.getPointerType(),
                                           lowering.toI64(b, loc, start));
  return BufferExtent{pointer, lowering.toI64(b, loc, bytes)};
}

/// Emits `call(pointer, bytes)` unless the buffer is empty: the runtime refuses
/// empty objects, and track, untrack and request skip them alike.
template <typename EmitCall>
static void ifNotEmpty(CPUCodeGen &lowering, OpBuilder &b, Location loc,
                       BufferExtent extent, EmitCall emitCall) {
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, extent.bytes,
                            lowering.i64Constant(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, positive, /*withElseRegion=*/false);
  OpBuilder then = ifOp.getThenBodyBuilder();
  emitCall(then);
}

FailureOr<WaitedRoot> mlir::hpvm::getWaitedRoot(WaitOp wait, CPUCodeGen &codegen,
                                              SymbolTableCollection &symbols) {
  auto refuse = [&](const Twine &what) {
    return wait.emitOpError()
           << "waiting on a graph handle that " << what
           << " is not supported by convert-hpvm-to-cpu yet";
  };
  FailureOr<SmallVector<LaunchOp>> launches = getLaunchesOf(wait.getGraph());
  if (failed(launches))
    return refuse("is not the result of an 'hpvm.launch' in the same function");
  NodeOpInterface first;
  llvm::SetVector<StringRef> names;
  for (LaunchOp launch : *launches) {
    names.insert(launch.getRoot());
    auto root = symbols.lookupNearestSymbolFrom<NodeOpInterface>(
        launch, launch.getRootAttr());
    if (!root)
      return failure(); // the verifier reports it
    if (launches->size() > 1 && launch.getStreaming()) {
      InFlightDiagnostic diag =
          refuse("may come from a streaming launch (through a branch)");
      diag.attachNote(launch.getLoc()) << "launched here";
      return diag;
    }
    if (!first) {
      first = root;
      continue;
    }
    if (codegen.getLaunchBlockType(root) != codegen.getLaunchBlockType(first)) {
      auto name = [](NodeOpInterface node) {
        return cast<SymbolOpInterface>(node.getOperation()).getName();
      };
      InFlightDiagnostic diag =
          refuse(("may come from launches of @" + name(first) + " and @" +
                  name(root) + ", whose inputs or outputs differ")
                     .str());
      diag.attachNote(launch.getLoc()) << "launch of @" << name(root);
      return diag;
    }
  }
  SmallVector<std::string> shown;
  for (StringRef name : names)
    shown.push_back(atName(name));
  return WaitedRoot{first, llvm::join(shown, " or ")};
}

/// The runtime calls of `launch` of `root`: a block { launch, inputs,
/// outputs } filled with its arguments and handed to hpvm_rt_launch with the
/// root's entry function; returns the block.
static Value emitLaunch(CPUHostOps &state, OpBuilder &b, LaunchOp launch,
                        NodeOpInterface root) {
  CPUCodeGen &cg = state.codegen;
  Location loc = launch.getLoc();
  LLVM::LLVMStructType blockType = cg.getLaunchBlockType(root);
  Value block = cg.callRuntime(b, loc, RuntimeFn::Malloc, {cg.sizeOf(b, loc, blockType)});
  for (auto [index, arg] : llvm::enumerate(launch.getArgs()))
    cg.storeField(b, loc, blockType, block, index + 1, cg.toStorage(b, loc, arg));
  Value entry = LLVM::AddressOfOp::create(b, loc, state.getEntryFunction(root));
  Value handleSlot = cg.fieldAddress(b, loc, blockType, block, {0});
  Value status = cg.callRuntime(b, loc, RuntimeFn::Launch, {entry, block, handleSlot});
  cg.checkStatus(b, loc, status,
                 ("launching @" + launch.getRoot()).str());
  return block;
}

/// The runtime calls of `wait` on the launch block `block` of `root`
/// (`name` in the status check): joins the launch, reads the outputs and
/// frees the block; returns the outputs.
static SmallVector<Value> emitWait(CPUCodeGen &cg, OpBuilder &b, WaitOp wait,
                                   Value block, NodeOpInterface root,
                                   StringRef name) {
  Location loc = wait.getLoc();
  LLVM::LLVMStructType blockType = cg.getLaunchBlockType(root);
  Value handle = cg.loadField(b, loc, blockType, block, 0);
  Value status = cg.callRuntime(b, loc, RuntimeFn::Wait, {handle});
  cg.checkStatus(b, loc, status, ("running " + name).str());
  unsigned firstOutput = 1 + root.getInputTypes().size();
  SmallVector<Value> results;
  for (auto [index, type] : llvm::enumerate(wait.getResultTypes()))
    results.push_back(cg.fromStorage(
        b, loc, cg.loadField(b, loc, blockType, block, firstOutput + index),
        type));
  cg.callRuntime(b, loc, RuntimeFn::Free, {block});
  return results;
}

namespace {
/// A launch as runtime calls; its block replaces the handle in waits and
/// branches (a handle merged through branches is the block pointer too). A
/// launch whose handle has other uses stays, and lowerHostOps refuses it.
struct LaunchToRuntime : OpRewritePattern<LaunchOp> {
  LaunchToRuntime(MLIRContext *context, CPUHostOps &state)
      : OpRewritePattern(context), state(state) {}

  LogicalResult matchAndRewrite(LaunchOp launch,
                                PatternRewriter &rewriter) const override {
    if (launch.getStreaming()) // populateHPVMStreamingToRuntimePatterns
      return rewriter.notifyMatchFailure(launch, "a streaming launch");
    auto root = state.symbols.lookupNearestSymbolFrom<NodeOpInterface>(
        launch, launch.getRootAttr());
    Value block = emitLaunch(state, rewriter, launch, root);
    state.launched[block] = {block, root};
    rewriter.replaceUsesWithIf(launch.getGraph(), block, [](OpOperand &use) {
      return isa<WaitOp, BranchOpInterface>(use.getOwner());
    });
    if (launch.getGraph().use_empty())
      rewriter.eraseOp(launch);
    else
      state.kept.push_back(launch);
    return success();
  }

  CPUHostOps &state;
};

/// A wait on a handle whose launch block is known, as runtime calls.
struct WaitToRuntime : OpRewritePattern<WaitOp> {
  WaitToRuntime(MLIRContext *context, CPUHostOps &state)
      : OpRewritePattern(context), state(state) {}

  LogicalResult matchAndRewrite(WaitOp wait,
                                PatternRewriter &rewriter) const override {
    auto it = state.launched.find(wait.getGraph());
    if (it == state.launched.end())
      return rewriter.notifyMatchFailure(wait, "no launch block known");
    auto [block, root] = it->second;
    std::string name = state.rootNames.lookup(wait.getGraph());
    if (name.empty())
      name = atName(root);
    rewriter.replaceOp(wait,
                       emitWait(state.codegen, rewriter, wait, block, root, name));
    return success();
  }

  CPUHostOps &state;
};

/// hpvm.track, untrack or request of a buffer: the runtime call, skipped for
/// an empty buffer.
template <typename OpTy>
struct TrackerOpToRuntime : OpRewritePattern<OpTy> {
  TrackerOpToRuntime(MLIRContext *context, CPUCodeGen &lowering)
      : OpRewritePattern<OpTy>(context), lowering(lowering) {}

  LogicalResult matchAndRewrite(OpTy tracker,
                                PatternRewriter &rewriter) const override {
    Operation *op = tracker;
    Value memory = op->getOperand(0);
    if (!isTrackable(memory))
      return rewriter.notifyMatchFailure(op, "elements of no fixed size");
    Location loc = op->getLoc();
    Value size = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
    BufferExtent extent = getBufferExtent(lowering, rewriter, loc, memory, size);
    ifNotEmpty(lowering, rewriter, loc, extent, [&](OpBuilder &then) {
      Value status;
      if (isa<TrackOp>(op))
        status = lowering.callRuntime(then, loc, RuntimeFn::Track,
                                      {extent.pointer, extent.bytes});
      else if (isa<UntrackOp>(op))
        status = lowering.callRuntime(then, loc, RuntimeFn::Untrack, {extent.pointer});
      else
        status = lowering.callRuntime(
            then, loc, RuntimeFn::RequestHost,
            {extent.pointer, extent.bytes, lowering.i32Constant(then, loc, kAccessInOut)});
      lowering.checkStatus(then, loc, status,
                           (op->getName().getStringRef() + " of a buffer").str());
    });
    rewriter.eraseOp(op);
    return success();
  }

  CPUCodeGen &lowering;
};
} // namespace

void mlir::hpvm::populateHPVMHostOpsToRuntimePatterns(RewritePatternSet &patterns,
                                                      CPUHostOps &state) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LaunchToRuntime, WaitToRuntime>(context, state);
  patterns.add<TrackerOpToRuntime<TrackOp>, TrackerOpToRuntime<UntrackOp>,
               TrackerOpToRuntime<RequestOp>>(context, state.codegen);
}

/// The launches a wait on a handle merged through branches reads, resolved
/// before any launch is lowered; those handles become the launch block
/// pointers themselves (block arguments take pointers).
static LogicalResult resolveMergedHandles(ArrayRef<Operation *> hostCode,
                                         ArrayRef<Operation *> waits,
                                         CPUHostOps &state) {
  for (Operation *op : waits) {
    auto wait = cast<WaitOp>(op);
    auto argument = dyn_cast<BlockArgument>(wait.getGraph());
    if (!argument || state.launched.count(argument))
      continue;
    FailureOr<WaitedRoot> waited = getWaitedRoot(wait, state.codegen, state.symbols);
    if (failed(waited))
      return failure();
    state.launched[argument] = {argument, waited->root};
    state.rootNames[argument] = waited->name;
  }
  SmallVector<BlockArgument> mergedHandles;
  for (Operation *code : hostCode)
    code->walk([&](Block *block) {
      for (BlockArgument argument : block->getArguments())
        if (isa<hpvm::GraphType>(argument.getType()) && !block->isEntryBlock())
          mergedHandles.push_back(argument);
    });
  for (BlockArgument argument : mergedHandles)
    argument.setType(state.codegen.getPointerType());
  return success();
}

LogicalResult mlir::hpvm::lowerHPVMHostOps(ArrayRef<Operation *> hostCode,
                                           CPUHostOps &state) {
  SmallVector<Operation *> launches, waits, trackerOps;
  for (Operation *code : hostCode)
    code->walk([&](Operation *op) {
      if (isa<LaunchOp>(op))
        launches.push_back(op);
      else if (isa<WaitOp>(op))
        waits.push_back(op);
      else if (isa<TrackOp, UntrackOp, RequestOp>(op))
        trackerOps.push_back(op);
    });
  if (failed(resolveMergedHandles(hostCode, waits, state)))
    return failure();
  RewritePatternSet patternList(state.codegen.getModule().getContext());
  populateHPVMHostOpsToRuntimePatterns(patternList, state);
  FrozenRewritePatternSet patterns(std::move(patternList));
  auto noDiagnostic = [](Operation *) {}; // a launch always lowers
  // Launches first: waits read the block their launch allocated.
  if (failed(applyPatternsOncePerOp(launches, patterns, noDiagnostic,
                                    /*stopAtFailure=*/true)) ||
      failed(applyPatternsOncePerOp(
          waits, patterns,
          [](Operation *wait) {
            wait->emitOpError("expects a graph handle produced by "
                              "'hpvm.launch' in the same function");
          },
          /*stopAtFailure=*/true)))
    return failure();
  // A launch kept has a handle used by something other than a wait.
  if (!state.kept.empty())
    return state.kept.front().emitOpError(
        "has a graph handle used by something other than 'hpvm.wait'; the "
        "CPU backend needs the wait in the same function");
  return applyPatternsOncePerOp(
      trackerOps, patterns,
      [](Operation *op) {
        op->emitOpError()
            << "cannot track a memref of "
            << cast<MemRefType>(op->getOperand(0).getType()).getElementType()
            << " on the CPU backend; expected integer, float or index elements";
      },
      /*stopAtFailure=*/true);
}
