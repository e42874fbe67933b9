//===- LowerBarriers.cpp - hpvm.barrier on the CPU by splitting leaves ----===//
// A leaf whose body has barriers at its top level is split into phases, one
// function each. A grid of such a leaf runs phase by phase, one runtime
// parallel-for per phase, so that no instance starts phase p + 1 before every
// instance finished phase p: the barrier's meaning. Values defined before a
// barrier and used after it go through a per-instance spill slot. The
// barriers must be in the entry block (imported C has unstructured control
// flow after them); the blocks after the entry block belong to the last phase.
#include "CPULowering.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::cpu;

LogicalResult CPULowering::splitAtBarriers(LeafOp leaf) {
  Region &body = leaf.getBody();
  Block &block = body.front();
  WalkResult nested = leaf.walk([&](BarrierOp barrier) {
    if (barrier->getBlock() == &block)
      return WalkResult::advance();
    barrier.emitOpError() << "inside control flow is not supported by "
                             "convert-hpvm-to-cpu yet; expected it at the top "
                             "level of the leaf's entry block";
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();

  // The top-level ops of each phase.
  DenseMap<Operation *, unsigned> phaseOf;
  SmallVector<SmallVector<Operation *>> phases(1);
  for (Operation &op : block) {
    if (isa<BarrierOp>(op)) {
      phases.emplace_back();
      continue;
    }
    phaseOf[&op] = phases.size() - 1;
    phases.back().push_back(&op);
  }
  // Values that cross a barrier: defined at the top level of one phase, used
  // (at any depth) under an op of a later phase, or in a later block.
  unsigned lastPhase = phases.size() - 1;
  llvm::SetVector<Value> spilled;
  for (Operation &op : block)
    for (Value result : op.getResults())
      for (Operation *user : result.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        unsigned userPhase = top ? phaseOf.lookup(top) : lastPhase;
        if (userPhase > phaseOf.lookup(&op))
          spilled.insert(result);
      }
  SmallVector<Type> spilledTypes;
  for (Value value : spilled) {
    if (!getStorageType(value.getType()))
      return value.getDefiningOp()->emitOpError()
             << "defines a value of type " << value.getType()
             << " that lives across 'hpvm.barrier', which the CPU backend "
                "cannot keep";
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
  for (auto [phase, ops] : llvm::enumerate(phases)) {
    bool last = phase + 1 == phases.size();
    auto function = func::FuncOp::create(
        b, leaf.getLoc(),
        uniqueName(("__hpvm_leaf_" + leaf.getSymName() + "_phase" + Twine(phase))
                       .str()),
        b.getFunctionType(inputs, last ? leaf.getResultTypes() : TypeRange()));
    markInternal(function);
    Block *entry = function.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    for (unsigned i = 0; i < numInputs; ++i)
      mapping.map(block.getArgument(i), entry->getArgument(i));
    Value slot = entry->getArguments().back();
    for (auto [field, value] : llvm::enumerate(spilled))
      if (phaseOf.lookup(value.getDefiningOp()) < phase)
        mapping.map(value,
                    fromStorage(fb, leaf.getLoc(),
                                loadField(fb, leaf.getLoc(), spillType, slot, field),
                                value.getType()));
    if (last && !body.hasOneBlock()) {
      // The whole region, then the entry block's earlier phases removed.
      cloneLastPhase(leaf, function, mapping, phaseOf, phase);
    } else {
      for (Operation *op : ops)
        fb.clone(*op, mapping);
    }
    if (!last) {
      for (auto [field, value] : llvm::enumerate(spilled))
        if (phaseOf.lookup(value.getDefiningOp()) == phase)
          storeField(fb, leaf.getLoc(), spillType, slot, field,
                     toStorage(fb, leaf.getLoc(), mapping.lookup(value)));
      func::ReturnOp::create(fb, leaf.getLoc());
    } else {
      function.walk([&](ReturnOp ret) {
        OpBuilder rb(ret);
        func::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
        ret.erase();
      });
    }
    lowerGridQueries(function, numInputs);
    lowerAllocs(function);
    markAlwaysInline(function);
    phaseFunctions[leaf].push_back(function);
  }
  return success();
}

/// Clones a multi-block leaf body into the last phase's function: the whole
/// region is cloned, uses of values of earlier phases are redirected to their
/// spill loads (in `mapping`), and the entry block's ops of earlier phases and
/// its barriers are dropped.
void CPULowering::cloneLastPhase(LeafOp leaf, func::FuncOp function,
                                 IRMapping &mapping,
                                 const DenseMap<Operation *, unsigned> &phaseOf,
                                 unsigned phase) {
  Region &body = leaf.getBody();
  Block &block = body.front();
  Block *entry = &function.getBody().front();
  IRMapping regionMapping;
  for (BlockArgument arg : block.getArguments())
    regionMapping.map(arg, mapping.lookup(arg));
  Region scratch;
  body.cloneInto(&scratch, regionMapping);
  SmallVector<Operation *> dead;
  for (Operation &op : block) {
    if (!isa<BarrierOp>(op) && phaseOf.lookup(&op) >= phase)
      continue;
    Operation *clone = regionMapping.lookup(&op);
    for (auto [original, cloned] : llvm::zip(op.getResults(), clone->getResults()))
      if (Value loaded = mapping.lookupOrNull(original))
        cloned.replaceAllUsesWith(loaded);
    dead.push_back(clone);
  }
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->erase();
  }
  Block *clonedEntry = &scratch.front();
  entry->getOperations().splice(entry->end(), clonedEntry->getOperations());
  clonedEntry->erase();
  function.getBody().getBlocks().splice(function.getBody().end(),
                                        scratch.getBlocks());
}

void CPULowering::runPhases(OpBuilder &b, Location loc, LeafOp leaf,
                            ValueRange dims, Value extents, Value context) {
  LLVM::LLVMStructType spillType = spillTypes.lookup(leaf);
  unsigned rank = dims.size();
  Value spill = nullPointer(b, loc);
  if (!spillType.getBody().empty()) {
    Value bytes = LLVM::MulOp::create(b, loc, instanceCount(b, loc, dims),
                                      sizeOf(b, loc, spillType));
    spill = callRuntime(b, loc, "malloc", pointerType, {bytes});
  }
  LLVM::LLVMStructType contextType = getRangeContextType(leaf);
  storeField(b, loc, contextType, context, leaf.getNumArguments() + 2, spill);
  for (unsigned phase = 0, e = phaseFunctions.lookup(leaf).size(); phase < e;
       ++phase) {
    Value body = LLVM::AddressOfOp::create(b, loc, getRangeFunction(leaf, rank, phase));
    Value status = callRuntime(b, loc, "hpvm_rt_parallel_for", pointerType,
                               {i32Constant(b, loc, rank), extents, body, context});
    checkStatus(b, loc, status,
                ("running phase " + Twine(phase) + " of @" + leaf.getSymName())
                    .str());
  }
  if (!spillType.getBody().empty())
    callRuntime(b, loc, "free", Type(), {spill});
}
