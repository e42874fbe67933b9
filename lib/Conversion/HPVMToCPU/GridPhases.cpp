//===- GridPhases.cpp - hpvm.barrier on the CPU by splitting leaves -------===//
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
#include "GridRunner.h"

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

/// Refuses barriers inside nested regions of the leaf's body.
static LogicalResult checkBarriersAtTopLevel(LeafOp leaf) {
  Region &body = leaf.getBody();
  WalkResult nested = leaf.walk([&](BarrierOp barrier) {
    if (barrier->getParentRegion() == &body)
      return WalkResult::advance();
    barrier.emitOpError() << "inside control flow is not supported by "
                             "convert-hpvm-to-cpu yet; expected it at the top "
                             "level of the leaf's body (not in a nested region)";
    return WalkResult::interrupt();
  });
  return failure(nested.wasInterrupted());
}

namespace {
/// How the body of a leaf divides into phases at its barriers.
struct BarrierPhases {
  /// The phase each reachable block starts in.
  DenseMap<Block *, unsigned> blockPhase;
  /// barriers[p] ends phase p.
  SmallVector<Operation *> barriers;
  /// The phase of each top-level op.
  DenseMap<Operation *, unsigned> phaseOf;
  /// Values that cross a barrier: defined in one phase (op results and block
  /// arguments at the top level), used in a later one; and that phase.
  llvm::SetVector<Value> spilled;
  DenseMap<Value, unsigned> valuePhase;
};
} // namespace

/// Finds the phase each block starts in and the barrier that ends each
/// phase; refuses phases that differ between paths.
static LogicalResult findBlockPhases(LeafOp leaf, BarrierPhases &phases) {
  Region &body = leaf.getBody();
  DenseMap<Block *, unsigned> &blockPhase = phases.blockPhase;
  SmallVector<Operation *> &barriers = phases.barriers;
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
  return success();
}

/// Finds the phase of each top-level op; refuses a return before the last
/// barrier.
static LogicalResult findOpPhases(Region &body, BarrierPhases &phases) {
  unsigned lastPhase = phases.barriers.size();
  for (Block &block : body) {
    unsigned phase = phases.blockPhase.lookup(&block);
    for (Operation &op : block) {
      if (isa<BarrierOp>(op))
        ++phase;
      else
        phases.phaseOf[&op] = phase;
    }
  }
  for (Block &block : body)
    if (phases.blockPhase.count(&block))
      if (auto ret = dyn_cast<ReturnOp>(block.getTerminator());
          ret && phases.phaseOf.lookup(ret) != lastPhase)
        return ret.emitOpError()
               << "is reached after " << phases.phaseOf.lookup(ret) << " of the "
               << lastPhase << " barriers of its leaf; convert-hpvm-to-cpu "
               << "needs every instance to pass every barrier";
  return success();
}

/// Finds the values that cross a barrier (BarrierPhases::spilled).
static void findSpilledValues(Region &body, BarrierPhases &phases) {
  auto phaseOfUser = [&](Operation *user) {
    return phases.phaseOf.lookup(body.findAncestorOpInRegion(*user));
  };
  auto consider = [&](Value value, unsigned phase) {
    for (Operation *user : value.getUsers())
      if (phaseOfUser(user) > phase) {
        phases.spilled.insert(value);
        phases.valuePhase[value] = phase;
      }
  };
  for (Block &block : body) {
    if (!phases.blockPhase.count(&block))
      continue;
    if (!block.isEntryBlock())
      for (BlockArgument arg : block.getArguments())
        consider(arg, phases.blockPhase.lookup(&block));
    for (Operation &op : block)
      for (Value result : op.getResults())
        consider(result, phases.phaseOf.lookup(&op));
  }
}

/// Erases the blocks of `region` other than `entry` that `start` does not
/// reach (the blocks of other phases).
static void eraseOtherPhases(Region &region, Block *entry, Block *start) {
  llvm::SetVector<Block *> reachable;
  reachable.insert(start);
  for (unsigned i = 0; i < reachable.size(); ++i)
    for (Block *successor : reachable[i]->getSuccessors())
      reachable.insert(successor);
  SmallVector<Block *> dead;
  for (Block &block : region)
    if (&block != entry && !reachable.contains(&block))
      dead.push_back(&block);
  for (Block *block : dead)
    for (Operation &op : *block)
      op.dropAllReferences();
  for (Block *block : dead)
    block->dropAllDefinedValueUses();
  for (Block *block : dead)
    block->erase();
}

func::FuncOp GridRunner::createPhaseFunction(
    LeafOp leaf, unsigned phase, ArrayRef<Operation *> barriers,
    ArrayRef<Value> spilled, const DenseMap<Value, unsigned> &valuePhase) {
  Region &body = leaf.getBody();
  LLVM::LLVMStructType spillType = spillTypes.lookup(leaf);
  // (inputs..., x, y, z, extent x, extent y, extent z, parent frame, spill)
  unsigned numInputs = leaf.getNumArguments();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append(6, IndexType::get(context));
  inputs.append({pointerType, pointerType});
  OpBuilder b(leaf);
  Location loc = leaf.getLoc();
  bool last = phase == barriers.size();
  auto function = func::FuncOp::create(
      b, loc,
      cg.uniqueName(("__hpvm_leaf_" + leaf.getSymName() + "_phase" + Twine(phase))
                     .str()),
      b.getFunctionType(inputs, last ? leaf.getResultTypes() : TypeRange()));
  state.markInternal(function);
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
      mapping.lookup(value).replaceAllUsesWith(cg.fromStorage(
          fb, loc, cg.loadField(fb, loc, spillType, slot, field), value.getType()));
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
        cg.storeField(eb, loc, spillType, slot, field,
                   cg.toStorage(eb, loc, mapping.lookup(value)));
    func::ReturnOp::create(eb, loc);
  }
  // The blocks of this phase: those reachable from its start.
  eraseOtherPhases(copy, entry, start);
  // The start block's ops join the entry block (it has no predecessors).
  entry->getOperations().splice(entry->end(), start->getOperations());
  start->erase();
  function.walk([&](ReturnOp ret) {
    OpBuilder rb(ret);
    func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
    ret.erase();
  });
  state.lowerGridQueries(function, numInputs);
  state.lowerAllocs(function);
  state.markAlwaysInline(function);
  return function;
}

LogicalResult GridRunner::splitAtBarriers(LeafOp leaf) {
  if (failed(checkBarriersAtTopLevel(leaf)))
    return failure();
  Region &body = leaf.getBody();
  BarrierPhases phases;
  if (failed(findBlockPhases(leaf, phases)) ||
      failed(findOpPhases(body, phases)))
    return failure();
  findSpilledValues(body, phases);
  SmallVector<Type> spilledTypes;
  for (Value value : phases.spilled) {
    if (!cg.getStorageType(value.getType()))
      return emitError(value.getLoc())
             << "a value of type " << value.getType()
             << " lives across 'hpvm.barrier', which the CPU backend cannot keep";
    spilledTypes.push_back(value.getType());
  }
  spillTypes[leaf] = cg.getStorageStruct(spilledTypes);

  for (unsigned phase = 0, lastPhase = phases.barriers.size();
       phase <= lastPhase; ++phase) {
    func::FuncOp function =
        createPhaseFunction(leaf, phase, phases.barriers,
                            phases.spilled.getArrayRef(), phases.valuePhase);
    phaseFunctions[leaf].push_back(function);
  }
  return success();
}

void GridRunner::runPhases(OpBuilder &b, Location loc, LeafOp leaf,
                            ValueRange dims, Value extents, Value context) {
  LLVM::LLVMStructType spillType = spillTypes.lookup(leaf);
  unsigned rank = dims.size();
  Value spill = cg.nullPointer(b, loc);
  if (!spillType.getBody().empty()) {
    Value bytes = LLVM::MulOp::create(b, loc, instanceCount(b, loc, dims),
                                      cg.sizeOf(b, loc, spillType));
    spill = cg.callRuntime(b, loc, RuntimeFn::Malloc, {bytes});
  }
  LLVM::LLVMStructType contextType = getRangeContextType(leaf);
  cg.storeField(b, loc, contextType, context, leaf.getNumArguments() + 2, spill);
  for (unsigned phase = 0, e = phaseFunctions.lookup(leaf).size(); phase < e;
       ++phase) {
    Value body = LLVM::AddressOfOp::create(b, loc, getRangeFunction(leaf, rank, phase));
    Value status = cg.callRuntime(b, loc, RuntimeFn::ParallelFor,
                                  {cg.i32Constant(b, loc, rank), extents, body, context});
    cg.checkStatus(b, loc, status,
                ("running phase " + Twine(phase) + " of " + atName(leaf.getSymName()))
                    .str());
  }
  if (!spillType.getBody().empty())
    cg.callRuntime(b, loc, RuntimeFn::Free, {spill});
}
