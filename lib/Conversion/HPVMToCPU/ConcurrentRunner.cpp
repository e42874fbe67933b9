//===- ConcurrentRunner.cpp - Independent siblings as task graphs ---------===//
// Children at the same DFG level have no path between them: they run as the
// nodes of one hpvm_rt_graph, concurrently on the worker pool.
#include "ConcurrentRunner.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include <map>

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;


LLVM::LLVMStructType ConcurrentRunner::getTaskContextType(NodeOpInterface node,
                                                     unsigned rank) {
  SmallVector<Type> extra(rank, IntegerType::get(context, 64));
  extra.append({pointerType, pointerType});
  return cg.getStorageStruct(node.getInputTypes(), extra);
}

LLVM::LLVMFuncOp ConcurrentRunner::getTaskFunction(NodeOpInterface node,
                                              unsigned rank, RunNodeFn runChild) {
  TaskFunctionKey key{node.getOperation(), rank};
  if (LLVM::LLVMFuncOp existing = taskFunctions.lookup(key))
    return existing;
  Location loc = node.getLoc();
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  // hpvm_rt_node_fn_t: status (*)(void *context, device *, int64_t data_item)
  auto type = abi::getFunctionType(context, RuntimeCallback::NodeFn);
  StringRef name = cast<SymbolOpInterface>(node.getOperation()).getName();
  auto task = LLVM::LLVMFuncOp::create(
      b, loc, cg.uniqueName(("__hpvm_task_" + name + "_" + Twine(rank)).str()),
      type, LLVM::Linkage::Internal);
  taskFunctions.add(key, task);
  Block *entry = task.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value taskContext = entry->getArgument(0);
  LLVM::LLVMStructType contextType = getTaskContextType(node, rank);
  ArrayRef<Type> inputTypes = node.getInputTypes();
  SmallVector<Value> inputs, dims;
  unsigned field = 0;
  for (Type inputType : inputTypes)
    inputs.push_back(cg.fromStorage(
        b, loc, cg.loadField(b, loc, contextType, taskContext, field++), inputType));
  for (unsigned d = 0; d < rank; ++d)
    dims.push_back(
        cg.toIndex(b, loc, cg.loadField(b, loc, contextType, taskContext, field++)));
  Value parentFrame = cg.loadField(b, loc, contextType, taskContext, field++);
  Value outputs = cg.loadField(b, loc, contextType, taskContext, field);
  SmallVector<Value> results = runChild(b, loc, node, dims, inputs, parentFrame);
  LLVM::LLVMStructType outputType = cg.getStorageStruct(node.getOutputTypes());
  for (auto [index, result] : llvm::enumerate(results))
    cg.storeField(b, loc, outputType, outputs, index, cg.toStorage(b, loc, result));
  // Errors inside the child already ended the program (hpvm_rt_check_at).
  LLVM::ReturnOp::create(b, loc, cg.nullPointer(b, loc));
  return task;
}

void ConcurrentRunner::runConcurrently(
    OpBuilder &b, Location loc, ArrayRef<NodeOpInterface> nodes,
    ArrayRef<LLVM::LLVMFuncOp> gridBodies,
    ArrayRef<SmallVector<Value>> dims, ArrayRef<SmallVector<Value>> inputs,
    Value parentFrame, SmallVectorImpl<SmallVector<Value>> &outputs,
    RunNodeFn runChild) {
  Value graphSlot = cg.allocaInEntry(b, loc, pointerType);
  Value status = cg.callRuntime(b, loc, RuntimeFn::GraphCreate,
                                {cg.i32Constant(b, loc, nodes.size()), graphSlot});
  cg.checkStatus(b, loc, status, "creating the task graph of independent nodes");
  Value graph = LLVM::LoadOp::create(b, loc, pointerType, graphSlot);
  auto versionType = NodeVersion::get(context);
  Value nodeIndex = cg.allocaInEntry(b, loc, b.getI32Type());
  SmallVector<Value> outputSlots;
  // Grid nodes without outputs that read the same values share one range
  // context, and equal grids one extents array: a wide graph's siblings cost
  // a runtime call each, not a context each.
  std::map<SmallVector<const void *>, Value> sharedContexts, sharedExtents;
  for (auto [index, constNode] : llvm::enumerate(nodes)) {
    NodeOpInterface node = constNode;
    unsigned rank = dims[index].size();
    if (LLVM::LLVMFuncOp body = gridBodies.empty() ? nullptr : gridBodies[index]) {
      TypeRange outputTypes = node.getOutputTypes();
      Value slots =
          outputTypes.empty()
              ? cg.nullPointer(b, loc)
              : cg.allocaInEntry(b, loc, cg.getStorageStruct(outputTypes));
      outputSlots.push_back(slots);
      Value rangeContext;
      if (outputTypes.empty()) {
        SmallVector<const void *> contextKey{
            gridRunner.getRangeContextType(node).getAsOpaquePointer()};
        for (Value input : inputs[index])
          contextKey.push_back(input.getAsOpaquePointer());
        Value &shared = sharedContexts[contextKey];
        if (!shared)
          shared = gridRunner.allocateRangeContext(b, loc, node, inputs[index], parentFrame,
                                        slots);
        rangeContext = shared;
      } else {
        // Its own context: the first instance writes the outputs through it.
        rangeContext = gridRunner.allocateRangeContext(b, loc, node, inputs[index],
                                            parentFrame, slots);
      }
      SmallVector<const void *> extentsKey;
      for (Value dim : dims[index])
        extentsKey.push_back(dim.getAsOpaquePointer());
      Value &extents = sharedExtents[extentsKey];
      if (!extents) {
        auto extentsType = Uint64Array::get(context, rank);
        extents = cg.allocaInEntry(b, loc, extentsType);
        for (auto [d, dim] : llvm::enumerate(dims[index]))
          LLVM::StoreOp::create(b, loc, cg.toI64(b, loc, dim),
                                Uint64Array::getElementAddress(
                                    b, loc, extentsType, extents, static_cast<int32_t>(d)));
      }
      Location nodeLoc = node.getLoc();
      Value added = cg.callRuntime(
          b, loc, RuntimeFn::GraphAddGrid, {graph, LLVM::AddressOfOp::create(b, loc, body),
           cg.nodeNameString(b, nodeLoc, node),
           cg.whereString(b, nodeLoc,
                       "running the instances of " + atName(node)),
           cg.i32Constant(b, loc, rank), extents, rangeContext, nodeIndex});
      cg.checkStatus(b, loc, added, "adding a node to the task graph");
      continue;
    }
    LLVM::LLVMStructType contextType = getTaskContextType(node, rank);
    Value taskContext = cg.allocaInEntry(b, loc, contextType);
    unsigned field = 0;
    for (Value input : inputs[index])
      cg.storeField(b, loc, contextType, taskContext, field++,
                 cg.toStorage(b, loc, input));
    for (Value dim : dims[index])
      cg.storeField(b, loc, contextType, taskContext, field++, cg.toI64(b, loc, dim));
    cg.storeField(b, loc, contextType, taskContext, field++, parentFrame);
    TypeRange outputTypes = node.getOutputTypes();
    Value slots =
        outputTypes.empty()
            ? cg.nullPointer(b, loc)
            : cg.allocaInEntry(b, loc, cg.getStorageStruct(outputTypes));
    cg.storeField(b, loc, contextType, taskContext, field, slots);
    outputSlots.push_back(slots);

    Value version = cg.allocaInEntry(b, loc, versionType);
    abi::storeField<NodeVersion>(b, loc, version, NodeVersion::Device,
                                 cg.i32Constant(b, loc, kDeviceCPU));
    abi::storeField<NodeVersion>(
        b, loc, version, NodeVersion::Fn,
        LLVM::AddressOfOp::create(b, loc, getTaskFunction(node, rank, runChild)));
    Value added = cg.callRuntime(
        b, loc, RuntimeFn::GraphAddNode,
        {graph, cg.nullPointer(b, loc), version, cg.i32Constant(b, loc, 1), taskContext,
         nodeIndex});
    cg.checkStatus(b, loc, added, "adding a node to the task graph");
  }
  Value ran = cg.callRuntime(b, loc, RuntimeFn::GraphRun, {graph});
  cg.checkStatus(b, loc, ran, "running independent nodes concurrently");
  cg.callRuntime(b, loc, RuntimeFn::GraphDestroy, {graph});
  for (auto [index, constNode] : llvm::enumerate(nodes)) {
    NodeOpInterface node = constNode;
    SmallVector<Value> results;
    for (unsigned port = 0, e = node.getOutputTypes().size(); port < e; ++port)
      results.push_back(state.readGridOutput(b, loc, node.getOperation(), port,
                                       inputs[index], outputSlots[index],
                                       node.getOutputTypes()));
    outputs.push_back(std::move(results));
  }
}
