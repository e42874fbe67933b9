//===- Regions.cpp - The code of a task or a parallel loop, outlined -------===//
// The blocks between a marker and its end (a task, a launch region), the
// loop nest a parallel loop marker names (its levels' bounds), the locals
// declared there (the region's own), and LLVM's CodeExtractor making a
// function of them.
#include "Graph.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

using namespace llvm;

namespace hpvm::hetero {

static bool isExceptionCleanup(BasicBlock *block) {
  return block->isEHPad() || isa<ResumeInst>(block->getTerminator());
}

static void reportExceptionCleanup(Reporter &reporter, Instruction *marker, StringRef what) {
  reporter.error(marker, "this " + what + " has exception cleanup code (a call that may throw "
                         "with an object to destroy); a node cannot throw to its caller: "
                         "compile with -fno-exceptions, or mark the callees noexcept");
}

bool Lowering::markedRegion(CallInst *begin, Marker endMarker, StringRef what,
                            SmallVectorImpl<BasicBlock *> &blocks, CallInst *&end) {
  end = nullptr;
  for (User *user : begin->users())
    if (auto *call = dyn_cast<CallInst>(user); call && classify(*call) == endMarker)
      end = end ? end : call;
  if (!end) {
    reporter.error(begin, "this " + what + " has no " + spelling(endMarker) + " (it takes the "
                          "value " + spelling(classify(*begin)) + " returns)");
    return false;
  }
  BasicBlock *before = begin->getParent();
  // The debug records after the marker (the declarations of the region's
  // locals) go with the region.
  BasicBlock::iterator first = std::next(begin->getIterator());
  first.setHeadBit(true);
  BasicBlock *start = SplitBlock(before, first);
  BasicBlock *after = SplitBlock(end->getParent(), end);
  SmallVector<BasicBlock *> work{start};
  SmallPtrSet<BasicBlock *, 16> seen{start};
  while (!work.empty()) {
    BasicBlock *block = work.pop_back_val();
    if (isa<ReturnInst>(block->getTerminator())) {
      reporter.error(block->getTerminator(), "a return leaves the " + what +
                                                 " that begins at line " +
                                                 Twine(begin->getDebugLoc().getLine()) +
                                                 "; a " + what + " ends at its " +
                                                 spelling(endMarker));
      return false;
    }
    for (BasicBlock *next : successors(block))
      if (next != after && seen.insert(next).second)
        work.push_back(next);
  }
  for (BasicBlock &block : *begin->getFunction())
    if (seen.contains(&block))
      blocks.push_back(&block);
  if (llvm::any_of(blocks, isExceptionCleanup)) {
    reportExceptionCleanup(reporter, begin, what);
    return false;
  }
  for (BasicBlock *block : blocks)
    for (BasicBlock *pred : predecessors(block))
      if (!seen.contains(pred) && !(block == start && pred == before)) {
        reporter.error(pred->getTerminator(), "a jump enters the " + what +
                                                  " that begins at line " +
                                                  Twine(begin->getDebugLoc().getLine()) +
                                                  " from outside it");
        return false;
      }
  return true;
}

static bool isOne(Value *value) {
  auto *constant = dyn_cast<ConstantInt>(value);
  return constant && constant->isOne();
}

/// The IV, start, bound and compare of a loop in clang's shape (`for.cond`
/// tests, `for.inc` adds one); fails with the reason.
static bool analyzeLoop(Loop *loop, LoopLevel &level, std::string &why) {
  BasicBlock *header = loop->getHeader(), *latch = loop->getLoopLatch();
  BasicBlock *entry = loop->getLoopPredecessor();
  auto *branch = dyn_cast<BranchInst>(header->getTerminator());
  if (!latch || !entry || !branch || !branch->isConditional()) {
    why = "its condition is not tested before each iteration (a for loop `for (i = a; i < b; "
          "++i)` is expected)";
    return false;
  }
  bool continueOnTrue = loop->contains(branch->getSuccessor(0));
  auto *compare = dyn_cast<ICmpInst>(branch->getCondition());
  level.iv = nullptr;
  for (PHINode &phi : header->phis()) {
    auto *step = dyn_cast<BinaryOperator>(phi.getIncomingValueForBlock(latch));
    bool isIncrement = step && step->getOpcode() == Instruction::Add &&
                       ((step->getOperand(0) == &phi && isOne(step->getOperand(1))) ||
                        (step->getOperand(1) == &phi && isOne(step->getOperand(0))));
    if (isIncrement && !level.iv) {
      level.iv = &phi;
      level.start = phi.getIncomingValueForBlock(entry);
      continue;
    }
    why = describe(&phi) + " carries a value from one iteration to the next; the "
          "iterations of a parallel loop must be independent";
    return false;
  }
  if (!level.iv || !compare) {
    why = "no loop variable that starts at a value, goes up by one and is compared with a "
          "bound was found";
    return false;
  }
  ICmpInst::Predicate predicate = compare->getPredicate();
  Value *lhs = compare->getOperand(0), *rhs = compare->getOperand(1);
  auto isIV = [&](Value *value, Instruction::CastOps &cast) {
    cast = Instruction::CastOpsEnd;
    if (auto *c = dyn_cast<CastInst>(value); c && c->getOperand(0) == level.iv) {
      cast = c->getOpcode();
      return true;
    }
    return value == level.iv;
  };
  if (isIV(rhs, level.ivCast)) {
    std::swap(lhs, rhs);
    predicate = ICmpInst::getSwappedPredicate(predicate);
  } else if (!isIV(lhs, level.ivCast)) {
    why = "its condition does not compare the loop variable with a bound";
    return false;
  }
  if (!continueOnTrue)
    predicate = ICmpInst::getInversePredicate(predicate);
  level.bound = rhs;
  switch (predicate) {
  case ICmpInst::ICMP_SLT: case ICmpInst::ICMP_NE:
    level.inclusive = false; level.isSigned = true; return true;
  case ICmpInst::ICMP_ULT:
    level.inclusive = false; level.isSigned = false; return true;
  case ICmpInst::ICMP_SLE:
    level.inclusive = true; level.isSigned = true; return true;
  case ICmpInst::ICMP_ULE:
    level.inclusive = true; level.isSigned = false; return true;
  default:
    why = "its condition is not `i < bound`, `i <= bound` or `i != bound`";
    return false;
  }
}

bool Lowering::loopRegion(CallInst *marker, unsigned loops, SmallVectorImpl<BasicBlock *> &blocks,
                          SmallVectorImpl<LoopLevel> &levels) {
  Function &function = *marker->getFunction();
  DominatorTree tree(function);
  LoopInfo info(tree);
  Loop *inner = info.getLoopFor(marker->getParent());
  // A body that is also the latch (inlining merged `for.inc` into it): the
  // increment of the loop variable starts a latch of its own.
  if (inner && marker->getParent() == inner->getLoopLatch()) {
    BasicBlock *latch = inner->getLoopLatch();
    for (PHINode &phi : inner->getHeader()->phis())
      if (auto *step = dyn_cast<Instruction>(phi.getIncomingValueForBlock(latch));
          step && step->getParent() == latch && marker->comesBefore(step)) {
        SplitBlock(latch, step);
        tree.recalculate(function);
        info.releaseMemory();
        info.analyze(tree);
        inner = info.getLoopFor(marker->getParent());
        break;
      }
  }
  Loop *loop = inner;
  for (unsigned k = 0; k < loops; ++k, loop = loop->getParentLoop()) {
    if (!loop) {
      reporter.error(marker, "__hetero_parallel_loop: declares " + Twine(loops) +
                                 " enclosing loops, but it is inside only " + Twine(k));
      return false;
    }
    LoopLevel level;
    std::string why;
    if (!analyzeLoop(loop, level, why)) {
      reporter.error(marker, "__hetero_parallel_loop: enclosing loop " + Twine(k + 1) +
                                 " (from the innermost) cannot run as parallel instances: " +
                                 why);
      return false;
    }
    levels.push_back(level);
  }
  BasicBlock *header = inner->getHeader(), *latch = inner->getLoopLatch();
  if (marker->getParent() == header || marker->getParent() == latch) {
    reporter.error(marker, "__hetero_parallel_loop must be in the body of the loop");
    return false;
  }
  for (BasicBlock *block : inner->blocks())
    if (block != header && block != latch)
      blocks.push_back(block);
  // A path of the body that ends the program (`assert`'s failure, a UBSan check's handler with
  // -fno-sanitize-recover: a call, then `unreachable`) is outside the loop for LoopInfo, but the
  // body's own: it goes with the body into the node.
  for (size_t i = 0; i < blocks.size(); ++i)
    for (BasicBlock *next : successors(blocks[i]))
      if (next != latch && !llvm::is_contained(blocks, next) &&
          isa<UnreachableInst>(next->getTerminator()) && next->getSinglePredecessor())
        blocks.push_back(next);
  for (BasicBlock *block : blocks)
    for (BasicBlock *next : successors(block))
      if (next != latch && !llvm::is_contained(blocks, next)) {
        reporter.error(block->getTerminator(),
                       "a break or return leaves the parallel loop; its iterations run as "
                       "independent instances");
        return false;
      }
  return true;
}

/// Whether the declaration of the local `alloca` is in `region`: its debug
/// record (clang emits it where the C++ declaration is) or its lifetime start
/// (where its scope opens) is there.
static bool declaredIn(AllocaInst *alloca, const SmallPtrSetImpl<BasicBlock *> &region) {
  for (DbgVariableRecord *record : findDVRDeclares(alloca))
    if (const Instruction *at = record->getInstruction(); at && region.count(at->getParent()))
      return true;
  return llvm::any_of(alloca->users(), [&](User *user) {
    auto *marker = dyn_cast<IntrinsicInst>(user);
    return marker && marker->getIntrinsicID() == Intrinsic::lifetime_start &&
           region.count(marker->getParent());
  });
}

/// A local object declared in a region whose scope ends after the region: its
/// one destructor call (`use`, after the region) moves to the region's end, the
/// end of the node that owns the object. False (nothing moved) when `use` is
/// not that, or the region has more than one way out.
static bool destroyAtEnd(AllocaInst *alloca, Instruction *use,
                         const SmallPtrSetImpl<BasicBlock *> &region) {
  auto *call = dyn_cast<CallInst>(use);
  Function *callee = call ? call->getCalledFunction() : nullptr;
  if (!callee || call->arg_size() != 1 || call->getArgOperand(0) != alloca ||
      !StringRef(llvm::demangle(callee->getName())).contains("::~"))
    return false;
  Instruction *exit = nullptr;
  for (BasicBlock *block : region)
    for (BasicBlock *next : successors(block))
      if (!region.count(next)) {
        if (exit)
          return false;
        exit = block->getTerminator();
      }
  if (!exit)
    return false;
  call->moveBefore(exit->getIterator());
  return true;
}

bool Lowering::claimLocals(ArrayRef<BasicBlock *> blocks, StringRef what) {
  SmallPtrSet<BasicBlock *, 16> region(blocks.begin(), blocks.end());
  BasicBlock &entry = blocks.front()->getParent()->getEntryBlock();
  if (region.count(&entry))
    return true;
  for (Instruction &instruction : llvm::make_early_inc_range(entry)) {
    auto *alloca = dyn_cast<AllocaInst>(&instruction);
    if (!alloca || !alloca->isStaticAlloca())
      continue;
    // A task runs once per run of its section: a local of the section that
    // only the task uses holds nothing when the task begins, and is the task's
    // too. A loop's body runs once per iteration: only its own locals are.
    bool declared = declaredIn(alloca, region);
    if (!declared && what != "task")
      continue;
    SmallVector<Instruction *> markers;
    Instruction *outside = nullptr;
    bool inside = false;
    unsigned outsideUses = 0;
    for (User *user : alloca->users()) {
      auto *use = cast<Instruction>(user);
      if (use->isLifetimeStartOrEnd())
        markers.push_back(use);
      else if (region.count(use->getParent()))
        inside = true;
      else if (++outsideUses, !outside || use->getDebugLoc())
        outside = use;
    }
    if (!declared && (outside || !inside))
      continue;
    if (outside && !(outsideUses == 1 && destroyAtEnd(alloca, outside, region))) {
      std::string line;
      for (DbgVariableRecord *record : findDVRDeclares(alloca))
        line = " at line " + std::to_string(record->getVariable()->getLine());
      reporter.error(outside, describe(alloca) + ", declared in the " + what + line +
                                  ", is used here, after the " + what + "; a node's "
                                  "locals are its own: end its scope inside the " + what +
                                  " with { }, or declare it before the " + what +
                                  " and list it among its inputs");
      return false;
    }
    for (Instruction *lifetime : markers)
      lifetime->eraseFromParent();
    alloca->moveBefore(blocks.front()->getFirstInsertionPt());
    claimed.insert(alloca);
  }
  return true;
}

Function *Lowering::extract(ArrayRef<BasicBlock *> blocks, CallInst *marker, StringRef what,
                            CallInst *&call) {
  Function &parent = *blocks.front()->getParent();
  if (!claimLocals(blocks, what))
    return nullptr;
  // A node's code cannot throw to its caller: exception cleanups (a temporary
  // with a destructor passed to a call that may throw) have nowhere to go.
  for (BasicBlock *block : blocks)
    if (isExceptionCleanup(block)) {
      reportExceptionCleanup(reporter, marker, what);
      return nullptr;
    }
  CodeExtractor extractor(blocks, /*DT=*/nullptr, /*AggregateArgs=*/false, nullptr, nullptr,
                          nullptr, /*AllowVarArgs=*/false, /*AllowAlloca=*/true, nullptr,
                          "hetero");
  if (!extractor.isEligible()) {
    reporter.error(marker, "this " + what + " cannot be outlined into a node function (its "
                           "code has more than one entry, or calls va_start)");
    return nullptr;
  }
  CodeExtractorAnalysisCache cache(parent);
  SetVector<Value *> inputs, outputs, sinks, hoists;
  BasicBlock *commonExit = nullptr;
  extractor.findAllocas(cache, sinks, hoists, commonExit);
  extractor.findInputsOutputs(inputs, outputs, sinks);
  if (!outputs.empty()) {
    Instruction *user = nullptr;
    for (User *u : outputs.front()->users())
      if (auto *i = dyn_cast<Instruction>(u); i && !llvm::is_contained(blocks, i->getParent()))
        user = user ? user : i;
    reporter.error(user ? user : marker,
                   describe(outputs.front()) + " is computed in the " + what +
                       " and used after it; nodes pass values on through their declared "
                       "outputs (buffers)");
    return nullptr;
  }
  Function *extracted = extractor.extractCodeRegion(cache);
  if (!extracted) {
    reporter.error(marker, "this " + what + " could not be outlined");
    return nullptr;
  }
  call = cast<CallInst>(*extracted->user_begin());
  return extracted;
}

} // namespace hpvm::hetero
