//===- Streaming.cpp - A launch region in a loop as a streaming launch -----===//
// A loop whose body is a __hetero_launch_begin/end region (plus arithmetic,
// and loads from memory the graph does not write) runs as a pipeline: one
// streaming __hpvm__launch before the loop, a push of each iteration's inputs
// in it, the wait after it. Iterations then overlap: iteration i+1's first
// task may run while iteration i's last one still runs. That is what the
// sequential loop computes only when no iteration touches another's written
// buffers, so the launch streams only when this can be shown:
//  * every buffer the graph writes (an output) is, per iteration, a pointer
//    that moves up by at least its size each iteration (SCEV: {start,+,step}
//    with step >= size > 0), one per identified object (a local, a global, a
//    malloc, a `restrict` parameter), so iterations write disjoint memory;
//  * every buffer it only reads is either that same iteration's written
//    buffer or in another identified object;
//  * the host code of the loop has no side effects, and its loads read
//    objects the graph does not write.
// Otherwise the region stays a launch and a wait per iteration.
#include "Graph.h"

#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace hpvm::hetero {

namespace {
/// The analyses of the host function holding the launch region.
struct HostAnalyses {
  explicit HostAnalyses(Function &function)
      : libraryImpl(function.getParent()->getTargetTriple()), library(libraryImpl),
        assumptions(function), tree(function), loops(tree),
        evolution(function, library, assumptions, tree, loops) {}
  TargetLibraryInfoImpl libraryImpl;
  TargetLibraryInfo library;
  AssumptionCache assumptions;
  DominatorTree tree;
  LoopInfo loops;
  ScalarEvolution evolution;
};
} // namespace

/// Whether the buffers of `declared` are disjoint between iterations of `loop`.
/// Objects must be identified (a local, a global, a malloc, a `restrict`
/// parameter): two plain pointer parameters may be the same memory.
static bool buffersPerIteration(const Declared &declared, Loop *loop, ScalarEvolution &se,
                                SmallVectorImpl<const Value *> &writtenObjects) {
  SmallVector<const SCEV *> written;
  for (const Item &item : declared.outputs) {
    auto *pointer = dyn_cast<SCEVAddRecExpr>(se.getSCEV(item.value));
    if (!pointer || pointer->getLoop() != loop || !pointer->isAffine())
      return false;
    const SCEV *step = pointer->getStepRecurrence(se);
    const SCEV *size = se.getSCEV(item.size);
    if (!se.isLoopInvariant(size, loop))
      return false;
    size = se.getTruncateOrZeroExtend(size, step->getType());
    // Adjacent (the step is the size) or known to move up by at least it.
    if (step != size &&
        (!se.isKnownPositive(step) || !se.isKnownPredicate(ICmpInst::ICMP_UGE, step, size)))
      return false;
    // One written buffer per object: two in one object could overlap across
    // iterations (`base + f * n` and `base + f * n + n / 2`).
    const Value *object = getUnderlyingObject(item.value);
    if (!isIdentifiedObject(object) || llvm::is_contained(writtenObjects, object))
      return false;
    written.push_back(pointer);
    writtenObjects.push_back(object);
  }
  for (const Item &item : declared.inputs) {
    if (!item.isPair())
      continue;
    const SCEV *pointer = se.getSCEV(item.value);
    if (llvm::is_contained(written, pointer))
      continue; // the iteration's own written buffer
    const Value *object = getUnderlyingObject(item.value);
    if (!isIdentifiedObject(object) || llvm::is_contained(writtenObjects, object))
      return false;
  }
  return true;
}

/// Whether the host code of `loop` (all but the region's call) can run ahead
/// of the graph: no side effects, loads only of objects the graph does not
/// write.
static bool hostCodeRunsAhead(Loop *loop, Instruction *region,
                              ArrayRef<const Value *> writtenObjects) {
  for (BasicBlock *block : loop->blocks())
    for (Instruction &instruction : *block) {
      if (&instruction == region || instruction.isTerminator() ||
          isa<PHINode, DbgInfoIntrinsic>(instruction) || instruction.isLifetimeStartOrEnd())
        continue;
      if (auto *load = dyn_cast<LoadInst>(&instruction)) {
        if (load->isVolatile() ||
            llvm::is_contained(writtenObjects, getUnderlyingObject(load->getPointerOperand())))
          return false;
        continue;
      }
      if (auto *call = dyn_cast<CallInst>(&instruction); call && classify(*call) != Marker::None)
        continue; // the region's own markers, about to go
      if (instruction.mayHaveSideEffects() || instruction.mayReadFromMemory())
        return false;
    }
  return true;
}

bool Lowering::streamLaunch(Instruction *region, Function *root, ArrayRef<Value *> values,
                            const Declared &declared) {
  if (!streaming || declared.outputs.empty())
    return false; // nothing written: nothing to overlap that a wait would not
  Function &host = *region->getFunction();
  HostAnalyses analyses(host);
  Loop *loop = analyses.loops.getLoopFor(region->getParent());
  // One way in, one way out, and the way out only through the loop (so the
  // wait there always follows the launch before it).
  if (!loop || !loop->getLoopPreheader() || !loop->getExitBlock() ||
      !analyses.tree.dominates(loop->getLoopPreheader(), loop->getExitBlock()))
    return false;
  SmallVector<const Value *> writtenObjects;
  if (!buffersPerIteration(declared, loop, analyses.evolution, writtenObjects) ||
      !hostCodeRunsAhead(loop, region, writtenObjects))
    return false;
  // The stages of a streaming graph pass each item on through streaming edges.
  for (BasicBlock &block : *root)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction);
          call && call->getCalledFunction() == api.edge.getCallee())
        call->setArgOperand(5, ConstantInt::get(Type::getInt32Ty(context), 1));
  // The argument struct, one field per parameter of the root (outputs are
  // dropped: a streaming root has none to pop).
  StructType *type = StructType::get(context, root->getFunctionType()->params(), true);
  IRBuilder<> entry(&*host.getEntryBlock().getFirstInsertionPt());
  AllocaInst *args = entry.CreateAlloca(type, nullptr, "hetero.stream.args");
  IRBuilder<> before(loop->getLoopPreheader()->getTerminator());
  Value *graph = before.CreateCall(api.launch, {before.getInt32(1), root, args}, "stream");
  IRBuilder<> b(region);
  for (auto [index, value] : llvm::enumerate(values))
    b.CreateStore(asParameter(b, value, root->getArg(index)->getType()),
                  b.CreateStructGEP(type, args, index));
  b.CreateCall(api.push, {graph, args});
  BasicBlock *exit = loop->getExitBlock();
  IRBuilder<> after(&*exit->getFirstInsertionPt());
  after.CreateCall(api.wait, {graph});
  return true;
}

} // namespace hpvm::hetero
