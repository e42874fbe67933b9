//===- LowerStreaming.cpp - Streaming graphs to runtime pipelines ---------===//
// Each child of a streaming root is a pipeline stage. Input port 0 of every
// stage is the pushed item (the packed root arguments, from which binds and
// extents are recomputed); the other inputs are the stage's incoming streaming
// edges; its outputs are its outgoing edges and, for the child that defines
// the root's outputs, the packed outputs the host pops.
// A root's pipeline function is built on the root's first launch (the host
// ops are the patterns of LowerStreamingOps.cpp).
#include "CPULowering.h"
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
