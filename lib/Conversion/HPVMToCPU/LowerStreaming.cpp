//===- LowerStreaming.cpp - Streaming graphs to runtime pipelines ---------===//
// Each child of a streaming root is a pipeline stage. Input port 0 of every
// stage is the pushed item (the packed root arguments, from which binds and
// extents are recomputed); the other inputs are the stage's incoming streaming
// edges; its outputs are its outgoing edges and, for the child that defines
// the root's outputs, the packed outputs the host pops.
// The host ops are rewrite patterns (populateHPVMStreamingToRuntimePatterns):
// a streaming launch calls its root's pipeline function, planned and built on
// the root's first launch; push, pop and wait call the runtime on its stream.
#include "CPULowering.h"
#include "HPVM/Conversion/ApplyPatternsOnce.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

SmallVector<CPULowering::PipelineStage>
CPULowering::planStages(NodeOpInterface root) {
  SmallVector<PipelineStage> stages;
  auto internal = dyn_cast<InternalOp>(root.getOperation());
  if (!internal) {
    PipelineStage stage;
    stage.node = root;
    stage.producesRootOutputs = !root.getOutputTypes().empty();
    stages.push_back(stage);
    return stages;
  }
  DataflowGraph graph(internal, &symbolTables);
  for (unsigned child = 0; child < graph.getNumChildren(); ++child) {
    PipelineStage stage;
    stage.node = graph.getDefinition(child);
    stage.create = graph.getChild(child);
    stage.inputs.assign(graph.getIncomingEdges(child).begin(),
                        graph.getIncomingEdges(child).end());
    stage.outputs.assign(graph.getOutgoingEdges(child).begin(),
                         graph.getOutgoingEdges(child).end());
    stage.producesRootOutputs =
        llvm::any_of(graph.getBindOuts(), [&](BindOutOp bind) {
          return bind.getSource() == stage.create.getHandle();
        });
    stages.push_back(stage);
  }
  return stages;
}

/// Loads the pointer `items[index]` of a `void *const *` array.
static Value itemPointer(CPULowering &lowering, OpBuilder &b, Location loc,
                         Value items, int32_t index) {
  Type pointer = lowering.getPointerType();
  Value address = LLVM::GEPOp::create(b, loc, pointer, pointer, items,
                                      ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, pointer, address);
}

SmallVector<Value> CPULowering::getStageInputs(OpBuilder &b, Location loc,
                                               InternalOp internal,
                                               PipelineStage &stage,
                                               ValueRange rootArgs,
                                               Value inItems,
                                               SmallVectorImpl<Value> &dims) {
  // Recompute the root's extent arithmetic from this item's arguments.
  IRMapping mapping;
  for (auto [from, to] :
       llvm::zip(internal.getBodyBlock().getArguments(), rootArgs))
    mapping.map(from, to);
  for (Operation &op : internal.getBodyBlock())
    if (!isa<CreateNodeOp, EdgeOp, BindInOp, BindOutOp>(op))
      b.clone(op, mapping);
  SmallVector<Value> inputs;
  for (unsigned port = 0, e = stage.node.getInputTypes().size(); port < e;
       ++port) {
    Value value;
    for (BindInOp bind : internal.getBodyBlock().getOps<BindInOp>())
      if (bind.getDest() == stage.create.getHandle() &&
          bind.getDestPort() == port)
        value = mapping.lookup(bind.getInput());
    for (auto [k, edge] : llvm::enumerate(stage.inputs))
      if (edge.getDestPort() == port) {
        Type type = stage.node.getInputTypes()[port];
        Value item = itemPointer(*this, b, loc, inItems, k + 1);
        value = fromStorage(
            b, loc, LLVM::LoadOp::create(b, loc, getStorageType(type), item),
            type);
      }
    inputs.push_back(value);
  }
  for (Value dim : stage.create.getDims())
    dims.push_back(mapping.lookup(dim));
  return inputs;
}

LLVM::LLVMFuncOp CPULowering::createStageFunction(NodeOpInterface root,
                                                  PipelineStage &stage,
                                                  unsigned index) {
  Location loc = root.getLoc();
  StringRef rootName = cast<SymbolOpInterface>(root.getOperation()).getName();
  LLVM::LLVMStructType argsType = getStorageStruct(root.getInputTypes());
  LLVM::LLVMStructType rootOutputsType = getStorageStruct(root.getOutputTypes());
  auto internal = dyn_cast<InternalOp>(root.getOperation());
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto function = LLVM::LLVMFuncOp::create(
      b, loc,
      uniqueName(("__hpvm_stage_" + rootName + "_" + Twine(index)).str()),
      abi::getFunctionType(context, RuntimeCallback::StageFn),
      LLVM::Linkage::Internal);
  Block *entry = function.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value inItems = entry->getArgument(3), outItems = entry->getArgument(4);
  Value args = itemPointer(*this, b, loc, inItems, 0);
  SmallVector<Value> rootArgs;
  for (auto [field, type] : llvm::enumerate(root.getInputTypes()))
    rootArgs.push_back(
        fromStorage(b, loc, loadField(b, loc, argsType, args, field), type));
  // The root is one instance without ancestors.
  Value frame = allocateSingleInstanceFrame(b, loc, nullPointer(b, loc));

  SmallVector<Value> inputs, dims;
  if (!internal)
    inputs = rootArgs;
  else
    inputs = getStageInputs(b, loc, internal, stage, rootArgs, inItems, dims);
  SmallVector<Value> results = runNode(b, loc, stage.node, dims, inputs, frame);
  for (auto [k, edge] : llvm::enumerate(stage.outputs))
    LLVM::StoreOp::create(
        b, loc, toStorage(b, loc, results[edge.getSourcePort()]),
        itemPointer(*this, b, loc, outItems, k));
  if (stage.producesRootOutputs) {
    Value packed = itemPointer(*this, b, loc, outItems, stage.outputs.size());
    if (!internal) {
      for (auto [field, result] : llvm::enumerate(results))
        storeField(b, loc, rootOutputsType, packed, field,
                   toStorage(b, loc, result));
    } else {
      for (BindOutOp bind : internal.getBodyBlock().getOps<BindOutOp>())
        storeField(b, loc, rootOutputsType, packed, bind.getOutput(),
                   toStorage(b, loc, results[bind.getSourcePort()]));
    }
  }
  LLVM::ReturnOp::create(b, loc, nullPointer(b, loc));
  return function;
}

Value CPULowering::addPipelineStage(OpBuilder &b, Location loc, Value pipeline,
                                    PipelineStage &stage,
                                    LLVM::LLVMFuncOp function, Value argsSize,
                                    Value outputsSize, Value stageIndexSlot,
                                    StringRef rootName) {
  auto sizeArray = [&](ArrayRef<Value> sizes) {
    auto type = LLVM::LLVMArrayType::get(b.getI64Type(), std::max<size_t>(sizes.size(), 1));
    Value array = allocaInEntry(b, loc, type);
    for (auto [i, size] : llvm::enumerate(sizes))
      LLVM::StoreOp::create(
          b, loc, size,
          LLVM::GEPOp::create(b, loc, pointerType, type, array,
                              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)}));
    return array;
  };
  SmallVector<Value> inSizes{argsSize}, outSizes;
  for (EdgeOp edge : stage.inputs)
    inSizes.push_back(sizeOf(
        b, loc, getStorageType(stage.node.getInputTypes()[edge.getDestPort()])));
  for (EdgeOp edge : stage.outputs)
    outSizes.push_back(sizeOf(
        b, loc,
        getStorageType(stage.node.getOutputTypes()[edge.getSourcePort()])));
  if (stage.producesRootOutputs)
    outSizes.push_back(outputsSize);
  auto versionType = StageVersion::get(context);
  Value version = allocaInEntry(b, loc, versionType);
  storeField(b, loc, versionType, version, StageVersion::Device,
             i32Constant(b, loc, kDeviceCPU));
  storeField(b, loc, versionType, version, StageVersion::Fn,
             LLVM::AddressOfOp::create(b, loc, function));
  Value added = callRuntime(
      b, loc, RuntimeFn::PipelineAddStage, {pipeline, nullPointer(b, loc), version, i32Constant(b, loc, 1),
       nullPointer(b, loc), i32Constant(b, loc, inSizes.size()),
       sizeArray(inSizes), i32Constant(b, loc, outSizes.size()),
       sizeArray(outSizes), stageIndexSlot});
  checkStatus(b, loc, added, ("adding a stage to the pipeline of @" + rootName).str());
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), stageIndexSlot);
}

LLVM::LLVMFuncOp CPULowering::getPipelineFunction(NodeOpInterface root) {
  if (LLVM::LLVMFuncOp existing = pipelineFunctions.lookup(root.getOperation()))
    return existing;
  Location loc = root.getLoc();
  StringRef rootName = cast<SymbolOpInterface>(root.getOperation()).getName();
  SmallVector<PipelineStage> stages = planStages(root);
  LLVM::LLVMStructType argsType = getStorageStruct(root.getInputTypes());
  LLVM::LLVMStructType rootOutputsType = getStorageStruct(root.getOutputTypes());

  // One stage function per child:
  // status (*)(ctx, device, item, const void *const *in, void *const *out).
  SmallVector<LLVM::LLVMFuncOp> stageFunctions;
  for (auto [index, stage] : llvm::enumerate(stages))
    stageFunctions.push_back(createStageFunction(root, stage, index));

  // The pipeline: create, add the stages, connect, launch.
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto pipelineFunction = LLVM::LLVMFuncOp::create(
      b, loc, uniqueName(("__hpvm_pipeline_" + rootName).str()),
      LLVM::LLVMFunctionType::get(pointerType, {}), LLVM::Linkage::Internal);
  pipelineFunctions[root.getOperation()] = pipelineFunction;
  Block *entry = pipelineFunction.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value argsSize = sizeOf(b, loc, argsType);
  Value outputsSize = root.getOutputTypes().empty()
                          ? i64Constant(b, loc, 0)
                          : sizeOf(b, loc, rootOutputsType);
  Value slot = allocaInEntry(b, loc, pointerType);
  Value status = callRuntime(b, loc, RuntimeFn::PipelineCreate, {argsSize, outputsSize, i32Constant(b, loc, 0), slot});
  checkStatus(b, loc, status, ("creating the pipeline of @" + rootName).str());
  Value pipeline = LLVM::LoadOp::create(b, loc, pointerType, slot);
  Value stageIndexSlot = allocaInEntry(b, loc, b.getI32Type());
  SmallVector<Value> stageIndices;
  for (auto [index, stage] : llvm::enumerate(stages))
    stageIndices.push_back(addPipelineStage(b, loc, pipeline, stage,
                                            stageFunctions[index], argsSize,
                                            outputsSize, stageIndexSlot,
                                            rootName));
  auto connect = [&](Value src, int32_t srcPort, Value dst, int32_t dstPort) {
    Value connected = callRuntime(
        b, loc, RuntimeFn::PipelineConnect, {pipeline, src, i32Constant(b, loc, srcPort), dst, i32Constant(b, loc, dstPort)});
    checkStatus(b, loc, connected, ("connecting the pipeline of @" + rootName).str());
  };
  Value host = i32Constant(b, loc, kPipelineHost);
  for (auto [index, stage] : llvm::enumerate(stages)) {
    connect(host, 0, stageIndices[index], 0);
    if (stage.producesRootOutputs)
      connect(stageIndices[index], stage.outputs.size(), host, 0);
  }
  for (auto [from, stage] : llvm::enumerate(stages))
    for (auto [port, edge] : llvm::enumerate(stage.outputs))
      for (auto [to, sink] : llvm::enumerate(stages))
        for (auto [sinkPort, sinkEdge] : llvm::enumerate(sink.inputs))
          if (sinkEdge == edge)
            connect(stageIndices[from], port, stageIndices[to], sinkPort + 1);
  Value streamSlot = allocaInEntry(b, loc, pointerType);
  Value launched = callRuntime(b, loc, RuntimeFn::StreamLaunch, {pipeline, streamSlot});
  checkStatus(b, loc, launched, ("launching the pipeline of @" + rootName).str());
  callRuntime(b, loc, RuntimeFn::PipelineDestroy, {pipeline});
  LLVM::ReturnOp::create(b, loc,
                         LLVM::LoadOp::create(b, loc, pointerType, streamSlot));
  return pipelineFunction;
}

CPULowering::StartedStream
CPULowering::emitStreamingLaunch(OpBuilder &b, LaunchOp launch) {
  auto root = symbolTables.lookupNearestSymbolFrom<NodeOpInterface>(
      launch, launch.getRootAttr());
  Value stream = LLVM::CallOp::create(b, launch.getLoc(),
                                      getPipelineFunction(root), ValueRange{})
                     .getResult();
  return StartedStream{stream, root};
}

/// Packs `values` (the root's inputs) into an item and pushes it into the
/// stream of `started`; `verb` and the root's name say what failed in the
/// status check.
static void emitPushItem(CPULowering &lowering, OpBuilder &b, Location loc,
                         StreamingLaunches::Stream &started,
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
  StreamingLaunchToRuntime(MLIRContext *context, CPULowering &lowering,
                           StreamingLaunches &streams)
      : OpRewritePattern(context), lowering(lowering), streams(streams) {}

  LogicalResult matchAndRewrite(LaunchOp launch,
                                PatternRewriter &rewriter) const override {
    if (!launch.getStreaming())
      return rewriter.notifyMatchFailure(launch, "not a streaming launch");
    CPULowering::StartedStream started =
        lowering.emitStreamingLaunch(rewriter, launch);
    StreamingLaunches::Stream stream{started.stream, started.root, launch,
                                     ("@" + launch.getRoot()).str()};
    if (!launch.getPushed())
      emitPushItem(lowering, rewriter, launch.getLoc(), stream,
                   launch.getArgs(), "pushing the first item into");
    if (launch.getGraph().use_empty())
      rewriter.eraseOp(launch);
    else
      streams.started[launch.getGraph()] = std::move(stream);
    return success();
  }

  CPULowering &lowering;
  StreamingLaunches &streams;
};

/// The base of the patterns of the ops on a started stream's handle: finds
/// the stream, and erases the op (and the launch after its last user).
template <typename OpTy>
struct StreamOpToRuntime : OpRewritePattern<OpTy> {
  StreamOpToRuntime(MLIRContext *context, CPULowering &lowering,
                    StreamingLaunches &streams)
      : OpRewritePattern<OpTy>(context), lowering(lowering), streams(streams) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value graph = op.getGraph();
    auto it = streams.started.find(graph);
    if (it == streams.started.end())
      return rewriter.notifyMatchFailure(op, "not a started stream's handle");
    StreamingLaunches::Stream stream = it->second;
    rewriter.replaceOp(op, lower(op, stream, rewriter));
    if (graph.use_empty()) {
      streams.started.erase(graph);
      rewriter.eraseOp(stream.launch);
    }
    return success();
  }

  /// The runtime calls of `op` on `stream`; returns its results.
  virtual SmallVector<Value> lower(OpTy op,
                                   StreamingLaunches::Stream &stream,
                                   OpBuilder &b) const = 0;

  CPULowering &lowering;
  StreamingLaunches &streams;
};

/// hpvm.push: the item packed and pushed.
struct PushToRuntime : StreamOpToRuntime<PushOp> {
  using StreamOpToRuntime::StreamOpToRuntime;
  SmallVector<Value> lower(PushOp push, StreamingLaunches::Stream &stream,
                           OpBuilder &b) const override {
    emitPushItem(lowering, b, push.getLoc(), stream, push.getArgs(),
                 "pushing into");
    return {};
  }
};

/// hpvm.pop: an item popped and unpacked into the root's outputs.
struct PopToRuntime : StreamOpToRuntime<PopOp> {
  using StreamOpToRuntime::StreamOpToRuntime;
  SmallVector<Value> lower(PopOp pop, StreamingLaunches::Stream &stream,
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
  SmallVector<Value> lower(WaitOp wait, StreamingLaunches::Stream &stream,
                           OpBuilder &b) const override {
    Location loc = wait.getLoc();
    Value status =
        lowering.callRuntime(b, loc, RuntimeFn::StreamWait, {stream.stream});
    lowering.checkStatus(b, loc, status, "waiting for " + stream.what);
    return {};
  }
};
} // namespace

void mlir::hpvm::cpu::populateHPVMStreamingToRuntimePatterns(
    RewritePatternSet &patterns, CPULowering &lowering,
    StreamingLaunches &streams) {
  patterns.add<StreamingLaunchToRuntime, PushToRuntime, PopToRuntime,
               StreamWaitToRuntime>(patterns.getContext(), lowering, streams);
}

LogicalResult CPULowering::lowerStreamingGraphs() {
  // Each streaming launch, then the users of its handle (in the order of its
  // uses), as they were lowered before they were patterns.
  SmallVector<Operation *> ops;
  walkHostCode([&](LaunchOp launch) {
    if (!launch.getStreaming())
      return;
    ops.push_back(launch);
    llvm::append_range(ops, launch.getGraph().getUsers());
  });
  StreamingLaunches streams;
  RewritePatternSet patternList(module.getContext());
  populateHPVMStreamingToRuntimePatterns(patternList, *this, streams);
  FrozenRewritePatternSet patterns(std::move(patternList));
  // Every op lowers: the support check leaves only push, pop and wait on a
  // streaming handle.
  auto noDiagnostic = [](Operation *) {};
  return applyPatternsOncePerOp(ops, patterns, noDiagnostic,
                                /*stopAtFailure=*/true);
}
