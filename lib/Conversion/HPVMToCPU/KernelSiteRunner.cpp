//===- KernelSiteRunner.cpp - Host side of nodes with a kernel version ----===//
// A node that hpvm-embed-kernels gave a kernel site runs through
// hpvm_rt_kernel_run first; its CPU version runs when no device did.
#include "KernelSiteRunner.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "HPVM/Dialect/HPVM/Analysis/TileShape.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

/// The access mode of input `index` of `node` (inout when not given).
static int32_t getAccess(NodeOpInterface node, unsigned index) {
  auto function = cast<FunctionOpInterface>(node.getOperation());
  if (auto access = function.getArgAttrOfType<AccessAttr>(
          index, HPVMDialect::getAccessAttrName()))
    return static_cast<int32_t>(access.getValue());
  return kAccessInOut;
}

/// Whether instances of `leaf` may see each other's work: an atomic, in the
/// leaf, its node function `function` (the body moved there) or a function
/// they call, updates memory others update too (a histogram's bins), which a
/// split grid's two copies would not merge.
static bool hasInstanceInteractions(LeafOp leaf, func::FuncOp function,
                                    SymbolTableCollection &symbolTables) {
  SmallVector<Operation *> work{leaf.getOperation()};
  DenseSet<Operation *> seen{leaf.getOperation()};
  if (function && seen.insert(function).second)
    work.push_back(function);
  while (!work.empty()) {
    Operation *root = work.pop_back_val();
    WalkResult result = root->walk([&](Operation *op) {
      if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp,
              LLVM::AtomicRMWOp, LLVM::AtomicCmpXchgOp>(op))
        return WalkResult::interrupt();
      if (auto call = dyn_cast<CallOpInterface>(op))
        if (Operation *callee = call.resolveCallableInTable(&symbolTables))
          if (seen.insert(callee).second)
            work.push_back(callee);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return true;
  }
  return false;
}

LogicalResult KernelSiteRunner::prepareKernelSites() {
  OpBuilder b(context);
  for (auto leaf : module.getOps<LeafOp>())
    if (leaf->hasAttr(HPVMDialect::getKernelAttrName()))
      ancestorQueries[leaf] = collectAncestorQueries(leaf, 1);
  for (auto tile : module.getOps<InternalOp>()) {
    if (!tile->hasAttr(HPVMDialect::getKernelAttrName()))
      continue;
    std::string reason;
    FailureOr<TileShape> shape = matchTileShape(tile, state.symbolTables, reason);
    if (failed(shape)) {
      // Only a hand-written site gets here (convert-hpvm-to-gpu makes
      // kernels of tiles only): the node keeps its CPU version.
      tile.emitWarning() << "runs on the CPU: its kernel site is not usable, "
                            "because "
                         << reason;
      continue;
    }
    TileKernel &kernel = tileKernels[tile];
    kernel.instances = shape->instancesCreate;
    tileKernelLeaves.insert(shape->instances);
    ancestorQueries[tile] = collectAncestorQueries(shape->instances, 2);
    SmallVector<AllocOp> allocations = shape->getAllocations();
    if (allocations.empty())
      continue;
    // The allocation nodes' bodies move into their node functions: what
    // computes the sizes is copied out first, into a function of the tile's
    // inputs returning the bytes of each allocation.
    Location loc = tile.getLoc();
    b.setInsertionPoint(tile);
    SmallVector<Type> results(allocations.size(), b.getIndexType());
    auto function = func::FuncOp::create(
        b, loc, cg.uniqueName(("__hpvm_tile_memory_" + tile.getSymName()).str()),
        b.getFunctionType(tile.getArgumentTypes(), results));
    state.markInternal(function);
    Block *entry = function.addEntryBlock();
    b.setInsertionPointToStart(entry);
    SmallVector<Value> bytes;
    for (const TileAllocator &allocator : shape->allocators)
      for (AllocOp alloc : allocator.allocations) {
        IRMapping mapping;
        SmallVector<Value> sizes =
            cloneFromAllocator(b, allocator, entry->getArguments(),
                               alloc.getDynamicSizes(), mapping);
        auto memref = dyn_cast<MemRefType>(alloc.getType());
        if (!memref) {
          bytes.push_back(sizes.front());
          continue;
        }
        Value count = arith::ConstantIndexOp::create(
            b, loc, memref.getElementTypeBitWidth() / 8);
        unsigned dynamic = 0;
        for (int64_t size : memref.getShape())
          count = arith::MulIOp::create(
              b, loc, count,
              ShapedType::isDynamic(size)
                  ? sizes[dynamic++]
                  : Value(arith::ConstantIndexOp::create(b, loc, size)));
        bytes.push_back(count);
      }
    func::ReturnOp::create(b, loc, bytes);
    kernel.memoryBytes = function;
  }
  return success();
}



bool KernelSiteRunner::hasKernelSite(NodeOpInterface node,
                                PerInstancePorts perInstance) {
  auto site = node->getAttrOfType<FlatSymbolRefAttr>(
      HPVMDialect::getKernelAttrName());
  if (!site)
    return false;
  // Values per instance travel in arrays: the kernel must have been built
  // for exactly these (convert-hpvm-to-gpu records them).
  if (perInstance.any()) {
    std::optional<abi::PerInstanceMasks> masks =
        abi::getPerInstanceMasks(node->getAttrOfType<DenseI64ArrayAttr>(
            HPVMDialect::getKernelPerInstanceAttrName()));
    if (!masks || masks->inputs != perInstance.inputs ||
        masks->outputs != perInstance.outputs)
      return false;
  }
  // A tile kernel may run a single tile; a leaf kernel runs a grid, a
  // single instance as a grid of one (runNode).
  if (isa<InternalOp>(node.getOperation()))
    return tileKernels.contains(node.getOperation());
  return true;
}

/// The grid of `create`, the replicated child of the tile kernel `tile`,
/// computed from `inputs` in host code.
static SmallVector<Value> getTileExtents(OpBuilder &b, InternalOp tile,
                                         CreateNodeOp create,
                                         ValueRange inputs) {
  Block &body = tile.getBodyBlock();
  IRMapping mapping;
  for (auto [argument, input] : llvm::zip(body.getArguments(), inputs))
    mapping.map(argument, input);
  // The extent arithmetic is side-effect free and depends only on inputs.
  return cloneSliceOf(b, body, create.getDims(), mapping);
}

Value KernelSiteRunner::viewBytes(OpBuilder &b, Location loc, MemRefType type,
                             Value descriptor) {
  // offset + 1 + sum((size - 1) * stride) elements from the aligned pointer.
  Value one = cg.i64Constant(b, loc, 1);
  Value extent = LLVM::AddOp::create(
      b, loc, extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Offset), one);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value size = extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Sizes, d);
    Value stride = extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Strides, d);
    Value last = LLVM::SubOp::create(b, loc, size, one);
    extent = LLVM::AddOp::create(b, loc, extent,
                                 LLVM::MulOp::create(b, loc, last, stride));
  }
  return LLVM::MulOp::create(
      b, loc, extent, cg.sizeOf(b, loc, cg.getStorageType(type.getElementType())));
}

Value KernelSiteRunner::pairedBytes(OpBuilder &b, Location loc, NodeOpInterface node,
                               ValueRange inputs, unsigned index) {
  // HPVM-C passes each buffer with its size in bytes right after it.
  TypeRange types = node.getInputTypes();
  if (index + 1 < inputs.size() && types[index + 1].isInteger(64))
    return inputs[index + 1];
  return cg.i64Constant(b, loc, 0);
}

/// Calls the tracker function `function` on `pointer` (with `extra`
/// arguments); memory the tracker does not know (NOT_FOUND) is only ever on
/// the host, and any other failure stops the program with `what`.
void KernelSiteRunner::callTrackerIfTracked(OpBuilder &b, Location loc,
                                       RuntimeFn function, Value pointer,
                                       ValueRange extra, StringRef what) {
  SmallVector<Value> operands{pointer};
  operands.append(extra.begin(), extra.end());
  Value status = cg.callRuntime(b, loc, function, operands);
  Value code = cg.callRuntime(b, loc, RuntimeFn::StatusCode, {status});
  Value untracked = LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::eq, code,
      cg.i32Constant(b, loc, HPVM_STATUS_NOT_FOUND));
  auto choice = scf::IfOp::create(b, loc, untracked, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(choice.thenBlock()->getTerminator());
  cg.callRuntime(b, loc, RuntimeFn::StatusFree, {status});
  b.setInsertionPoint(choice.elseBlock()->getTerminator());
  cg.checkStatus(b, loc, status, what.str());
}

void KernelSiteRunner::requestHostCopies(OpBuilder &b, Location loc,
                                    NodeOpInterface node, ValueRange inputs,
                                    ValueRange dims, PerInstancePorts perInstance) {
  TypeRange types = node.getInputTypes();
  std::string what = ("bringing the inputs of @" +
                      cast<SymbolOpInterface>(node.getOperation()).getName() +
                      " back to the host")
                         .str();
  Value instances = perInstance.inputs ? gridRunner.instanceCount(b, loc, dims) : Value();
  for (auto [index, input] : llvm::enumerate(inputs)) {
    Value pointer, bytes;
    int32_t access = getAccess(node, index);
    if ((perInstance.inputs >> index) & 1) {
      // An array of values per instance, which a kernel may have written.
      pointer = input;
      bytes = LLVM::MulOp::create(b, loc, instances,
                                  cg.sizeOf(b, loc, cg.getStorageType(types[index])));
      access = HPVM_RT_ACCESS_IN;
    } else if (auto memref = dyn_cast<MemRefType>(types[index])) {
      Value descriptor = cg.toStorage(b, loc, input);
      pointer = extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Aligned);
      bytes = viewBytes(b, loc, memref, descriptor);
    } else if (isa<LLVM::LLVMPointerType>(types[index])) {
      pointer = input;
      bytes = pairedBytes(b, loc, node, inputs, index);
    } else {
      continue;
    }
    callTrackerIfTracked(b, loc, RuntimeFn::RequestHost, pointer,
                         {bytes, cg.i32Constant(b, loc, access)}, what);
  }
}

LLVM::LLVMStructType KernelSiteRunner::getKernelOutputStruct(TypeRange types) {
  SmallVector<Type> fields;
  for (Type type : types)
    fields.push_back(isa<MemRefType>(type) ? IntegerType::get(context, 64)
                                           : cg.getStorageType(type));
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

KernelSiteRunner::KernelArg KernelSiteRunner::valueParam(OpBuilder &b, Location loc,
                                               Value value) {
  return {kParamValue, 0, cg.sizeOf(b, loc, value.getType()), value};
}

void KernelSiteRunner::addMemRefParams(OpBuilder &b, Location loc, MemRefType type,
                                  Value memref, int32_t access,
                                  SmallVectorImpl<KernelArg> &params) {
  // The descriptor's fields, as the kernel's lowering expands them; the
  // buffer is the aligned pointer's data, as far as the view reaches.
  [[maybe_unused]] size_t first = params.size();
  Value descriptor = cg.toStorage(b, loc, memref);
  Value aligned = extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Aligned);
  Value bytes = viewBytes(b, loc, type, descriptor);
  params.push_back({kParamBuffer, access, bytes, aligned});
  params.push_back({kParamBuffer, access, bytes, aligned});
  auto addValue = [&](Value value) { params.push_back(valueParam(b, loc, value)); };
  addValue(extractMemRefField(b, loc, descriptor, MemRefDescriptorField::Offset));
  for (auto field : {MemRefDescriptorField::Sizes, MemRefDescriptorField::Strides})
    for (int64_t d = 0; d < type.getRank(); ++d)
      addValue(extractMemRefField(b, loc, descriptor, field, d));
  assert(static_cast<int64_t>(params.size() - first) ==
             abi::getMemRefParamCount(type.getRank()) &&
         "RuntimeABI's memref parameter count");
}

void KernelSiteRunner::addKernelInputParams(OpBuilder &b, Location loc,
                                       NodeOpInterface node, ValueRange inputs,
                                       uint64_t perInstanceInputs,
                                       Value instances,
                                       SmallVectorImpl<KernelArg> &params) {
  auto addValue = [&](Value value) { params.push_back(valueParam(b, loc, value)); };
  TypeRange inputTypes = node.getInputTypes();
  for (auto [index, input] : llvm::enumerate(inputs)) {
    Type type = inputTypes[index];
    int32_t access = getAccess(node, index);
    if ((perInstanceInputs >> index) & 1) {
      // An array of values per instance: one element per instance.
      Value bytes = LLVM::MulOp::create(b, loc, instances,
                                        cg.sizeOf(b, loc, cg.getStorageType(type)));
      params.push_back({kParamBuffer, HPVM_RT_ACCESS_IN, bytes, input});
      continue;
    }
    if (auto memref = dyn_cast<MemRefType>(type)) {
      addMemRefParams(b, loc, memref, input, access, params);
    } else if (isa<LLVM::LLVMPointerType>(type)) {
      // HPVM-C passes each buffer with its size in bytes next to it.
      params.push_back(
          {kParamBuffer, access, pairedBytes(b, loc, node, inputs, index), input});
    } else if (type.isInteger(1)) {
      // A byte for a boolean: kernels take no i1 (convert-hpvm-to-gpu).
      addValue(LLVM::ZExtOp::create(b, loc, b.getI8Type(), input));
    } else {
      addValue(cg.toStorage(b, loc, input));
    }
  }
}

SmallVector<KernelSiteRunner::KernelArg> KernelSiteRunner::getKernelParams(
    OpBuilder &b, Location loc, NodeOpInterface node, ValueRange dims,
    ValueRange inputs, Value parentFrame, Value outputs,
    PerInstancePorts perInstance, ArrayRef<Value> outputArrays,
    ArrayRef<Value> grid, bool tiled, func::FuncOp memoryBytes) {
  SmallVector<KernelArg> params;
  auto addValue = [&](Value value) { params.push_back(valueParam(b, loc, value)); };
  // Arrays of values per instance: one element per instance of this grid.
  Value instances = perInstance.any() ? gridRunner.instanceCount(b, loc, dims) : Value();
  // The parameters in the kernel's order (RuntimeABI.h).
  for (KernelParamGroup group :
       getKernelParamGroups(tiled ? KernelShape::Tile : KernelShape::Leaf)) {
    switch (group) {
    case KernelParamGroup::Inputs:
      addKernelInputParams(b, loc, node, inputs, perInstance.inputs, instances,
                           params);
      break;
    case KernelParamGroup::GridExtents:
      for (Value extent : grid)
        addValue(extent);
      break;
    case KernelParamGroup::AncestorQueries: {
      // The grids above the kernel's levels: the first ancestor's instance is
      // the one running this launch (`parentFrame`), each further level one hop.
      unsigned firstAncestor = tiled ? 2 : 1;
      for (AncestorQuery query : ancestorQueries.lookup(node.getOperation())) {
        Value frame = parentFrame;
        for (unsigned hop = firstAncestor; hop < query.level; ++hop)
          frame = LLVM::LoadOp::create(
              b, loc, pointerType,
              cg.fieldAddress(b, loc, frameType, frame, {FrameParent}));
        Value address = cg.fieldAddress(
            b, loc, frameType, frame,
            {query.isId ? FrameIds : FrameExtents, static_cast<int32_t>(query.dim)});
        addValue(LLVM::LoadOp::create(b, loc, b.getI64Type(), address));
      }
      break;
    }
    case KernelParamGroup::Outputs:
      // Host memory the runtime copies to the device and back.
      if (outputs)
        params.push_back(
            {kParamBuffer, HPVM_RT_ACCESS_OUT,
             cg.sizeOf(b, loc, getKernelOutputStruct(node.getOutputTypes())), outputs});
      break;
    case KernelParamGroup::PerInstanceOutputs:
      // In port order: every instance writes its element, so their device
      // copies need no copy in.
      for (auto [port, type] : llvm::enumerate(node.getOutputTypes()))
        if ((perInstance.outputs >> port) & 1)
          params.push_back({kParamBuffer,
                            static_cast<int32_t>(HPVM_RT_ACCESS_OUT |
                                                 HPVM_RT_PARAM_WRITES_ALL),
                            LLVM::MulOp::create(
                                b, loc, instances,
                                cg.sizeOf(b, loc, cg.getStorageType(type))),
                            outputArrays[port]});
      break;
    case KernelParamGroup::WorkgroupMemory:
      // Its bytes per work-group, as its allocation nodes compute them from
      // the tile's inputs.
      if (memoryBytes) {
        auto call = func::CallOp::create(b, loc, memoryBytes, inputs);
        for (Value bytes : call.getResults())
          params.push_back(
              {kParamWorkgroup, 0, cg.toI64(b, loc, bytes), cg.nullPointer(b, loc)});
      }
      break;
    case KernelParamGroup::Constants:
    case KernelParamGroup::OutputBuffers:
      break; // tensor kernels only (runTensorKernel)
    }
  }
  return params;
}

Value KernelSiteRunner::storeKernelParams(OpBuilder &b, Location loc,
                                     ArrayRef<KernelArg> params) {
  auto arrayType =
      LLVM::LLVMArrayType::get(KernelParam::get(context), params.size());
  Value array = cg.allocaInEntry(b, loc, arrayType);
  for (auto [index, param] : llvm::enumerate(params)) {
    int32_t position = static_cast<int32_t>(index);
    auto field = [&](KernelParam::Field member) {
      return getElementFieldAddress<KernelParam>(b, loc, arrayType, array, position, member);
    };
    LLVM::StoreOp::create(b, loc, cg.i32Constant(b, loc, param.kind),
                          field(KernelParam::Kind));
    LLVM::StoreOp::create(b, loc, cg.i32Constant(b, loc, param.access),
                          field(KernelParam::Access));
    LLVM::StoreOp::create(b, loc, param.size, field(KernelParam::Size));
    if (param.kind == kParamValue) {
      Value slot = cg.allocaInEntry(b, loc, param.value.getType());
      LLVM::StoreOp::create(b, loc, param.value, slot);
      LLVM::StoreOp::create(b, loc, slot, field(KernelParam::Value));
      LLVM::StoreOp::create(b, loc, cg.nullPointer(b, loc), field(KernelParam::Host));
    } else {
      LLVM::StoreOp::create(b, loc, cg.nullPointer(b, loc), field(KernelParam::Value));
      LLVM::StoreOp::create(b, loc, param.value, field(KernelParam::Host));
    }
  }
  return array;
}

Value KernelSiteRunner::runKernel(OpBuilder &b, Location loc, NodeOpInterface node,
                             ValueRange dims, ValueRange inputs,
                             Value parentFrame, Value outputs,
                             PerInstancePorts perInstance,
                             ArrayRef<Value> outputArrays) {
  // Grid and work-group of instances.
  Value one = cg.i64Constant(b, loc, 1);
  SmallVector<Value> grid(3, one), block(3, cg.i64Constant(b, loc, 0));
  const TileKernel *tileKernel = nullptr;
  if (isa<InternalOp>(node.getOperation())) {
    tileKernel = &tileKernels.find(node.getOperation())->second;
    SmallVector<Value> leafDims =
        getTileExtents(b, cast<InternalOp>(node.getOperation()),
                       tileKernel->instances, inputs);
    for (unsigned d = 0; d < 3; ++d) {
      Value tiles = d < dims.size() ? cg.toI64(b, loc, dims[d]) : one;
      Value tile = d < leafDims.size() ? cg.toI64(b, loc, leafDims[d]) : one;
      block[d] = tile;
      grid[d] = LLVM::MulOp::create(b, loc, tiles, tile);
    }
  } else {
    for (unsigned d = 0; d < dims.size(); ++d)
      grid[d] = cg.toI64(b, loc, dims[d]);
  }

  SmallVector<KernelArg> params =
      getKernelParams(b, loc, node, dims, inputs, parentFrame, outputs,
                      perInstance, outputArrays, grid, tileKernel != nullptr,
                      tileKernel ? tileKernel->memoryBytes : func::FuncOp());
  // A grid of a leaf whose instances write only what they own and whose CPU
  // version is one range function: the runtime may split it between a device
  // and that function (hpvm_rt_kernel_run_split).
  auto leaf = dyn_cast<LeafOp>(node.getOperation());
  bool single = dims.size() == 1 && getConstantIntValue(dims[0]) == 1;
  if (!leaf || single || outputs || perInstance.any() ||
      !gridRunner.isPlainGrid(leaf, dims.size()) ||
      hasInstanceInteractions(leaf, state.nodeFunctions.lookup(leaf), state.symbolTables))
    return launchKernel(b, loc, node, grid, block, params);
  state.checkGridFitsInputs(b, loc, leaf, dims, inputs, /*perInstanceInputs=*/0);
  SplitGrid split;
  SmallVector<Target> targets = node.getTargets();
  split.hinted = llvm::is_contained(targets, Target::cpu) &&
                 (llvm::is_contained(targets, Target::gpu) ||
                  llvm::is_contained(targets, Target::spirv));
  split.rank = dims.size();
  split.body = LLVM::AddressOfOp::create(b, loc,
                                         gridRunner.getRangeFunction(node, split.rank));
  split.context = gridRunner.allocateRangeContext(b, loc, node, inputs, parentFrame,
                                       cg.nullPointer(b, loc));
  return launchKernel(b, loc, node, grid, block, params, &split);
}

Value KernelSiteRunner::launchKernel(OpBuilder &b, Location loc, NodeOpInterface node,
                                ArrayRef<Value> grid, ArrayRef<Value> block,
                                ArrayRef<KernelArg> params,
                                const SplitGrid *split) {
  auto siteName = node->getAttrOfType<FlatSymbolRefAttr>(
      HPVMDialect::getKernelAttrName());
  auto i32 = b.getI32Type();
  // The parameter array, the grid, the work-group and the answer.
  Value array = storeKernelParams(b, loc, params);
  auto extentsType = Uint64Array::get(context);
  auto storeExtents = [&](ArrayRef<Value> values) {
    Value slot = cg.allocaInEntry(b, loc, extentsType);
    for (int32_t d = 0; d < 3; ++d)
      LLVM::StoreOp::create(b, loc, values[d],
                            Uint64Array::getElementAddress(b, loc, extentsType, slot, d));
    return slot;
  };
  Value gridSlot = storeExtents(grid);
  Value blockSlot = storeExtents(block);
  Value ranSlot = cg.allocaInEntry(b, loc, i32);
  Value site = LLVM::AddressOfOp::create(b, loc, pointerType, siteName.getValue());
  Value count = cg.i32Constant(b, loc, static_cast<int32_t>(params.size()));
  Value status =
      split ? cg.callRuntime(b, loc, RuntimeFn::KernelRunSplit,
                          {site, gridSlot, blockSlot, array, count,
                           cg.i32Constant(b, loc, split->hinted),
                           cg.i32Constant(b, loc, split->rank), split->body,
                           split->context, ranSlot})
            : cg.callRuntime(b, loc, RuntimeFn::KernelRun,
                          {site, gridSlot, blockSlot, array, count, ranSlot});
  cg.checkStatus(b, loc, status,
              "running the kernel of " + atName(node));
  Value ran = LLVM::LoadOp::create(b, loc, i32, ranSlot);
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, ran,
                              cg.i32Constant(b, loc, 0));
}

KernelSiteRunner::TensorKernelRun
KernelSiteRunner::launchTensorKernel(OpBuilder &b, Location loc, NodeOpInterface node,
                                ValueRange inputs) {
  // The tensor outputs are allocated here, as the CPU version would (freed
  // by their receiver), so that the kernel has somewhere to write them; the
  // scalar outputs come back in a struct.
  TensorKernelRun run;
  SmallVector<Type> scalarTypes;
  int64_t elements = 0;
  for (Type type : node.getOutputTypes()) {
    if (auto buffer = dyn_cast<MemRefType>(type)) {
      run.buffers.push_back(memref::AllocOp::create(b, loc, buffer));
      elements = buffer.getNumElements();
    } else {
      scalarTypes.push_back(type);
    }
  }
  run.scalarStruct = getKernelOutputStruct(scalarTypes);
  if (!scalarTypes.empty())
    run.scalars = cg.allocaInEntry(b, loc, run.scalarStruct);
  // A thread per element in work-groups the runtime picks, or the launch
  // the kernel asks for (hpvm.tensor_launch: a tiled product, a perforated
  // convolution) with its work-group memory.
  auto launch = node->getAttrOfType<DenseI64ArrayAttr>(
      HPVMDialect::getTensorLaunchAttrName());
  SmallVector<Value> grid, block;
  // The parameters in the kernel's order (RuntimeABI.h).
  SmallVector<KernelArg> params;
  auto addValue = [&](Value value) { params.push_back(valueParam(b, loc, value)); };
  for (KernelParamGroup group : getKernelParamGroups(KernelShape::Tensor)) {
    switch (group) {
    case KernelParamGroup::Inputs:
      for (auto [index, input] : llvm::enumerate(inputs)) {
        if (auto type = dyn_cast<MemRefType>(input.getType()))
          addMemRefParams(b, loc, type, input, getAccess(node, index), params);
        else
          addValue(cg.toStorage(b, loc, input));
      }
      break;
    case KernelParamGroup::Constants:
      for (auto name : node->getAttrOfType<ArrayAttr>(
                               HPVMDialect::getTensorKernelAttrName())
                           .getAsRange<FlatSymbolRefAttr>()) {
        auto global = state.symbolTables.lookupNearestSymbolFrom<memref::GlobalOp>(
            module, name);
        Value table =
            memref::GetGlobalOp::create(b, loc, global.getType(), name.getValue());
        addMemRefParams(b, loc, global.getType(), table, HPVM_RT_ACCESS_IN, params);
      }
      break;
    case KernelParamGroup::OutputBuffers:
      for (Value buffer : run.buffers)
        addMemRefParams(b, loc, cast<MemRefType>(buffer.getType()), buffer,
                        HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL, params);
      break;
    case KernelParamGroup::GridExtents: {
      Value one = cg.i64Constant(b, loc, 1);
      Value zero = cg.i64Constant(b, loc, 0);
      grid = {cg.i64Constant(b, loc, launch ? launch[0] : elements), one, one};
      block = {zero, zero, zero};
      if (launch && launch[1])
        block = {cg.i64Constant(b, loc, launch[1]), one, one};
      for (Value extent : grid)
        addValue(extent);
      break;
    }
    case KernelParamGroup::Outputs:
      // The scalar outputs, in a struct the runtime copies back.
      if (run.scalars)
        params.push_back({kParamBuffer, HPVM_RT_ACCESS_OUT,
                          cg.sizeOf(b, loc, run.scalarStruct), run.scalars});
      break;
    case KernelParamGroup::WorkgroupMemory:
      if (launch)
        for (int64_t bytes : launch.asArrayRef().drop_front(2))
          params.push_back({kParamWorkgroup, 0, cg.i64Constant(b, loc, bytes),
                            cg.nullPointer(b, loc)});
      break;
    case KernelParamGroup::AncestorQueries:
    case KernelParamGroup::PerInstanceOutputs:
      llvm_unreachable("not a group of tensor kernels");
    }
  }
  run.ran = launchKernel(b, loc, node, grid, block, params);
  return run;
}


bool KernelSiteRunner::hasKernelSites() {
  if (!kernelSitesScanned) {
    kernelSitesScanned = true;
    for (Operation &op : module.getOps())
      anyKernelSites |= op.hasAttr(HPVMDialect::getKernelAttrName());
  }
  return anyKernelSites;
}

/// A kernel hands a memref output back as the index of the input it is
/// (convert-hpvm-to-gpu accepts no other memref outputs): the memref that
/// input carried.
Value KernelSiteRunner::decodeMemRefOutput(OpBuilder &b, Location loc,
                                      NodeOpInterface node, ValueRange inputs,
                                      Value code, Type type) {
  Value descriptor;
  for (auto [index, inputType] : llvm::enumerate(node.getInputTypes())) {
    if (inputType != type)
      continue;
    Value input = cg.toStorage(b, loc, inputs[index]);
    if (!descriptor) {
      descriptor = input;
      continue;
    }
    Value isInput = LLVM::ICmpOp::create(
        b, loc, LLVM::ICmpPredicate::eq, code,
        cg.i64Constant(b, loc, static_cast<int64_t>(index)));
    descriptor = LLVM::SelectOp::create(b, loc, isInput, input, descriptor);
  }
  assert(descriptor && "a memref output passed on from no input");
  return cg.fromStorage(b, loc, descriptor, type);
}

/// A kernel hands a pointer output back as the index of the input it is (-1:
/// null; convert-hpvm-to-gpu's PointerOutputs.h), stored where the pointer
/// would be: the host pointer that input carried, or null.
Value KernelSiteRunner::decodePointerOutput(OpBuilder &b, Location loc,
                                       NodeOpInterface node, ValueRange inputs,
                                       Value stored) {
  Value code = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), stored);
  Value pointer = cg.nullPointer(b, loc);
  for (auto [index, type] : llvm::enumerate(node.getInputTypes())) {
    if (!isa<LLVM::LLVMPointerType>(type))
      continue;
    Value isInput = LLVM::ICmpOp::create(
        b, loc, LLVM::ICmpPredicate::eq, code,
        cg.i64Constant(b, loc, static_cast<int64_t>(index)));
    pointer = LLVM::SelectOp::create(b, loc, isInput, inputs[index], pointer);
  }
  return pointer;
}

SmallVector<Value> KernelSiteRunner::unlessKernelRan(
    OpBuilder &b, Location loc, Value ran, TypeRange resultTypes,
    function_ref<SmallVector<Value>()> onCPU,
    function_ref<SmallVector<Value>()> fromKernel) {
  Value notRan = LLVM::XOrOp::create(
      b, loc, ran, LLVM::ConstantOp::create(b, loc, b.getI1Type(), 1));
  auto fallback = scf::IfOp::create(b, loc, resultTypes, notRan,
                                    /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  // Without results the builder made the yields already.
  auto fill = [&](Region &region, function_ref<SmallVector<Value>()> body) {
    Block &block = region.front();
    if (!block.empty() &&
        block.back().hasTrait<::mlir::OpTrait::IsTerminator>())
      block.back().erase();
    b.setInsertionPointToEnd(&block);
    scf::YieldOp::create(b, loc, body());
  };
  fill(fallback.getThenRegion(), onCPU);
  fill(fallback.getElseRegion(), fromKernel);
  return fallback.getResults();
}