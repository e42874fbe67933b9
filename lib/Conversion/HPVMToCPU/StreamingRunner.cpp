//===- StreamingRunner.cpp - Streaming graphs to runtime pipelines --------===//
// Each child of a streaming root is a pipeline stage. Input port 0 of every
// stage is the pushed item (the packed root arguments, from which binds and
// extents are recomputed); the other inputs are the stage's incoming streaming
// edges; its outputs are its outgoing edges and, for the child that defines
// the root's outputs, the packed outputs the host pops.
// A root's pipeline function is built on the root's first launch (the host
// ops are the patterns of LowerStreamingOps.cpp).
#include "StreamingRunner.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::abi;
using namespace mlir::hpvm::cpu;

SmallVector<StreamingRunner::PipelineStage>
StreamingRunner::planStages(NodeOpInterface root) {
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
static Value itemPointer(CPUCodeGen &lowering, OpBuilder &b, Location loc,
                         Value items, int32_t index) {
  Type pointer = lowering.getPointerType();
  Value address = LLVM::GEPOp::create(b, loc, pointer, pointer, items,
                                      ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, pointer, address);
}

SmallVector<Value> StreamingRunner::getStageInputs(OpBuilder &b, Location loc,
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
        Value item = itemPointer(cg, b, loc, inItems, k + 1);
        value = cg.fromStorage(
            b, loc, LLVM::LoadOp::create(b, loc, cg.getStorageType(type), item),
            type);
      }
    inputs.push_back(value);
  }
  for (Value dim : stage.create.getDims())
    dims.push_back(mapping.lookup(dim));
  return inputs;
}

LLVM::LLVMFuncOp StreamingRunner::createStageFunction(NodeOpInterface root,
                                                  PipelineStage &stage,
                                                  unsigned index) {
  Location loc = root.getLoc();
  StringRef rootName = cast<SymbolOpInterface>(root.getOperation()).getName();
  LLVM::LLVMStructType argsType = cg.getStorageStruct(root.getInputTypes());
  LLVM::LLVMStructType rootOutputsType = cg.getStorageStruct(root.getOutputTypes());
  auto internal = dyn_cast<InternalOp>(root.getOperation());
  OpBuilder b(cg.getContext());
  b.setInsertionPointToEnd(cg.getModule().getBody());
  auto function = LLVM::LLVMFuncOp::create(
      b, loc,
      cg.uniqueName(("__hpvm_stage_" + rootName + "_" + Twine(index)).str()),
      abi::getFunctionType(cg.getContext(), RuntimeCallback::StageFn),
      LLVM::Linkage::Internal);
  Block *entry = function.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value inItems = entry->getArgument(3), outItems = entry->getArgument(4);
  Value args = itemPointer(cg, b, loc, inItems, 0);
  SmallVector<Value> rootArgs;
  for (auto [field, type] : llvm::enumerate(root.getInputTypes()))
    rootArgs.push_back(
        cg.fromStorage(b, loc, cg.loadField(b, loc, argsType, args, field), type));
  // The root is one instance without ancestors.
  Value frame = cg.allocateSingleInstanceFrame(b, loc, cg.nullPointer(b, loc));

  SmallVector<Value> inputs, dims;
  if (!internal)
    inputs = rootArgs;
  else
    inputs = getStageInputs(b, loc, internal, stage, rootArgs, inItems, dims);
  SmallVector<Value> results = runNode(b, loc, stage.node, dims, inputs, frame);
  for (auto [k, edge] : llvm::enumerate(stage.outputs))
    LLVM::StoreOp::create(
        b, loc, cg.toStorage(b, loc, results[edge.getSourcePort()]),
        itemPointer(cg, b, loc, outItems, k));
  if (stage.producesRootOutputs) {
    Value packed = itemPointer(cg, b, loc, outItems, stage.outputs.size());
    if (!internal) {
      for (auto [field, result] : llvm::enumerate(results))
        cg.storeField(b, loc, rootOutputsType, packed, field,
                   cg.toStorage(b, loc, result));
    } else {
      for (BindOutOp bind : internal.getBodyBlock().getOps<BindOutOp>())
        cg.storeField(b, loc, rootOutputsType, packed, bind.getOutput(),
                   cg.toStorage(b, loc, results[bind.getSourcePort()]));
    }
  }
  LLVM::ReturnOp::create(b, loc, cg.nullPointer(b, loc));
  return function;
}

Value StreamingRunner::addPipelineStage(OpBuilder &b, Location loc, Value pipeline,
                                    PipelineStage &stage,
                                    LLVM::LLVMFuncOp function, Value argsSize,
                                    Value outputsSize, Value stageIndexSlot,
                                    StringRef rootName) {
  auto sizeArray = [&](ArrayRef<Value> sizes) {
    auto type = Uint64Array::get(cg.getContext(), std::max<size_t>(sizes.size(), 1));
    Value array = cg.allocaInEntry(b, loc, type);
    for (auto [i, size] : llvm::enumerate(sizes))
      LLVM::StoreOp::create(
          b, loc, size,
          Uint64Array::getElementAddress(b, loc, type, array, static_cast<int32_t>(i)));
    return array;
  };
  SmallVector<Value> inSizes{argsSize}, outSizes;
  for (EdgeOp edge : stage.inputs)
    inSizes.push_back(cg.sizeOf(
        b, loc, cg.getStorageType(stage.node.getInputTypes()[edge.getDestPort()])));
  for (EdgeOp edge : stage.outputs)
    outSizes.push_back(cg.sizeOf(
        b, loc,
        cg.getStorageType(stage.node.getOutputTypes()[edge.getSourcePort()])));
  if (stage.producesRootOutputs)
    outSizes.push_back(outputsSize);
  auto versionType = StageVersion::get(cg.getContext());
  Value version = cg.allocaInEntry(b, loc, versionType);
  abi::storeField<StageVersion>(b, loc, version, StageVersion::Device,
                                cg.i32Constant(b, loc, kDeviceCPU));
  abi::storeField<StageVersion>(b, loc, version, StageVersion::Fn,
                                LLVM::AddressOfOp::create(b, loc, function));
  Value added = cg.callRuntime(
      b, loc, RuntimeFn::PipelineAddStage,
      {pipeline, cg.nullPointer(b, loc), version, cg.i32Constant(b, loc, 1),
       cg.nullPointer(b, loc), cg.i32Constant(b, loc, inSizes.size()),
       sizeArray(inSizes), cg.i32Constant(b, loc, outSizes.size()),
       sizeArray(outSizes), stageIndexSlot});
  cg.checkStatus(b, loc, added, ("adding a stage to the pipeline of @" + rootName).str());
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), stageIndexSlot);
}

void StreamingRunner::connectStages(OpBuilder &b, Location loc, Value pipeline,
                                       ArrayRef<PipelineStage> stages,
                                       ArrayRef<Value> stageIndices,
                                       StringRef rootName) {
  auto connect = [&](Value src, int32_t srcPort, Value dst, int32_t dstPort) {
    Value connected = cg.callRuntime(b, loc, RuntimeFn::PipelineConnect,
                                     {pipeline, src, cg.i32Constant(b, loc, srcPort), dst,
                                      cg.i32Constant(b, loc, dstPort)});
    cg.checkStatus(b, loc, connected, ("connecting the pipeline of @" + rootName).str());
  };
  Value host = cg.i32Constant(b, loc, kPipelineHost);
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
}

LLVM::LLVMFuncOp StreamingRunner::getPipelineFunction(NodeOpInterface root) {
  if (LLVM::LLVMFuncOp existing = pipelineFunctions.lookup(root.getOperation()))
    return existing;
  Location loc = root.getLoc();
  StringRef rootName = cast<SymbolOpInterface>(root.getOperation()).getName();
  SmallVector<PipelineStage> stages = planStages(root);
  LLVM::LLVMStructType argsType = cg.getStorageStruct(root.getInputTypes());
  LLVM::LLVMStructType rootOutputsType = cg.getStorageStruct(root.getOutputTypes());

  // One stage function per child:
  // status (*)(ctx, device, item, const void *const *in, void *const *out).
  SmallVector<LLVM::LLVMFuncOp> stageFunctions;
  for (auto [index, stage] : llvm::enumerate(stages))
    stageFunctions.push_back(createStageFunction(root, stage, index));

  // The pipeline: create, add the stages, connect, launch.
  OpBuilder b(cg.getContext());
  b.setInsertionPointToEnd(cg.getModule().getBody());
  auto pipelineFunction = LLVM::LLVMFuncOp::create(
      b, loc, cg.uniqueName(("__hpvm_pipeline_" + rootName).str()),
      LLVM::LLVMFunctionType::get(cg.getPointerType(), {}), LLVM::Linkage::Internal);
  pipelineFunctions[root.getOperation()] = pipelineFunction;
  Block *entry = pipelineFunction.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value argsSize = cg.sizeOf(b, loc, argsType);
  Value outputsSize = root.getOutputTypes().empty()
                          ? cg.i64Constant(b, loc, 0)
                          : cg.sizeOf(b, loc, rootOutputsType);
  Value slot = cg.allocaInEntry(b, loc, cg.getPointerType());
  Value status = cg.callRuntime(b, loc, RuntimeFn::PipelineCreate,
                                {argsSize, outputsSize, cg.i32Constant(b, loc, 0), slot});
  cg.checkStatus(b, loc, status, ("creating the pipeline of @" + rootName).str());
  Value pipeline = LLVM::LoadOp::create(b, loc, cg.getPointerType(), slot);
  Value stageIndexSlot = cg.allocaInEntry(b, loc, b.getI32Type());
  SmallVector<Value> stageIndices;
  for (auto [index, stage] : llvm::enumerate(stages))
    stageIndices.push_back(addPipelineStage(b, loc, pipeline, stage,
                                            stageFunctions[index], argsSize,
                                            outputsSize, stageIndexSlot,
                                            rootName));
  connectStages(b, loc, pipeline, stages, stageIndices, rootName);
  Value streamSlot = cg.allocaInEntry(b, loc, cg.getPointerType());
  Value launched = cg.callRuntime(b, loc, RuntimeFn::StreamLaunch, {pipeline, streamSlot});
  cg.checkStatus(b, loc, launched, ("launching the pipeline of @" + rootName).str());
  cg.callRuntime(b, loc, RuntimeFn::PipelineDestroy, {pipeline});
  LLVM::ReturnOp::create(b, loc,
                         LLVM::LoadOp::create(b, loc, cg.getPointerType(), streamSlot));
  return pipelineFunction;
}
