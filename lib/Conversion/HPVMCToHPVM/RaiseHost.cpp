//===- RaiseHost.cpp - HPVM-C host code as hpvm host ops -------------------===//
// __hpvm__launch / wait / push / pop and llvm_hpvm_track_mem / untrack /
// request in host functions become hpvm host ops; the launch's argument
// struct is checked against the root's inputs (with the debug information
// of its C type when there is some).
#include "HPVMCRaiser.h"

#include "HPVM/Conversion/RuntimeABI.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace mlir::hpvm::hpvmc {

//===----------------------------------------------------------------------===//
// Host code
//===----------------------------------------------------------------------===//

/// Loads the root's inputs from the packed argument struct.
SmallVector<Value> Raiser::loadInputs(OpBuilder &b, Location loc, Node &root,
                                      Value args) {
  SmallVector<Value> values;
  uint64_t offset = 0;
  for (Type type : root.inputs) {
    Value address = LLVM::GEPOp::create(b, loc, pointerType, b.getI8Type(), args,
                                        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
    values.push_back(LLVM::LoadOp::create(b, loc, type, address, /*alignment=*/1));
    offset += byteSize(layout, type);
  }
  return values;
}

/// The scalar fields of a C struct (nested structs flattened): byte offset
/// and size. False when the layout has fields the check cannot follow.
static bool flattenFields(LLVM::DITypeAttr type, uint64_t base,
                          SmallVectorImpl<std::pair<uint64_t, uint64_t>> &fields) {
  type = stripTypedefs(type);
  auto composite = dyn_cast_or_null<LLVM::DICompositeTypeAttr>(type);
  if (!composite)
    return false;
  if (composite.getTag() != llvm::dwarf::DW_TAG_structure_type &&
      composite.getTag() != llvm::dwarf::DW_TAG_class_type)
    return false;
  for (LLVM::DINodeAttr element : composite.getElements()) {
    auto member = dyn_cast<LLVM::DIDerivedTypeAttr>(element);
    if (member && member.getTag() == llvm::dwarf::DW_TAG_inheritance)
      return false; // C++ bases: not followed
    if (!member || member.getTag() != llvm::dwarf::DW_TAG_member)
      continue;
    // Bit fields, C++ static members (DWARF 4 members at offset 0): not followed.
    uint64_t offset = base + member.getOffsetInBits() / 8;
    if (member.getOffsetInBits() % 8 || member.getSizeInBits() % 8 ||
        member.getExtraData() ||
        (!fields.empty() && offset < fields.back().first + fields.back().second))
      return false;
    LLVM::DITypeAttr memberType = stripTypedefs(member.getBaseType());
    if (auto nested = dyn_cast_or_null<LLVM::DICompositeTypeAttr>(memberType);
        nested && nested.getTag() != llvm::dwarf::DW_TAG_enumeration_type) {
      if (!flattenFields(memberType, offset, fields))
        return false;
      continue;
    }
    if (!scalarType(type.getContext(), memberType))
      return false;
    fields.push_back({offset, member.getSizeInBits() / 8});
  }
  return true;
}

/// The argument struct of a launch or push must be laid out the way the
/// inputs are read (packed, as in the release): a struct without
/// __attribute__((__packed__)) with padding silently passed wrong values.
LogicalResult Raiser::checkArgumentStruct(LLVM::CallOp call, Node &root, Value args,
                                          bool withOutputs) {
  SmallVector<std::pair<uint64_t, uint64_t>> fields; // offset, size
  std::string structName;
  if (LLVM::DITypeAttr type = pointees.lookup(args)) {
    if (!flattenFields(type, 0, fields))
      return success();
    if (auto composite = dyn_cast<LLVM::DICompositeTypeAttr>(stripTypedefs(type)))
      if (composite.getName())
        structName = composite.getName().str();
    if (structName.empty())
      if (auto typedefType = dyn_cast<LLVM::DIDerivedTypeAttr>(type))
        if (typedefType.getName())
          structName = typedefType.getName().str();
  } else if (auto alloca = args.getDefiningOp<LLVM::AllocaOp>()) {
    auto structType = dyn_cast<LLVM::LLVMStructType>(alloca.getElemType());
    if (!structType)
      return success();
    for (auto [index, element] : llvm::enumerate(structType.getBody())) {
      if (!isa<IntegerType, FloatType, LLVM::LLVMPointerType>(element))
        return success();
      fields.push_back({0, byteSize(layout, element)});
    }
    // Offsets: packed, or each field at its ABI alignment.
    uint64_t offset = 0;
    for (auto [field, element] : llvm::zip(fields, structType.getBody())) {
      uint64_t align = structType.isPacked() ? 1 : layout.getTypeABIAlignment(element);
      offset = llvm::alignTo(offset, align);
      field.first = offset;
      offset += field.second;
    }
    if (structType.isIdentified())
      structName = StringRef(structType.getName()).drop_front(
          StringRef(structType.getName()).starts_with("struct.") ? 7 : 0).str();
  } else {
    return success();
  }
  SmallVector<std::pair<Type, uint64_t>> expected; // type, packed offset
  uint64_t offset = 0;
  for (Type type : root.inputs) {
    expected.push_back({type, offset});
    offset += byteSize(layout, type);
  }
  if (withOutputs)
    for (auto [type, outputOffset] : llvm::zip(root.outputs, root.outputOffsets))
      expected.push_back({type, offset + outputOffset});
  if (fields.size() < root.inputs.size())
    return success(); // another shape (a byte buffer, ...): not checked
  std::string what = structName.empty() ? "the argument struct" : "the argument struct '" + structName + "'";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(expected, fields))) {
    auto [want, field] = pair;
    bool isInput = index < root.inputs.size();
    unsigned port = isInput ? index : index - root.inputs.size();
    uint64_t size = byteSize(layout, want.first);
    if (field.first == want.second && field.second == size)
      continue;
    InFlightDiagnostic diag =
        call.emitError() << spelling(call) << ": " << what << " has field " << index << " at byte "
                         << field.first << " (" << field.second << " bytes), but "
                         << (isInput ? "input " : "output ") << port << " of '"
                         << getNodeDisplayName(root.function.getName()) << "' (" << want.first
                         << ", " << size << " bytes) is read at byte " << want.second;
    if (field.first != want.second && field.second == size)
      diag << "; HPVM-C reads the inputs packed: declare the struct "
              "__attribute__((__packed__))";
    else
      diag << "; the struct's fields must have the types of the root's parameters"
           << (withOutputs ? ", then its return struct" : "");
    return diag;
  }
  return success();
}

void Raiser::splitSelectedLaunches() {
  SmallVector<LLVM::CallOp> worklist;
  auto rootIsSelect = [&](LLVM::CallOp call) {
    if (classify(call).api != Api::Launch || call.getArgOperands().size() < 2)
      return false;
    auto select = call.getArgOperands()[1].getDefiningOp<LLVM::SelectOp>();
    return select && select.getCondition().getType().isInteger(1);
  };
  module.walk([&](LLVM::CallOp call) {
    if (rootIsSelect(call))
      worklist.push_back(call);
  });
  while (!worklist.empty()) {
    LLVM::CallOp call = worklist.pop_back_val();
    auto select = call.getArgOperands()[1].getDefiningOp<LLVM::SelectOp>();
    Value condition = select.getCondition();
    Location loc = call.getLoc();
    Block *head = call->getBlock();
    Block *join = head->splitBlock(std::next(call->getIterator()));
    call.getResult().replaceAllUsesWith(join->addArgument(pointerType, loc));
    unsigned firstArg = call.getArgOperands().getBeginOperandIndex();
    SmallVector<Block *, 2> sides;
    for (bool taken : {true, false}) {
      Block *side = new Block();
      side->insertBefore(join);
      OpBuilder b = OpBuilder::atBlockEnd(side);
      auto launch = cast<LLVM::CallOp>(b.clone(*call));
      // The root, and the argument struct when it is chosen by the same condition.
      for (unsigned i = 1; i < call.getArgOperands().size(); ++i)
        if (auto chosen = call.getArgOperands()[i].getDefiningOp<LLVM::SelectOp>();
            chosen && chosen.getCondition() == condition)
          launch->setOperand(firstArg + i,
                             taken ? chosen.getTrueValue() : chosen.getFalseValue());
      LLVM::BrOp::create(b, loc, ValueRange{launch.getResult()}, join);
      if (rootIsSelect(launch))
        worklist.push_back(launch);
      sides.push_back(side);
    }
    SmallVector<Operation *> selects;
    for (Value operand : call.getArgOperands())
      if (auto chosen = operand.getDefiningOp<LLVM::SelectOp>())
        selects.push_back(chosen);
    call.erase();
    OpBuilder b = OpBuilder::atBlockEnd(head);
    LLVM::CondBrOp::create(b, loc, condition, sides[0], ValueRange(), sides[1], ValueRange());
    for (Operation *chosen : selects)
      if (chosen->use_empty())
        chosen->erase();
  }
}

/// The block arguments that receive the value `use` passes, when its owner
/// `branch` is a branch; none otherwise.
static SmallVector<BlockArgument> receivers(Operation *branch, OpOperand &use) {
  SmallVector<BlockArgument> arguments;
  auto interface = dyn_cast<BranchOpInterface>(branch);
  if (!interface)
    return arguments;
  for (unsigned successor = 0; successor < branch->getNumSuccessors(); ++successor) {
    SuccessorOperands operands = interface.getSuccessorOperands(successor);
    OperandRange forwarded = operands.getForwardedOperands();
    unsigned begin = forwarded.getBeginOperandIndex();
    unsigned index = use.getOperandNumber();
    if (index >= begin && index < begin + forwarded.size())
      arguments.push_back(branch->getSuccessor(successor)->getArgument(
          operands.getProducedOperandCount() + index - begin));
  }
  return arguments;
}

/// LLVM's branches take LLVM types only: those that pass graph handles
/// become cf branches.
static void branchWithGraphs(Operation *branch) {
  OpBuilder b(branch);
  if (auto br = dyn_cast<LLVM::BrOp>(branch))
    cf::BranchOp::create(b, br.getLoc(), br.getDest(), br.getDestOperands());
  else if (auto condBr = dyn_cast<LLVM::CondBrOp>(branch))
    cf::CondBranchOp::create(b, condBr.getLoc(), condBr.getCondition(), condBr.getTrueDest(),
                             condBr.getTrueDestOperands(), condBr.getFalseDest(),
                             condBr.getFalseDestOperands());
  else
    return;
  branch->erase();
}

/// One host function's HPVM-C calls as host ops: each launch first (the
/// other calls refer to them), the handles' ways through branches, then the
/// waits, pushes, pops and memory calls, one handler each.
class HostRaiser {
public:
  HostRaiser(Raiser &raiser, LLVM::LLVMFuncOp function)
      : raiser(raiser), function(function), context(raiser.context) {}

  LogicalResult run() {
    function.walk([&](LLVM::CallOp call) {
      if (classify(call).api != Api::None)
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls)
      if (classify(call).api == Api::Launch && failed(raiseLaunch(call)))
        return failure();
    if (failed(followHandles()) || failed(passArgumentsBeside()) ||
        failed(retypeBranches()))
      return failure();
    for (LLVM::CallOp call : calls) {
      ApiCall api = classify(call);
      if (api.api == Api::Launch)
        continue;
      if (failed(raiseCall(call, api)))
        return failure();
      call.erase();
    }
    for (auto &[handle, launched] : graphs)
      handle.getDefiningOp()->erase();
    return success();
  }

private:
  struct Launched {
    LaunchOp launch; // the first of several for a handle through branches
    Node *root;
    Value args;
    Value handle; // what waits, pushes and pops take
  };

  LogicalResult raiseLaunch(LLVM::CallOp call) {
    OperandRange operands = call.getArgOperands();
    std::optional<int64_t> streaming = constantInt(operands[0]);
    if (!streaming)
      return call.emitError("__hpvm__launch expects a constant streaming flag (0 or 1)");
    if (operands.size() != 3)
      return call.emitError() << "__hpvm__launch(isStream, root, args) expects 3 "
                                 "arguments, found "
                              << operands.size();
    FailureOr<Node *> root = raiser.nodeOfFunctionOperand(call, 1);
    if (failed(root) ||
        failed(raiser.raiseNode((*root)->function.getSymNameAttr(), call.getLoc())))
      return failure();
    if (!*streaming &&
        failed(raiser.checkArgumentStruct(call, **root, operands[2], /*withOutputs=*/true)))
      return failure();
    launchHandles.push_back(call.getResult());
    if ((*root)->hasTensorPorts()) {
      // Tensor graphs run on memrefs over the struct's data pointers.
      if (*streaming)
        return call.emitError() << "__hpvm__launch(1, ...): '"
                                << getNodeDisplayName((*root)->function.getName())
                                << "' has tensor inputs or outputs, and streaming tensor "
                                   "graphs are not supported; launch it with 0";
      if (failed(raiser.launchTensorGraph(call, **root)))
        return failure();
      graphs[call.getResult()] = {LaunchOp(), *root, operands[2], Value()};
      return success();
    }
    OpBuilder b(call);
    Location loc = plain(call.getLoc());
    SmallVector<Value> args;
    if (!*streaming)
      args = raiser.loadInputs(b, loc, **root, operands[2]);
    auto launch = LaunchOp::create(b, loc, mlir::hpvm::GraphType::get(context),
                                   FlatSymbolRefAttr::get((*root)->function.getSymNameAttr()),
                                   args, *streaming ? b.getUnitAttr() : UnitAttr(),
                                   *streaming ? b.getUnitAttr() : UnitAttr());
    graphs[call.getResult()] = {launch, *root, operands[2], launch.getGraph()};
    return success();
  }

  /// Where the handles go: to waits, pushes and pops, or through branches to
  /// block arguments (a launch of one of several roots chosen at run time).
  LogicalResult followHandles() {
    SmallVector<Value> handles(llvm::reverse(launchHandles)); // the first error met first
    while (!handles.empty()) {
      Value handle = handles.pop_back_val();
      for (OpOperand &use : handle.getUses()) {
        Operation *user = use.getOwner();
        auto call = dyn_cast<LLVM::CallOp>(user);
        Api api = call ? classify(call).api : Api::None;
        if (api == Api::Wait || api == Api::Push || api == Api::Pop)
          continue;
        SmallVector<BlockArgument> arguments = receivers(user, use);
        if (arguments.empty() || !isa<LLVM::BrOp, LLVM::CondBrOp>(user))
          return user->emitError()
                 << "the graph handle of __hpvm__launch may only be passed to "
                    "__hpvm__wait, __hpvm__push and __hpvm__pop in the same function "
                    "(directly or through branches)";
        for (BlockArgument argument : arguments)
          if (passedOn.insert(argument))
            handles.push_back(argument);
      }
    }
    return success();
  }

  /// The argument struct of the launch a handle comes from travels beside it
  /// (a block argument of its own), so that the wait stores the root's
  /// outputs where that launch's caller reads them. Each of those block
  /// arguments must receive handles only (not a null pointer, say).
  LogicalResult passArgumentsBeside() {
    for (BlockArgument argument : passedOn)
      argsBeside[argument] =
          argument.getOwner()->addArgument(raiser.pointerType, argument.getLoc());
    for (BlockArgument argument : passedOn)
      for (auto it = argument.getOwner()->pred_begin(), end = argument.getOwner()->pred_end();
           it != end; ++it) {
        Operation *branch = (*it)->getTerminator();
        auto interface = dyn_cast<BranchOpInterface>(branch);
        std::optional<SuccessorOperands> operands;
        if (interface)
          operands = interface.getSuccessorOperands(it.getSuccessorIndex());
        Value incoming = operands ? (*operands)[argument.getArgNumber()] : Value();
        auto launched = incoming ? graphs.find(incoming) : graphs.end();
        auto incomingArgument = dyn_cast_or_null<BlockArgument>(incoming);
        if (launched == graphs.end() &&
            !(incomingArgument && passedOn.contains(incomingArgument)))
          return branch->emitError()
                 << "the graph handle of __hpvm__launch meets another value here (a "
                    "pointer that is not a handle, or a handle from elsewhere); a handle "
                    "may only be merged with the handles of other launches in the same "
                    "function";
        operands->append(launched != graphs.end()
                             ? launched->second.args
                             : Value(argsBeside.lookup(incomingArgument)));
      }
    return success();
  }

  /// Those block arguments hold graph handles; the branches pass the launches'.
  LogicalResult retypeBranches() {
    Type graphType = mlir::hpvm::GraphType::get(context);
    llvm::SetVector<Operation *> branches;
    for (BlockArgument argument : passedOn) {
      argument.setType(graphType);
      for (Block *predecessor : argument.getOwner()->getPredecessors())
        branches.insert(predecessor->getTerminator());
    }
    for (auto &[handle, launched] : graphs)
      for (OpOperand &use : llvm::make_early_inc_range(handle.getUses()))
        if (isa<LLVM::BrOp, LLVM::CondBrOp>(use.getOwner())) {
          if (!launched.launch)
            return use.getOwner()->emitError()
                   << "the handle of a tensor graph launch ('"
                   << getNodeDisplayName(launched.root->function.getName())
                   << "') may not pass through a branch: wait where it is launched";
          use.set(launched.handle);
        }
    for (Operation *branch : branches)
      branchWithGraphs(branch);
    return success();
  }

  /// The launch a wait, push or pop refers to.
  FailureOr<Launched> graphOf(LLVM::CallOp call) {
    Value handle = call.getArgOperands()[0];
    auto it = graphs.find(handle);
    if (it != graphs.end())
      return it->second;
    auto argument = dyn_cast<BlockArgument>(handle);
    FailureOr<SmallVector<LaunchOp>> launches = failure();
    if (argument && passedOn.contains(argument))
      launches = getLaunchesOf(handle);
    if (failed(launches))
      return call.emitError() << spelling(call)
                              << " expects the handle returned by __hpvm__launch in "
                                 "the same function";
    return mergedLaunch(call, argument, *launches);
  }

  /// One of several launches reaching a handle through branches: they must
  /// leave their results alike.
  FailureOr<Launched> mergedLaunch(LLVM::CallOp call, BlockArgument handle,
                                   ArrayRef<LaunchOp> launches) {
    llvm::SmallPtrSet<Operation *, 4> reaching;
    for (LaunchOp launch : launches)
      reaching.insert(launch);
    std::optional<Launched> first;
    for (Value launchHandle : launchHandles) {
      const Launched *other = &graphs.find(launchHandle)->second;
      LaunchOp launch = other->launch;
      if (!launch || !reaching.contains(launch))
        continue;
      if (launch.getStreaming()) {
        InFlightDiagnostic diag = call.emitError()
                                  << spelling(call)
                                  << ": the handle of a streaming launch may not pass "
                                     "through a branch (push, pop and wait where it is "
                                     "launched)";
        diag.attachNote(launch.getLoc()) << "launched here";
        return diag;
      }
      if (!first) {
        first = *other;
        first->handle = handle;
        first->args = argsBeside.lookup(handle);
        continue;
      }
      Node &a = *first->root, &b = *other->root;
      if (a.inputs != b.inputs || a.outputs != b.outputs || a.outputOffsets != b.outputOffsets) {
        InFlightDiagnostic diag = call.emitError()
                                  << spelling(call) << ": the handle may come from launches of '"
                                  << getNodeDisplayName(a.function.getName()) << "' and '"
                                  << getNodeDisplayName(b.function.getName())
                                  << "', whose parameters or return structs differ";
        diag.attachNote(launch.getLoc())
            << "launch of '" << getNodeDisplayName(b.function.getName()) << "'";
        return diag;
      }
    }
    assert(first && "every launch of this function is in `graphs`");
    return *first;
  }

  LogicalResult raiseCall(LLVM::CallOp call, const ApiCall &api) {
    OpBuilder b(call);
    Location loc = plain(call.getLoc());
    OperandRange operands = call.getArgOperands();
    auto bytes = [&](Value value) {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), value).getResult();
    };
    switch (api.api) {
    case Api::Init:
    case Api::Cleanup:
      return success(); // The runtime starts on first use and cleans up at exit.
    case Api::Track:
      TrackOp::create(b, loc, operands[0], bytes(operands[1]));
      return success();
    case Api::Untrack:
      UntrackOp::create(b, loc, operands[0], Value());
      return success();
    case Api::Request:
      RequestOp::create(b, loc, operands[0], bytes(operands[1]));
      return success();
    case Api::Wait:
      return wait(call, b, loc);
    case Api::Push:
      return push(call, b, loc);
    case Api::Pop:
      return pop(call, b, loc);
    default:
      return misplaced(call, api);
    }
  }

  LogicalResult wait(LLVM::CallOp call, OpBuilder &b, Location loc) {
    FailureOr<Launched> graph = graphOf(call);
    if (failed(graph))
      return failure();
    if (!graph->launch)
      return success(); // A tensor graph: done when its launch returns.
    bool streaming = graph->launch.getStreaming();
    auto wait = WaitOp::create(b, loc, streaming ? TypeRange() : TypeRange(graph->root->outputs),
                               graph->handle);
    // The root's outputs go to the field after the inputs.
    uint64_t base = 0;
    for (Type type : graph->root->inputs)
      base += byteSize(raiser.layout, type);
    storeOutputs(b, loc, *graph->root, wait.getResults(), graph->args, base);
    return success();
  }

  /// The streaming launch a push or pop refers to.
  FailureOr<Launched> streamOf(LLVM::CallOp call) {
    FailureOr<Launched> graph = graphOf(call);
    if (failed(graph))
      return failure();
    if (!graph->launch || !graph->launch.getStreaming())
      return call.emitError() << spelling(call)
                              << " needs a graph launched with streaming "
                                 "(__hpvm__launch(1, ...))";
    return graph;
  }

  /// Stores a root's outputs `results` at `base` + their offsets in the C
  /// return struct at `address`.
  void storeOutputs(OpBuilder &b, Location loc, Node &root, ValueRange results,
                    Value address, uint64_t base) {
    for (auto [index, result] : llvm::enumerate(results)) {
      Value field = LLVM::GEPOp::create(
          b, loc, raiser.pointerType, b.getI8Type(), address,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(base + root.outputOffsets[index])});
      LLVM::StoreOp::create(b, loc, result, field, /*alignment=*/1);
    }
  }

  LogicalResult push(LLVM::CallOp call, OpBuilder &b, Location loc) {
    FailureOr<Launched> graph = streamOf(call);
    if (failed(graph))
      return failure();
    Value args = call.getArgOperands()[1];
    if (failed(raiser.checkArgumentStruct(call, *graph->root, args, /*withOutputs=*/false)))
      return failure();
    PushOp::create(b, loc, graph->handle, raiser.loadInputs(b, loc, *graph->root, args));
    return success();
  }

  LogicalResult pop(LLVM::CallOp call, OpBuilder &b, Location loc) {
    FailureOr<Launched> graph = streamOf(call);
    if (failed(graph))
      return failure();
    auto pop = PopOp::create(b, loc, graph->root->outputs, graph->handle);
    // A fresh struct of the outputs, which the program owns (and may free).
    Node *root = graph->root;
    Value size = LLVM::ConstantOp::create(
        b, loc, b.getI64Type(), b.getI64IntegerAttr(std::max<uint64_t>(root->outputSize, 1)));
    // The C library's malloc (the program frees what it returns); the program's
    // own declaration when it has one.
    FailureOr<LLVM::LLVMFuncOp> malloc =
        abi::lookupOrCreate(b, raiser.module, abi::RuntimeFn::Malloc);
    if (failed(malloc))
      return failure();
    Value memory = LLVM::CallOp::create(b, loc, *malloc, ValueRange{size}).getResult();
    storeOutputs(b, loc, *root, pop.getResults(), memory, /*base=*/0);
    call.getResult().replaceAllUsesWith(memory);
    return success();
  }

  /// A node's call in host code: why the function is not a node (called by
  /// one, or named by no graph).
  LogicalResult misplaced(LLVM::CallOp call, const ApiCall &api) {
    bool calledByNode = false;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(function.getSymNameAttr(), raiser.module))
      for (const SymbolTable::SymbolUse &use : *uses)
        calledByNode |= use.getUser()->getParentOfType<LeafOp>() != nullptr;
    InFlightDiagnostic diag = call.emitError()
                              << spelling(call) << " is only valid inside "
                              << (isGraphCall(api.api) || api.api == Api::Hint ||
                                          api.api == Api::Attributes ||
                                          api.api == Api::Return
                                      ? "a node function"
                                      : "a leaf node function");
    if (calledByNode)
      diag << ", not in '" << getNodeDisplayName(function.getName())
           << "', a function that a node calls; HPVM-C calls must be in the "
              "node function itself (make '"
           << getNodeDisplayName(function.getName()) << "' static inline, or pass it the values)";
    else
      diag << ", not in host function '" << getNodeDisplayName(function.getName())
           << "' (no __hpvm__createNodeND or __hpvm__launch names it as a node)";
    return diag;
  }

  Raiser &raiser;
  LLVM::LLVMFuncOp function;
  MLIRContext *context;
  SmallVector<LLVM::CallOp> calls;
  DenseMap<Value, Launched> graphs;
  SmallVector<Value> launchHandles; // the keys of `graphs`, in program order
  llvm::SetVector<BlockArgument> passedOn;
  DenseMap<BlockArgument, BlockArgument> argsBeside;
};

LogicalResult Raiser::raiseHost(LLVM::LLVMFuncOp function) {
  return HostRaiser(*this, function).run();
}

} // namespace mlir::hpvm::hpvmc
