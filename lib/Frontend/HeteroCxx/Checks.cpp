//===- Checks.cpp - What a section, a task and a leaf may not do -----------===//
// The errors found on a section's code (code outside its tasks, a task in a
// loop of its section) and on a leaf's (a marker outside a section, a write to
// a buffer declared only as an input).
#include "Graph.h"

#include "HPVM/HPVMC/ApiNames.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace hpvm::hetero {

/// An instruction of the node's code that writes through `pointer` (a store,
/// memset, memcpy or atomic to it or to an address computed from it); calls
/// of other functions are not followed.
static Instruction *writeThrough(Value *pointer) {
  SmallVector<Value *> work{pointer};
  SmallPtrSet<Value *, 16> seen{pointer};
  while (!work.empty()) {
    Value *value = work.pop_back_val();
    for (Use &use : value->uses()) {
      auto *user = dyn_cast<Instruction>(use.getUser());
      if (!user)
        continue;
      if (auto *store = dyn_cast<StoreInst>(user); store && use.getOperandNo() == 1)
        return store;
      if (auto *intrinsic = dyn_cast<AnyMemIntrinsic>(user); intrinsic && use.getOperandNo() == 0)
        return intrinsic;
      if (isa<AtomicRMWInst, AtomicCmpXchgInst>(user) && use.getOperandNo() == 0)
        return user;
      if (isa<GetElementPtrInst, CastInst, PHINode, SelectInst>(user) &&
          user->getType()->isPointerTy() && seen.insert(user).second)
        work.push_back(user);
    }
  }
  return nullptr;
}

/// Whether the node uses `pointer` as its own scratch memory: it reads the buffer
/// back (a load, a copy from it, a call given it), and each such read comes after
/// one of its writes on every path, so that nothing the node computes depends on
/// what the buffer held when the node began. HPVM 2.x's HDC programs keep their
/// update and norm vectors so, declared only as inputs.
static bool usedAsScratch(Value *pointer, Function &node) {
  SmallVector<Instruction *> writes, reads;
  SmallVector<Value *> work{pointer};
  SmallPtrSet<Value *, 16> seen{pointer};
  while (!work.empty()) {
    Value *value = work.pop_back_val();
    for (Use &use : value->uses()) {
      auto *user = dyn_cast<Instruction>(use.getUser());
      if (!user)
        continue;
      // The node's declaration of the buffers it accesses is no access.
      if (auto *call = dyn_cast<CallInst>(user); call && call->getCalledFunction() &&
                                                 call->getCalledFunction()->getName().starts_with(
                                                     hpvmc_api::Prefix))
        continue;
      bool written = (isa<StoreInst>(user) && use.getOperandNo() == 1) ||
                     (isa<AnyMemIntrinsic>(user) && use.getOperandNo() == 0) ||
                     (isa<AtomicRMWInst, AtomicCmpXchgInst>(user) && use.getOperandNo() == 0);
      if (written)
        writes.push_back(user);
      else if (isa<GetElementPtrInst, CastInst, PHINode, SelectInst>(user) &&
               user->getType()->isPointerTy()) {
        if (seen.insert(user).second)
          work.push_back(user);
      } else if (!isa<IntrinsicInst>(user) || isa<AnyMemIntrinsic>(user)) {
        reads.push_back(user);
      }
    }
  }
  if (writes.empty() || reads.empty())
    return false;
  DominatorTree tree(node);
  return llvm::all_of(reads, [&](Instruction *read) {
    return llvm::any_of(writes, [&](Instruction *write) {
      return write != read && tree.dominates(write, read);
    });
  });
}

bool Lowering::checkInputsOnlyRead(Function *node, ArrayRef<Value *> ports,
                                   ArrayRef<Value *> outputs, StringRef name, CallInst *marker) {
  for (Argument &arg : node->args()) {
    if (!arg.getType()->isPointerTy() || llvm::is_contained(outputs, &arg))
      continue;
    Instruction *write = writeThrough(&arg);
    if (!write || usedAsScratch(&arg, *node))
      continue;
    // The parent's buffer, for its name: what the parent passes.
    Value *buffer = arg.getArgNo() < ports.size() ? ports[arg.getArgNo()]
                                                  : static_cast<Value *>(&arg);
    reporter.error(write, "'" + name + "' writes " + describe(buffer) +
                              ", which it declares only as an input; a node's writes reach "
                              "the rest of the graph through its outputs: list the buffer "
                              "among the outputs of its " +
                              (marker ? "__hetero_task_begin" : "__hetero_parallel_loop") +
                              " too");
    return false;
  }
  return true;
}

bool Lowering::checkLeafMarkers(Function *node) {
  CallInst *stray = findMarker(*node, {Marker::TaskBegin, Marker::ParallelLoop,
                                       Marker::SectionEnd, Marker::LaunchBegin});
  if (!stray)
    return true;
  reporter.error(stray, spelling(classify(*stray)) +
                            " outside a section: tasks and parallel loops are the children of "
                            "the __hetero_section_begin / __hetero_section_end around them");
  return false;
}

/// A task (or a loop nest) inside a loop of its section would run once per
/// iteration as C, once as a node: refused.
bool Lowering::checkNotRepeated(CallInst *marker, unsigned loops) {
  DominatorTree tree(*marker->getFunction());
  LoopInfo info(tree);
  if (info.getLoopDepth(marker->getParent()) <= loops)
    return true;
  reporter.error(marker, (loops ? "this parallel loop nest" : "this task") +
                             Twine(" is inside a loop of its section: as C it runs once per "
                                   "iteration, as a node once; make the loop a "
                                   "__hetero_parallel_loop, or move it into a task"));
  return false;
}

bool Lowering::checkSectionCode(Function *function, CallInst *begin) {
  for (BasicBlock &block : *function)
    for (Instruction &instruction : block) {
      if (instruction.isTerminator() || isPure(&instruction) || isa<PHINode>(instruction) ||
          isa<AllocaInst, DbgInfoIntrinsic>(instruction) || instruction.isLifetimeStartOrEnd())
        continue;
      if (auto *call = dyn_cast<CallInst>(&instruction)) {
        Marker marker = classify(*call);
        if (marker == Marker::SectionBegin || marker == Marker::SectionEnd ||
            marker == Marker::Hint)
          continue;
      }
      if (!instruction.mayHaveSideEffects() && instruction.use_empty())
        continue;
      reporter.error(&instruction,
                     "this code is in the section that begins at line " +
                         Twine(begin->getDebugLoc().getLine()) +
                         " but in none of its tasks; a section holds tasks and parallel "
                         "loops only");
      return false;
    }
  return true;
}

} // namespace hpvm::hetero
