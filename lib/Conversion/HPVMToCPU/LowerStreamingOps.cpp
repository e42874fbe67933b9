//===- LowerStreamingOps.cpp - Streaming host ops to runtime calls --------===//
// A streaming launch calls its root's pipeline function (built by
// StreamingRunner on the root's first launch) and pushes the first item;
// push, pop and wait call the runtime on its stream. Each op is lowered by a rewrite
// pattern (populateHPVMStreamingToRuntimePatterns).
#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/HPVMToCPU.h"
#include "HPVM/Conversion/RuntimeABI.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::abi;

/// Packs `values` (the root's inputs) into an item and pushes it into the
/// stream of `started`; `verb` and the root's name say what failed in the
/// status check.
static void emitPushItem(CPUCodeGen &lowering, OpBuilder &b, Location loc,
                         CPUStreamingOps::Stream &started,
                         ValueRange values, StringRef verb) {
  LLVM::LLVMStructType argsType =
      lowering.getStorageStruct(started.root.getInputTypes());
  Value item = lowering.allocaInEntry(b, loc, argsType);
  for (auto [field, value] : llvm::enumerate(values))
    lowering.storeField(b, loc, argsType, item, field,
                        lowering.toStorage(b, loc, value));
  Value status = lowering.callRuntime(b, loc, RuntimeFn::StreamPush,
                                      {started.stream, item});
  lowering.checkStatus(b, loc, status, (verb + " " + started.what).str());
}

namespace {
/// A streaming launch: builds its root's pipeline (once per root), starts it
/// and, unless every item is pushed, pushes the launch operands as the first
/// item. The stream is recorded for the push, pop and wait on its handle; the
/// last of them erases the launch.
struct StreamingLaunchToRuntime : OpRewritePattern<LaunchOp> {
  StreamingLaunchToRuntime(MLIRContext *context, CPUStreamingOps &streams)
      : OpRewritePattern(context), streams(streams) {}

  LogicalResult matchAndRewrite(LaunchOp launch,
                                PatternRewriter &rewriter) const override {
    if (!launch.getStreaming())
      return rewriter.notifyMatchFailure(launch, "not a streaming launch");
    auto root = streams.symbols.lookupNearestSymbolFrom<NodeOpInterface>(
        launch, launch.getRootAttr());
    Value started = LLVM::CallOp::create(rewriter, launch.getLoc(),
                                         streams.getPipelineFunction(root),
                                         ValueRange{})
                        .getResult();
    CPUStreamingOps::Stream stream{started, root, launch,
                                   ("@" + launch.getRoot()).str()};
    if (!launch.getPushed())
      emitPushItem(streams.codegen, rewriter, launch.getLoc(), stream,
                   launch.getArgs(), "pushing the first item into");
    if (launch.getGraph().use_empty())
      rewriter.eraseOp(launch);
    else
      streams.started[launch.getGraph()] = std::move(stream);
    return success();
  }

  CPUStreamingOps &streams;
};

/// The base of the patterns of the ops on a started stream's handle: finds
/// the stream, and erases the op (and the launch after its last user).
template <typename OpTy>
struct StreamOpToRuntime : OpRewritePattern<OpTy> {
  StreamOpToRuntime(MLIRContext *context, CPUStreamingOps &streams)
      : OpRewritePattern<OpTy>(context), lowering(streams.codegen),
        streams(streams) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value graph = op.getGraph();
    auto it = streams.started.find(graph);
    if (it == streams.started.end())
      return rewriter.notifyMatchFailure(op, "not a started stream's handle");
    CPUStreamingOps::Stream stream = it->second;
    rewriter.replaceOp(op, lower(op, stream, rewriter));
    if (graph.use_empty()) {
      streams.started.erase(graph);
      rewriter.eraseOp(stream.launch);
    }
    return success();
  }

  /// The runtime calls of `op` on `stream`; returns its results.
  virtual SmallVector<Value> lower(OpTy op,
                                   CPUStreamingOps::Stream &stream,
                                   OpBuilder &b) const = 0;

  CPUCodeGen &lowering;
  CPUStreamingOps &streams;
};

/// hpvm.push: the item packed and pushed.
struct PushToRuntime : StreamOpToRuntime<PushOp> {
  using StreamOpToRuntime::StreamOpToRuntime;
  SmallVector<Value> lower(PushOp push, CPUStreamingOps::Stream &stream,
                           OpBuilder &b) const override {
    emitPushItem(lowering, b, push.getLoc(), stream, push.getArgs(),
                 "pushing into");
    return {};
  }
};

/// hpvm.pop: an item popped and unpacked into the root's outputs.
struct PopToRuntime : StreamOpToRuntime<PopOp> {
  using StreamOpToRuntime::StreamOpToRuntime;
  SmallVector<Value> lower(PopOp pop, CPUStreamingOps::Stream &stream,
                           OpBuilder &b) const override {
    Location loc = pop.getLoc();
    LLVM::LLVMStructType outputsType =
        lowering.getStorageStruct(stream.root.getOutputTypes());
    Value item = lowering.allocaInEntry(b, loc, outputsType);
    Value status = lowering.callRuntime(b, loc, RuntimeFn::StreamPop,
                                        {stream.stream, item});
    lowering.checkStatus(b, loc, status, "popping from " + stream.what);
    SmallVector<Value> results;
    for (auto [field, type] : llvm::enumerate(pop.getResultTypes()))
      results.push_back(lowering.fromStorage(
          b, loc, lowering.loadField(b, loc, outputsType, item, field), type));
    return results;
  }
};

/// hpvm.wait on a stream: waits until every item has gone through.
struct StreamWaitToRuntime : StreamOpToRuntime<WaitOp> {
  using StreamOpToRuntime::StreamOpToRuntime;
  SmallVector<Value> lower(WaitOp wait, CPUStreamingOps::Stream &stream,
                           OpBuilder &b) const override {
    Location loc = wait.getLoc();
    Value status =
        lowering.callRuntime(b, loc, RuntimeFn::StreamWait, {stream.stream});
    lowering.checkStatus(b, loc, status, "waiting for " + stream.what);
    return {};
  }
};
} // namespace

void mlir::hpvm::populateHPVMStreamingToRuntimePatterns(RewritePatternSet &patterns,
                                                        CPUStreamingOps &state) {
  patterns.add<StreamingLaunchToRuntime, PushToRuntime, PopToRuntime,
               StreamWaitToRuntime>(patterns.getContext(), state);
}

LogicalResult mlir::hpvm::lowerHPVMStreamingOps(ArrayRef<Operation *> hostCode,
                                                CPUStreamingOps &state) {
  // Each streaming launch, then the users of its handle (in the order of its
  // uses), as they were lowered before they were patterns.
  SmallVector<Operation *> ops;
  for (Operation *code : hostCode)
    code->walk([&](LaunchOp launch) {
      if (!launch.getStreaming())
        return;
      ops.push_back(launch);
      llvm::append_range(ops, launch.getGraph().getUsers());
    });
  RewritePatternSet patternList(state.codegen.getModule().getContext());
  populateHPVMStreamingToRuntimePatterns(patternList, state);
  FrozenRewritePatternSet patterns(std::move(patternList));
  // Every op lowers: the support check leaves only push, pop and wait on a
  // streaming handle.
  auto noDiagnostic = [](Operation *) {};
  return applyPatternsOncePerOp(ops, patterns, noDiagnostic,
                                /*stopAtFailure=*/true);
}
