//===- LowerBarriers.cpp - hpvm.barrier on the CPU by splitting leaves ----===//
// A leaf whose body has barriers is split into phases, one function each. A
// grid of such a leaf runs phase by phase, one runtime parallel-for per
// phase, so that no instance starts phase p + 1 before every instance
// finished phase p: the barrier's meaning. Values defined before a barrier
// and used after it go through a per-instance spill slot.
//
// Barriers are top-level ops of the blocks of the leaf body (not inside a
// nested region such as scf.if). Imported C has unstructured control flow
// before and after them (an `if` before a barrier puts it in a later block):
// the phase of a block is the number of barriers crossed to reach it, which
// must be the same on every path, each phase must end at a single barrier,
// and every hpvm.return must come after all of them. Phase p's function is a
// copy of the body entered right after barrier p - 1 and left at barrier p.
#include "CPULowering.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

/// Where to point at `block`: its first op with a location (clang gives some
/// ops of imported C none), else `fallback`.
static Location blockLocation(Block *block, Location fallback) {
  for (Operation &op : *block)
    if (!isa<UnknownLoc>(op.getLoc()))
      return op.getLoc();
  return fallback;
}

LogicalResult CPULowering::splitAtBarriers(LeafOp leaf) {
  Region &body = leaf.getBody();
  WalkResult nested = leaf.walk([&](BarrierOp barrier) {
    if (barrier->getParentRegion() == &body)
      return WalkResult::advance();
    barrier.emitOpError() << "inside control flow is not supported by "
                             "convert-hpvm-to-cpu yet; expected it at the top "
                             "level of the leaf's body (not in a nested region)";
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();

  // The phase each block starts in, and the barrier that ends each phase.
  DenseMap<Block *, unsigned> blockPhase;
  SmallVector<Operation *> barriers; // barriers[p] ends phase p
  SmallVector<Block *> worklist{&body.front()};
  blockPhase[&body.front()] = 0;
  while (!worklist.empty()) {
    Block *block = worklist.pop_back_val();
    unsigned phase = blockPhase.lookup(block);
    for (Operation &op : *block) {
      if (!isa<BarrierOp>(op))
        continue;
      if (phase < barriers.size() && barriers[phase] != &op)
        return op.emitOpError()
               << "is one of several barriers that end phase " << phase
               << " on different paths, which convert-hpvm-to-cpu does not "
                  "support yet; every instance must pass the same barriers";
      if (phase == barriers.size())
        barriers.push_back(&op);
      ++phase;
    }
    for (Block *successor : block->getSuccessors()) {
      auto [it, inserted] = blockPhase.try_emplace(successor, phase);
      if (inserted) {
        worklist.push_back(successor);
      } else if (it->second != phase) {
        return emitError(blockLocation(successor, leaf.getLoc()))
               << "is reached after " << it->second << " and after " << phase
               << " barriers of leaf '" << leaf.getSymName()
               << "' on different paths (a barrier in a loop or in a branch), "
                  "which convert-hpvm-to-cpu does not support yet";
      }
    }
  }
  unsigned lastPhase = barriers.size();
  // The phase of each top-level op.
  DenseMap<Operation *, unsigned> phaseOf;
  for (Block &block : body) {
    unsigned phase = blockPhase.lookup(&block);
    for (Operation &op : block) {
      if (isa<BarrierOp>(op))
        ++phase;
      else
        phaseOf[&op] = phase;
    }
  }
  for (Block &block : body)
    if (blockPhase.count(&block))
      if (auto ret = dyn_cast<ReturnOp>(block.getTerminator());
          ret && phaseOf.lookup(ret) != lastPhase)
        return ret.emitOpError()
               << "is reached after " << phaseOf.lookup(ret) << " of the "
               << lastPhase << " barriers of its leaf; convert-hpvm-to-cpu "
               << "needs every instance to pass every barrier";
  auto phaseOfUser = [&](Operation *user) {
    return phaseOf.lookup(body.findAncestorOpInRegion(*user));
  };

  // Values that cross a barrier: defined in one phase (op results and block
  // arguments at the top level), used in a later one.
  llvm::SetVector<Value> spilled;
  DenseMap<Value, unsigned> valuePhase;
  auto consider = [&](Value value, unsigned phase) {
    for (Operation *user : value.getUsers())
      if (phaseOfUser(user) > phase) {
        spilled.insert(value);
        valuePhase[value] = phase;
      }
  };
  for (Block &block : body) {
    if (!blockPhase.count(&block))
      continue;
    if (!block.isEntryBlock())
      for (BlockArgument arg : block.getArguments())
        consider(arg, blockPhase.lookup(&block));
    for (Operation &op : block)
      for (Value result : op.getResults())
        consider(result, phaseOf.lookup(&op));
  }
  SmallVector<Type> spilledTypes;
  for (Value value : spilled) {
    if (!getStorageType(value.getType()))
      return emitError(value.getLoc())
             << "a value of type " << value.getType()
             << " lives across 'hpvm.barrier', which the CPU backend cannot keep";
    spilledTypes.push_back(value.getType());
  }
  LLVM::LLVMStructType spillType = getStorageStruct(spilledTypes);
  spillTypes[leaf] = spillType;

  // (inputs..., x, y, z, extent x, extent y, extent z, parent frame, spill)
  unsigned numInputs = leaf.getNumArguments();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append(6, IndexType::get(context));
  inputs.append({pointerType, pointerType});
  OpBuilder b(leaf);
  Location loc = leaf.getLoc();
  for (unsigned phase = 0; phase <= lastPhase; ++phase) {
    bool last = phase == lastPhase;
    auto function = func::FuncOp::create(
        b, loc,
        uniqueName(("__hpvm_leaf_" + leaf.getSymName() + "_phase" + Twine(phase))
                       .str()),
        b.getFunctionType(inputs, last ? leaf.getResultTypes() : TypeRange()));
    markInternal(function);
    Block *entry = function.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    Value slot = entry->getArguments().back();

    // A copy of the whole body after the entry block, its entry block's
    // arguments the inputs.
    IRMapping mapping;
    for (unsigned i = 0; i < numInputs; ++i)
      mapping.map(body.getArgument(i), entry->getArgument(i));
    Region &copy = function.getBody();
    body.cloneInto(&copy, mapping);
    // Values of earlier phases come from the spill slot.
    for (auto [field, value] : llvm::enumerate(spilled))
      if (valuePhase.lookup(value) < phase)
        mapping.lookup(value).replaceAllUsesWith(fromStorage(
            fb, loc, loadField(fb, loc, spillType, slot, field), value.getType()));
    // Enter right after barrier phase - 1.
    Block *start = entry->getNextNode();
    if (phase > 0) {
      Operation *after = mapping.lookup(barriers[phase - 1]);
      start = after->getBlock()->splitBlock(after->getNextNode());
    }
    // Leave at barrier phase, after spilling the values later phases use.
    if (!last) {
      Operation *end = mapping.lookup(barriers[phase]);
      Block *tail = end->getBlock()->splitBlock(end);
      OpBuilder eb = OpBuilder::atBlockEnd(tail->getPrevNode());
      for (auto [field, value] : llvm::enumerate(spilled))
        if (valuePhase.lookup(value) == phase)
          storeField(eb, loc, spillType, slot, field,
                     toStorage(eb, loc, mapping.lookup(value)));
      func::ReturnOp::create(eb, loc);
    }
    // The blocks of this phase: those reachable from its start.
    llvm::SetVector<Block *> reachable;
    reachable.insert(start);
    for (unsigned i = 0; i < reachable.size(); ++i)
      for (Block *successor : reachable[i]->getSuccessors())
        reachable.insert(successor);
    SmallVector<Block *> dead;
    for (Block &block : copy)
      if (&block != entry && !reachable.contains(&block))
        dead.push_back(&block);
    for (Block *block : dead)
      for (Operation &op : *block)
        op.dropAllReferences();
    for (Block *block : dead)
      block->dropAllDefinedValueUses();
    for (Block *block : dead)
      block->erase();
    // The start block's ops join the entry block (it has no predecessors).
    entry->getOperations().splice(entry->end(), start->getOperations());
    start->erase();
    function.walk([&](ReturnOp ret) {
      OpBuilder rb(ret);
      func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
      ret.erase();
    });
    lowerGridQueries(function, numInputs);
    lowerAllocs(function);
    markAlwaysInline(function);
    phaseFunctions[leaf].push_back(function);
  }
  return success();
}
void CPULowering::runPhases(OpBuilder &b, Location loc, LeafOp leaf,
                            ValueRange dims, Value extents, Value context) {
  LLVM::LLVMStructType spillType = spillTypes.lookup(leaf);
  unsigned rank = dims.size();
  Value spill = nullPointer(b, loc);
  if (!spillType.getBody().empty()) {
    Value bytes = LLVM::MulOp::create(b, loc, instanceCount(b, loc, dims),
                                      sizeOf(b, loc, spillType));
    spill = callRuntime(b, loc, RuntimeFn::Malloc, {bytes});
  }
  LLVM::LLVMStructType contextType = getRangeContextType(leaf);
  storeField(b, loc, contextType, context, leaf.getNumArguments() + 2, spill);
  for (unsigned phase = 0, e = phaseFunctions.lookup(leaf).size(); phase < e;
       ++phase) {
    Value body = LLVM::AddressOfOp::create(b, loc, getRangeFunction(leaf, rank, phase));
    Value status = callRuntime(b, loc, RuntimeFn::ParallelFor, {i32Constant(b, loc, rank), extents, body, context});
    checkStatus(b, loc, status,
                ("running phase " + Twine(phase) + " of @" + leaf.getSymName())
                    .str());
  }
  if (!spillType.getBody().empty())
    callRuntime(b, loc, RuntimeFn::Free, {spill});
}
