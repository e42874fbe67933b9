//===- NodeLowering.cpp - Node functions, runs dispatched to runners ------===//
// Leaves become instance functions, internal nodes run functions; each run of
// a node goes to its runner (NodeLowering.h): kernel site, single instance,
// collapsed grid, grid, or concurrent siblings.
#include "NodeLowering.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

NodeLowering::NodeLowering(ModuleOp module)
    : cg(module), module(module), context(module.getContext()),
      pointerType(cg.getPointerType()), state(cg), gridRunner(state),
      collapsedRunner(state, gridRunner), concurrentRunner(state, gridRunner),
      kernelSites(state, gridRunner) {
  for (Operation &op : module.getOps())
    if (op.getNumRegions() && !isa<NodeOpInterface>(op))
      hostCode.push_back(&op);
}

/// Children an internal node may have before the single-instance leaves it
/// calls stay functions of their own. Inlined (leaf functions are
/// alwaysinline, for the loops of grids), a chain of 1,000 leaves made one
/// function of 1,000 loops, whose register allocation in clang -O3 grew
/// quadratically (11 s at 1,000 ONNX Relus, 44 s at 2,000).
static constexpr unsigned kInlinedSiblings = 64;

/// Leaves instantiated only as single instances by internal nodes of more
/// than kInlinedSiblings children (and never launched or in a grid).
static llvm::SmallPtrSet<Operation *, 16> findCalledOutOfLine(ModuleOp module) {
  llvm::SmallPtrSet<Operation *, 16> outOfLine, inline_;
  SymbolTable symbols(module);
  for (auto internal : module.getOps<InternalOp>()) {
    if (internal.getBody().empty())
      continue;
    auto creates = internal.getBodyBlock().getOps<CreateNodeOp>();
    bool many = std::distance(creates.begin(), creates.end()) > kInlinedSiblings;
    for (CreateNodeOp create : creates) {
      auto leaf = symbols.lookup<LeafOp>(create.getNode());
      if (!leaf)
        continue;
      if (many && create.getRank() == 0)
        outOfLine.insert(leaf);
      else
        inline_.insert(leaf);
    }
  }
  module.walk([&](LaunchOp launch) {
    if (Operation *root = symbols.lookup(launch.getRoot()))
      inline_.insert(root);
  });
  for (Operation *leaf : inline_)
    outOfLine.erase(leaf);
  return outOfLine;
}

LogicalResult NodeLowering::createNodeFunctions() {
  OpBuilder b(context);
  Type index = b.getIndexType();
  llvm::SmallPtrSet<Operation *, 16> outOfLine = findCalledOutOfLine(module);
  for (auto leaf : module.getOps<LeafOp>()) {
    if (std::optional<SmallVector<unsigned>> passed = leaf.getPassedOnInputs())
      state.passedOnInputs[leaf] = std::move(*passed);
    // Outputs that return hpvm.alloc memory are freed by the parent.
    leaf.walk([&](ReturnOp ret) {
      for (auto [port, value] : llvm::enumerate(ret.getOperands()))
        if (value.getDefiningOp<AllocOp>())
          state.allocatedOutputs[leaf].push_back(port);
    });
    bool hasBarrier = false;
    leaf.walk([&](BarrierOp) { hasBarrier = true; });
    if (hasBarrier && kernelSites.isTileKernelLeaf(leaf)) {
      // The instances of a tile kernel may use barriers as GPUs allow and
      // the CPU backend does not yet (in loops, say): the tile then runs
      // only where a device runs its kernel.
      std::string reason;
      LogicalResult split = success();
      {
        ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
          if (reason.empty())
            reason = diagnostic.str();
          return success();
        });
        split = gridRunner.splitAtBarriers(leaf);
      }
      if (failed(split)) {
        leaf.emitWarning()
            << "has no CPU version, because the CPU backend cannot split it "
               "at its barriers: "
            << reason << "; its tile runs only where a device runs its kernel";
        state.noCPUVersion[leaf] = reason;
      }
    } else if (hasBarrier && failed(gridRunner.splitAtBarriers(leaf))) {
      return failure();
    }
    // (inputs..., x, y, z, extent x, extent y, extent z, parent frame)
    SmallVector<Type> inputs(leaf.getArgumentTypes());
    inputs.append(6, index);
    inputs.push_back(pointerType);
    FunctionType type = b.getFunctionType(inputs, leaf.getResultTypes());
    b.setInsertionPoint(leaf);
    auto function = func::FuncOp::create(
        b, leaf.getLoc(), cg.uniqueName(("__hpvm_leaf_" + leaf.getSymName()).str()),
        type);
    state.markInternal(function);
    function.getBody().takeBody(leaf.getBody());
    Block &entry = function.front();
    for (unsigned i = 0; i < 6; ++i)
      entry.addArgument(index, leaf.getLoc());
    entry.addArgument(pointerType, leaf.getLoc());
    function.walk([&](ReturnOp ret) {
      OpBuilder rb(ret);
      func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
      ret.erase();
    });
    // This function runs single instances, for which a barrier is a no-op;
    // grids of a leaf with barriers run its phase functions instead.
    function.walk([](BarrierOp barrier) { barrier.erase(); });
    state.lowerGridQueries(function, leaf.getNumArguments());
    state.lowerAllocs(function);
    if (outOfLine.contains(leaf))
      state.markNoInline(function);
    else
      state.markAlwaysInline(function);
    state.nodeFunctions[leaf] = function;
  }
  // Lane variants are leaves too: their node functions exist now.
  for (auto leaf : module.getOps<LeafOp>())
    if (failed(gridRunner.collectVariants(leaf)))
      return failure();
  for (auto internal : module.getOps<InternalOp>()) {
    // (inputs..., this instance's frame)
    SmallVector<Type> inputs(internal.getArgumentTypes());
    inputs.push_back(pointerType);
    b.setInsertionPoint(internal);
    auto function = func::FuncOp::create(
        b, internal.getLoc(),
        cg.uniqueName(("__hpvm_internal_" + internal.getSymName()).str()),
        b.getFunctionType(inputs, internal.getResultTypes()));
    state.markInternal(function);
    state.nodeFunctions[internal] = function;
  }
  return success();
}

LogicalResult NodeLowering::lowerInternalNodes() {
  for (auto internal : module.getOps<InternalOp>())
    if (failed(lowerInternalNode(internal)))
      return failure();
  return success();
}

LogicalResult NodeLowering::lowerInternalNode(InternalOp internal) {
  func::FuncOp function = state.nodeFunctions[internal];
  Block *entry = function.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(internal.getBodyBlock().getArguments(),
                                   entry->getArguments()))
    mapping.map(from, to);
  Value frame = entry->getArguments().back();
  // The extent arithmetic first, in program order: it dominates every child.
  for (Operation &op : internal.getBodyBlock())
    if (!isa<CreateNodeOp, EdgeOp, BindInOp, BindOutOp>(op))
      b.clone(op, mapping);

  DataflowGraph graph(internal, &state.symbolTables);
  FailureOr<SmallVector<unsigned>> order = graph.getTopologicalOrder();
  if (failed(order))
    return internal.emitOpError("has a cyclic child graph");
  DenseMap<std::pair<unsigned, unsigned>, Value> produced;
  auto edgeValue = [&](EdgeOp edge) {
    return produced.lookup(
        {*graph.getChildIndex(edge.getSource()), edge.getSourcePort()});
  };
  // one_to_one edges out of replicated children carry one value per instance
  // (unless the value is the same in every instance, passed on).
  SmallVector<PerInstancePorts> perInstance(graph.getNumChildren());
  for (auto [index, child] : llvm::enumerate(graph.getChildren()))
    perInstance[index] = state.perInstancePorts.lookup(child);
  // Children level by level: a level's children depend only on earlier
  // levels, so they can run concurrently.
  SmallVector<unsigned> levels = graph.getLevels();
  unsigned deepest = 0;
  for (unsigned level : levels)
    deepest = std::max(deepest, level);
  for (unsigned level = 0; level <= deepest && graph.getNumChildren(); ++level) {
    SmallVector<unsigned> members;
    for (unsigned child : *order)
      if (levels[child] == level)
        members.push_back(child);
    SmallVector<NodeOpInterface> nodes;
    SmallVector<SmallVector<Value>> dims, inputs, outputs;
    for (unsigned child : members) {
      CreateNodeOp create = graph.getChild(child);
      NodeOpInterface definition = graph.getDefinition(child);
      SmallVector<Value> childInputs;
      for (unsigned port = 0, e = definition.getInputTypes().size(); port < e;
           ++port) {
        Operation *feeder = graph.getFeeders(child, port).front();
        if (auto bind = dyn_cast<BindInOp>(feeder))
          childInputs.push_back(mapping.lookup(bind.getInput()));
        else
          childInputs.push_back(edgeValue(cast<EdgeOp>(feeder)));
      }
      SmallVector<Value> childDims;
      for (Value dim : create.getDims())
        childDims.push_back(mapping.lookup(dim));
      nodes.push_back(definition);
      dims.push_back(std::move(childDims));
      inputs.push_back(std::move(childInputs));
    }
    bool perInstanceValues = llvm::any_of(
        members, [&](unsigned child) { return perInstance[child].any(); });
    if (members.size() == 1 || perInstanceValues) {
      // Children exchanging per-instance arrays run one after the other.
      for (auto [i, child] : llvm::enumerate(members))
        outputs.push_back(runNode(b, graph.getChild(child).getLoc(), nodes[i],
                                  dims[i], inputs[i], frame, perInstance[child]));
    } else {
      auto runChild = [&](OpBuilder &tb, Location tloc, NodeOpInterface node,
                          ValueRange tdims, ValueRange tinputs,
                          Value tframe) {
        return runNode(tb, tloc, node, tdims, tinputs, tframe);
      };
      SmallVector<LLVM::LLVMFuncOp> gridBodies = llvm::map_to_vector(
          llvm::zip(nodes, dims), [&](auto pair) {
            return getSiblingGridBody(std::get<0>(pair), std::get<1>(pair).size());
          });
      concurrentRunner.runConcurrently(b, graph.getChild(members[0]).getLoc(), nodes, gridBodies,
                      dims, inputs, frame, outputs, runChild);
    }
    for (auto [member, child] : llvm::enumerate(members))
      for (auto [port, value] : llvm::enumerate(outputs[member]))
        produced[{child, static_cast<unsigned>(port)}] = value;
  }
  SmallVector<Value> results;
  for (unsigned output = 0, e = internal.getNumResults(); output < e; ++output) {
    BindOutOp bind = graph.getOutputBinds(output).front();
    results.push_back(produced.lookup(
        {*graph.getChildIndex(bind.getSource()), bind.getSourcePort()}));
  }
  // Memory allocated by a child, and per-instance value arrays, live as long
  // as this instance of the graph.
  for (unsigned child = 0, e = graph.getNumChildren(); child < e; ++child) {
    for (unsigned port : state.allocatedOutputs.lookup(graph.getDefinition(child))) {
      Value memory = produced.lookup({child, port});
      if (isa<LLVM::LLVMPointerType>(memory.getType()))
        cg.callRuntime(b, internal.getLoc(), RuntimeFn::Free, {memory});
      else
        memref::DeallocOp::create(b, internal.getLoc(), memory);
    }
    for (unsigned port = 0; port < 64; ++port) {
      if (!((perInstance[child].outputs >> port) & 1))
        continue;
      Value array = produced.lookup({child, port});
      // A kernel site's arrays are tracked (runNode): their device copies
      // go, unread.
      if (kernelSites.hasKernelSite(graph.getDefinition(child), perInstance[child]))
        cg.checkStatus(b, internal.getLoc(),
                    cg.callRuntime(b, internal.getLoc(), RuntimeFn::Discard, {array}),
                    "freeing values per instance");
      cg.callRuntime(b, internal.getLoc(), RuntimeFn::Free, {array});
    }
  }
  func::ReturnOp::create(b, internal.getLoc(), results);
  return success();
}



SmallVector<Value> NodeLowering::runTensorNode(OpBuilder &b, Location loc,
                                              NodeOpInterface node,
                                              ValueRange inputs,
                                              Value parentFrame) {
  KernelSiteRunner::TensorKernelRun run = kernelSites.launchTensorKernel(b, loc, node, inputs);
  TypeRange outputTypes = node.getOutputTypes();
  return kernelSites.unlessKernelRan(
      b, loc, run.ran, outputTypes,
      [&] {
        // The CPU version, with outputs of its own.
        for (Value buffer : run.buffers)
          memref::DeallocOp::create(b, loc, buffer);
        return runNodeOnCPU(b, loc, node, {}, inputs, parentFrame, {});
      },
      [&] {
        SmallVector<Value> results;
        unsigned buffer = 0, scalar = 0;
        for (Type type : outputTypes) {
          if (isa<MemRefType>(type)) {
            results.push_back(run.buffers[buffer++]);
            continue;
          }
          results.push_back(cg.fromStorage(
              b, loc,
              cg.loadField(b, loc, run.scalarStruct, run.scalars, scalar++),
              type));
        }
        return results;
      });
}


SmallVector<Value> NodeLowering::runNode(OpBuilder &b, Location loc,
                                        NodeOpInterface node, ValueRange dims,
                                        ValueRange inputs, Value parentFrame,
                                        PerInstancePorts perInstance) {
  if (kernelSites.hasKernelSite(node, perInstance)) {
    if (node->hasAttr(HPVMDialect::getTensorKernelAttrName()))
      return runTensorNode(b, loc, node, inputs, parentFrame);
    // The kernel version first; the CPU version when no device ran it. The
    // kernel's first instance writes the outputs into `outputs`.
    TypeRange outputTypes = node.getOutputTypes();
    LLVM::LLVMStructType outputType = kernelSites.getKernelOutputStruct(outputTypes);
    Value outputs = outputTypes.empty() ? Value()
                                        : cg.allocaInEntry(b, loc, outputType);
    // Outputs per instance are arrays, filled by the kernel or by the CPU
    // version, whichever runs.
    SmallVector<Value> outputArrays;
    SmallVector<Type> resultTypes(outputTypes);
    if (perInstance.outputs) {
      outputArrays = gridRunner.allocateOutputArrays(b, loc, node, dims, perInstance);
      for (auto [port, array] : llvm::enumerate(outputArrays)) {
        if (!array)
          continue;
        resultTypes[port] = pointerType;
        // Tracked, so that a kernel reading it next finds it on its device.
        Value bytes = gridRunner.instanceArrayBytes(b, loc, dims, outputTypes[port]);
        Value status = cg.callRuntime(b, loc, RuntimeFn::Track, {array, bytes});
        cg.checkStatus(b, loc, status,
                    ("tracking the values per instance of @" + nodeName(node))
                        .str());
      }
    }
    // A single instance of a leaf kernel is a 1-D grid of one: its instance
    // is 0 and its grid 1 in every dimension, as for the node itself.
    SmallVector<Value, 3> kernelDims(dims);
    if (kernelDims.empty() && isa<LeafOp>(node.getOperation()))
      kernelDims.push_back(arith::ConstantIndexOp::create(b, loc, 1));
    Value ran = kernelSites.runKernel(b, loc, node, kernelDims, inputs, parentFrame, outputs,
                          perInstance, outputArrays);
    return kernelSites.unlessKernelRan(
        b, loc, ran, resultTypes,
        [&] {
          return runNodeOnCPU(b, loc, node, dims, inputs, parentFrame,
                              perInstance, outputArrays);
        },
        [&] {
          SmallVector<Value> kernelResults;
          for (auto [index, type] : llvm::enumerate(outputTypes)) {
            if ((perInstance.outputs >> index) & 1) {
              kernelResults.push_back(outputArrays[index]);
              continue;
            }
            Value field = cg.loadField(b, loc, outputType, outputs, index);
            if (isa<MemRefType>(type))
              kernelResults.push_back(
                  kernelSites.decodeMemRefOutput(b, loc, node, inputs, field, type));
            else if (isa<LLVM::LLVMPointerType>(type))
              kernelResults.push_back(
                  kernelSites.decodePointerOutput(b, loc, node, inputs, field));
            else
              kernelResults.push_back(cg.fromStorage(b, loc, field, type));
          }
          return kernelResults;
        });
  }
  return runNodeOnCPU(b, loc, node, dims, inputs, parentFrame, perInstance);
}

void NodeLowering::findPerInstancePorts() {
  state.perInstancePorts = collectPerInstancePorts(module, state.symbolTables);
}




LLVM::LLVMFuncOp NodeLowering::getSiblingGridBody(NodeOpInterface node,
                                                 unsigned rank) {
  // What runNode would do around the parallel-for (kernel versions, and the
  // host copies every CPU run makes once any node has one; barriers' phases;
  // lock-step tiles; a contraction's plan) needs a task function; a plain
  // replicated leaf needs only its range function.
  auto leaf = dyn_cast<LeafOp>(node.getOperation());
  if (!leaf || rank == 0 || kernelSites.hasKernelSites() ||
      !gridRunner.isPlainGrid(leaf, rank))
    return nullptr;
  return gridRunner.getRangeFunction(node, rank);
}

SmallVector<Value> NodeLowering::failWithoutCPUVersion(OpBuilder &b,
                                                      Location loc,
                                                      NodeOpInterface node,
                                                      StringRef why) {
  std::string reason = why.str() + '\0';
  Value text = LLVM::createGlobalString(
      loc, b, cg.uniqueName("__hpvm_no_cpu_version"), reason,
      LLVM::Linkage::Internal);
  Value status = cg.callRuntime(b, loc, RuntimeFn::NoCPUVersion,
                                {cg.nodeNameString(b, loc, node), text});
  cg.checkStatus(b, loc, status,
              "running " + atName(node));
  return llvm::map_to_vector(node.getOutputTypes(), [&](Type type) {
    return cg.fromStorage(
        b, loc, LLVM::PoisonOp::create(b, loc, cg.getStorageType(type)), type);
  });
}





SmallVector<Value> NodeLowering::runNodeOnCPU(OpBuilder &b, Location loc,
                                             NodeOpInterface node,
                                             ValueRange dims, ValueRange inputs,
                                             Value parentFrame,
                                             PerInstancePorts perInstance,
                                             ArrayRef<Value> givenArrays) {
  func::FuncOp function = state.nodeFunctions.lookup(node.getOperation());
  TypeRange outputTypes = node.getOutputTypes();
  if (auto missing = state.noCPUVersion.find(node.getOperation());
      missing != state.noCPUVersion.end()) {
    // No device ran the tile: an error, since nothing else can run it.
    return failWithoutCPUVersion(b, loc, node, missing->second);
  }
  if (auto leaf = dyn_cast<LeafOp>(node.getOperation())) {
    state.traceNode(b, loc, node);
    if (!dims.empty())
      state.checkGridFitsInputs(b, loc, leaf, dims, inputs, perInstance.inputs);
    if (kernelSites.hasKernelSites())
      kernelSites.requestHostCopies(b, loc, node, inputs, dims, perInstance);
  }
  if (dims.empty()) {
    // A single instance: call the node directly, no runtime round trip.
    SmallVector<Value> args(inputs);
    if (isa<LeafOp>(node.getOperation())) {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      args.append({zero, zero, zero, one, one, one, parentFrame});
    } else {
      args.push_back(cg.allocateSingleInstanceFrame(b, loc, parentFrame));
    }
    auto call = func::CallOp::create(b, loc, function, args);
    if (isa<LeafOp>(node.getOperation()))
      state.traceNodeDone(b, loc, node);
    return call.getResults();
  }

  if (LeafOp leaf = collapsedRunner.getCollapsibleLeaf(node, perInstance)) {
    state.traceNode(b, loc, leaf);
    if (kernelSites.hasKernelSites())
      kernelSites.requestHostCopies(b, loc, node, inputs);
    SmallVector<Value> results = collapsedRunner.runCollapsed(
        b, loc, cast<InternalOp>(node.getOperation()), leaf, dims, inputs,
        parentFrame);
    state.traceNodeDone(b, loc, leaf);
    return results;
  }

  return gridRunner.runGrid(b, loc, node, dims, inputs, parentFrame, perInstance,
                            givenArrays);
}



LLVM::LLVMFuncOp NodeLowering::getEntryFunction(NodeOpInterface root) {
  if (LLVM::LLVMFuncOp existing = entryFunctions.lookup({root.getOperation()}))
    return existing;
  Location loc = root.getLoc();
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  // hpvm_rt_root_fn_t: status (*)(void *args)
  auto type = abi::getFunctionType(context, RuntimeCallback::RootFn);
  auto entryFunction = LLVM::LLVMFuncOp::create(
      b, loc, cg.uniqueName(("__hpvm_entry_" + nodeName(root)).str()), type,
      LLVM::Linkage::Internal);
  entryFunctions.add({root.getOperation()}, entryFunction);
  Block *entry = entryFunction.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value block = entry->getArgument(0);
  LLVM::LLVMStructType blockType = cg.getLaunchBlockType(root);
  ArrayRef<Type> inputTypes = root.getInputTypes();
  SmallVector<Value> inputs;
  for (auto [index, type] : llvm::enumerate(inputTypes))
    inputs.push_back(cg.fromStorage(
        b, loc, cg.loadField(b, loc, blockType, block, index + 1), type));
  // The root is a single instance without ancestors.
  SmallVector<Value> outputs =
      runNode(b, loc, root, {}, inputs, cg.nullPointer(b, loc));
  for (auto [index, output] : llvm::enumerate(outputs))
    cg.storeField(b, loc, blockType, block, 1 + inputTypes.size() + index,
               cg.toStorage(b, loc, output));
  LLVM::ReturnOp::create(b, loc, cg.nullPointer(b, loc));
  return entryFunction;
}


/// Whether inlining `function` (a leaf function) into a loop over instances
/// keeps what it means and what the later passes can lower: only functions
/// LLVM would inline anyway (alwaysinline, as createNodeFunctions marks them;
/// a remainder variant is noinline), without argument attributes inlining
/// would lose, with one block (an scf.for body is one block), without stack
/// allocations (in the loop, an alloca would grow the stack with every
/// instance), and in dialects that every later pass lowers inside any
/// function (linalg, say, is lowered in func.func only).
static bool isInlinableLeafFunction(func::FuncOp function) {
  auto passthrough = function->getAttrOfType<ArrayAttr>("passthrough");
  if (function.isExternal() || !function.getBody().hasOneBlock() ||
      function.getArgAttrs() || function.getResAttrs() || !passthrough ||
      passthrough.size() != 1 ||
      passthrough[0] != StringAttr::get(function.getContext(), "alwaysinline"))
    return false;
  return !function
              .walk([](Operation *op) {
                bool allocates =
                    isa<memref::AllocaOp, memref::AllocaScopeOp, LLVM::AllocaOp>(op);
                bool loweredEverywhere =
                    isa<arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                        scf::SCFDialect, LLVM::LLVMDialect, vector::VectorDialect,
                        index::IndexDialect, func::FuncDialect>(op->getDialect());
                return allocates || !loweredEverywhere ? WalkResult::interrupt()
                                                       : WalkResult::advance();
              })
              .wasInterrupted();
}

void NodeLowering::inlineSingleCallLeaves() {
  // The calls of every function. Leaf functions are private, and the
  // lowering refers to them only by calls.
  DenseMap<StringAttr, unsigned> uses;
  DenseMap<StringAttr, func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    StringAttr callee = call.getCalleeAttr().getAttr();
    ++uses[callee];
    calls[callee] = call;
  });
  for (auto &[node, function] : state.nodeFunctions) {
    if (!isa<LeafOp>(node) || !function)
      continue;
    StringAttr name = function.getSymNameAttr();
    func::CallOp call = calls.lookup(name);
    if (!call || uses.lookup(name) != 1 || !isInlinableLeafFunction(function))
      continue;
    // The body in place of the call; the returned values replace its results.
    Block &body = function.front();
    IRMapping mapping;
    mapping.map(body.getArguments(), call.getOperands());
    OpBuilder b(call);
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    for (auto [result, returned] :
         llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
    call.erase();
    function.erase();
    function = {};
  }
}