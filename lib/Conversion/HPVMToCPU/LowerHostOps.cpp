//===- LowerHostOps.cpp - launch, wait and the tracker ops to runtime calls ===//
// A launch allocates a block { launch, inputs, outputs } that the entry function
// reads; wait joins the launch, reads the outputs and frees the block.
#include "CPULowering.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;


namespace {
/// The start address and byte span of a buffer operand of a tracker op.
struct BufferExtent {
  Value pointer;
  Value bytes; // i64
};
} // namespace

static FailureOr<BufferExtent> getBufferExtent(CPULowering &lowering,
                                               OpBuilder &b, Location loc,
                                               Operation *op, Value memory,
                                               Value size) {
  if (isa<LLVM::LLVMPointerType>(memory.getType())) {
    // untrack names a pointer without a size: the object is found by address.
    Value bytes = size ? lowering.toI64(b, loc, size)
                       : lowering.i64Constant(b, loc, 1);
    return BufferExtent{memory, bytes};
  }
  auto type = cast<MemRefType>(memory.getType());
  Type element = type.getElementType();
  int64_t elementBytes = element.isIndex() ? 8
                         : element.isIntOrFloat()
                             ? llvm::divideCeil(element.getIntOrFloatBitWidth(), 8)
                             : 0;
  if (elementBytes == 0)
    return op->emitOpError() << "cannot track a memref of " << element
                             << " on the CPU backend; expected integer, "
                                "float or index elements";
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
static void ifNotEmpty(CPULowering &lowering, OpBuilder &b, Location loc,
                       BufferExtent extent, EmitCall emitCall) {
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, extent.bytes,
                            lowering.i64Constant(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, positive, /*withElseRegion=*/false);
  OpBuilder then = ifOp.getThenBodyBuilder();
  emitCall(then);
}

FailureOr<CPULowering::WaitedRoot> CPULowering::getWaitedRoot(WaitOp wait) {
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
    auto root = symbolTables.lookupNearestSymbolFrom<NodeOpInterface>(
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
    if (getLaunchBlockType(root) != getLaunchBlockType(first)) {
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
  return WaitedRoot{first, "@" + llvm::join(names, " or @")};
}

LogicalResult CPULowering::lowerHostOps() {
  // Separate lists: each loop erases what it lowers.
  SmallVector<LaunchOp> launches;
  SmallVector<WaitOp> waits;
  SmallVector<Operation *> trackerOps;
  walkHostCode([&](Operation *op) {
    if (auto launch = dyn_cast<LaunchOp>(op))
      launches.push_back(launch);
    else if (auto wait = dyn_cast<WaitOp>(op))
      waits.push_back(wait);
    else if (isa<TrackOp, UntrackOp, RequestOp>(op))
      trackerOps.push_back(op);
  });

  // Launches first: waits read the block their launch allocated.
  DenseMap<Value, std::pair<Value, NodeOpInterface>> launched;
  for (LaunchOp launch : launches) {
    auto root = symbolTables.lookupNearestSymbolFrom<NodeOpInterface>(
        launch, launch.getRootAttr());
    Location loc = launch.getLoc();
    OpBuilder b(launch);
    LLVM::LLVMStructType blockType = getLaunchBlockType(root);
    Value block = callRuntime(b, loc, RuntimeFn::Malloc, {sizeOf(b, loc, blockType)});
    for (auto [index, arg] : llvm::enumerate(launch.getArgs()))
      storeField(b, loc, blockType, block, index + 1, toStorage(b, loc, arg));
    Value entry = LLVM::AddressOfOp::create(b, loc, getEntryFunction(root));
    Value handleSlot = fieldAddress(b, loc, blockType, block, {0});
    Value status = callRuntime(b, loc, RuntimeFn::Launch, {entry, block, handleSlot});
    checkStatus(b, loc, status,
                ("launching @" + launch.getRoot()).str());
    launched[launch.getGraph()] = {block, root};
  }

  // A handle that reaches its wait through branches becomes the launch block
  // pointer itself: block arguments take pointers, branches pass the blocks.
  SmallVector<BlockArgument> mergedHandles;
  DenseMap<Value, std::string> rootNames; // "@a or @b", for the error text
  for (WaitOp wait : waits) {
    auto argument = dyn_cast<BlockArgument>(wait.getGraph());
    if (!argument || launched.count(argument))
      continue;
    FailureOr<WaitedRoot> waited = getWaitedRoot(wait);
    if (failed(waited))
      return failure();
    launched[argument] = {argument, waited->root};
    rootNames[argument] = waited->name;
  }
  walkHostCode([&](Block *block) {
    for (BlockArgument argument : block->getArguments())
      if (isa<hpvm::GraphType>(argument.getType()) && !block->isEntryBlock())
        mergedHandles.push_back(argument);
  });
  for (BlockArgument argument : mergedHandles)
    argument.setType(pointerType);
  for (LaunchOp launch : launches)
    for (OpOperand &use : llvm::make_early_inc_range(launch.getGraph().getUses()))
      if (isa<BranchOpInterface>(use.getOwner()))
        use.set(launched[launch.getGraph()].first);

  for (WaitOp wait : waits) {
    auto it = launched.find(wait.getGraph());
    if (it == launched.end())
      return wait.emitOpError("expects a graph handle produced by "
                              "'hpvm.launch' in the same function");
    auto [block, root] = it->second;
    Location loc = wait.getLoc();
    OpBuilder b(wait);
    LLVM::LLVMStructType blockType = getLaunchBlockType(root);
    Value handle = loadField(b, loc, blockType, block, 0);
    Value status = callRuntime(b, loc, RuntimeFn::Wait, {handle});
    std::string name = rootNames.lookup(wait.getGraph());
    if (name.empty())
      name = ("@" + cast<SymbolOpInterface>(root.getOperation()).getName()).str();
    checkStatus(b, loc, status, "running " + name);
    unsigned firstOutput = 1 + root.getInputTypes().size();
    SmallVector<Value> results;
    for (auto [index, type] : llvm::enumerate(wait.getResultTypes()))
      results.push_back(fromStorage(
          b, loc, loadField(b, loc, blockType, block, firstOutput + index),
          type));
    callRuntime(b, loc, RuntimeFn::Free, {block});
    wait.replaceAllUsesWith(results);
    wait.erase();
  }

  for (LaunchOp launch : launches) {
    if (!launch.getGraph().use_empty())
      return launch.emitOpError("has a graph handle used by something other "
                                "than 'hpvm.wait'; the CPU backend needs the "
                                "wait in the same function");
    launch.erase();
  }

  for (Operation *op : trackerOps) {
    Location loc = op->getLoc();
    OpBuilder b(op);
    Value memory = op->getOperand(0);
    Value size = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
    FailureOr<BufferExtent> extent =
        getBufferExtent(*this, b, loc, op, memory, size);
    if (failed(extent))
      return failure();
    ifNotEmpty(*this, b, loc, *extent, [&](OpBuilder &then) {
      Value status;
      if (isa<TrackOp>(op))
        status = callRuntime(then, loc, RuntimeFn::Track, {extent->pointer, extent->bytes});
      else if (isa<UntrackOp>(op))
        status = callRuntime(then, loc, RuntimeFn::Untrack, {extent->pointer});
      else
        status = callRuntime(then, loc, RuntimeFn::RequestHost, {extent->pointer, extent->bytes,
                              i32Constant(then, loc, kAccessInOut)});
      checkStatus(then, loc, status,
                  (op->getName().getStringRef() + " of a buffer").str());
    });
    op->erase();
  }
  return success();
}
