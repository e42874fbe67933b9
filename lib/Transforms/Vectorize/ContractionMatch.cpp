//===- ContractionMatch.cpp - The loop of products a leaf sums ------------===//
// See ContractionMatch.h.
#include "ContractionMatch.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::contraction;

bool Analysis::matchLoop(Block *l) {
  loop = l;
  auto branch = dyn_cast<LLVM::CondBrOp>(l->getTerminator());
  if (!branch)
    return fail("the loop does not end in a conditional branch");
  bool exitOnTrue = branch.getFalseDest() == l;
  exit = exitOnTrue ? branch.getTrueDest() : branch.getFalseDest();
  if (exit == l ||
      (exitOnTrue ? branch.getFalseDest() : branch.getTrueDest()) != l)
    return fail("the loop does not branch to itself and one exit");
  if (l->getNumArguments() != 2)
    return fail("the loop carries other values than a counter and a sum");
  OperandRange again =
      exitOnTrue ? branch.getFalseDestOperands() : branch.getTrueDestOperands();
  OperandRange out =
      exitOnTrue ? branch.getTrueDestOperands() : branch.getFalseDestOperands();
  return matchCounter(branch, again, exitOnTrue) && matchStep(again) &&
         matchBody(branch, out) && matchEntry() && matchStart() &&
         matchAddresses();
}

bool Analysis::matchCounter(LLVM::CondBrOp branch, OperandRange again,
                            bool exitOnTrue) {
  // The counter and the accumulator.
  for (unsigned i = 0; i < 2; ++i) {
    BlockArgument arg = loop->getArgument(i);
    if (arg.getType().isF32())
      acc = arg;
    else if (arg.getType().isInteger())
      kk = arg;
  }
  if (!acc || !kk)
    return fail("the loop does not carry an f32 sum and an integer counter");
  Value next = again[kk.getArgNumber()];
  auto increment = next.getDefiningOp<LLVM::AddOp>();
  if (!increment || increment->getBlock() != loop ||
      !((increment.getLhs() == kk && constantOf(increment.getRhs()) == 1) ||
        (increment.getRhs() == kk && constantOf(increment.getLhs()) == 1)))
    return fail("the loop counter does not step by 1");
  // Exit when the next count equals n.
  auto compare = branch.getCondition().getDefiningOp<LLVM::ICmpOp>();
  if (!compare)
    return fail("the loop's exit is not a comparison of its counter");
  Value bound;
  if (compare.getLhs() == next)
    bound = compare.getRhs();
  else if (compare.getRhs() == next)
    bound = compare.getLhs();
  bool eq = compare.getPredicate() == LLVM::ICmpPredicate::eq;
  bool ne = compare.getPredicate() == LLVM::ICmpPredicate::ne;
  if (!bound || !isInvariant(bound) ||
      !((eq && exitOnTrue) || (ne && !exitOnTrue)))
    return fail("the loop's trip count is not a value equal in every instance");
  tripCount = bound;
  return true;
}

bool Analysis::matchStep(OperandRange again) {
  stepped = again[acc.getArgNumber()];
  stepOp = stepped.getDefiningOp();
  if (!stepOp || stepOp->getBlock() != loop)
    return fail("the sum is not updated in the loop");
  Value factors[2];
  if (isa<LLVM::FMulAddOp, LLVM::FMAOp>(stepOp)) {
    if (stepOp->getOperand(2) != acc)
      return fail("the sum is not the addend of the multiply-add");
    factors[0] = stepOp->getOperand(0);
    factors[1] = stepOp->getOperand(1);
  } else if (isa<LLVM::FAddOp>(stepOp)) {
    Value other = stepOp->getOperand(0) == acc ? stepOp->getOperand(1)
                                               : stepOp->getOperand(0);
    if (other == acc ||
        (stepOp->getOperand(0) != acc && stepOp->getOperand(1) != acc))
      return fail("the sum is not one of the addition's operands");
    productOp = other.getDefiningOp<LLVM::FMulOp>();
    if (!productOp || productOp->getBlock() != loop || !other.hasOneUse())
      return fail("the sum does not add a product");
    factors[0] = productOp->getOperand(0);
    factors[1] = productOp->getOperand(1);
  } else {
    return fail("the loop's sum is not a sum of products");
  }
  if (!acc.hasOneUse())
    return fail("the sum is used otherwise in the loop");
  for (unsigned i = 0; i < 2; ++i) {
    loads[i] = factors[i].getDefiningOp<LLVM::LoadOp>();
    if (!loads[i] || loads[i]->getBlock() != loop || loads[i].getVolatile_() ||
        loads[i].getOrdering() != LLVM::AtomicOrdering::not_atomic ||
        !factors[i].hasOneUse())
      return fail("a factor is not a plain load in the loop");
  }
  return true;
}

bool Analysis::matchBody(LLVM::CondBrOp branch, OperandRange out) {
  // Nothing else happens in the loop, and only the sum leaves it.
  for (Operation &op : *loop) {
    if (&op == loads[0] || &op == loads[1] || &op == branch)
      continue;
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return fail("the loop does more than sum products");
    for (Value result : op.getResults())
      for (Operation *user : result.getUsers())
        if (user->getBlock() != loop && result != stepped)
          return fail(
              "a value of the loop other than its sum is used after it");
  }
  // What leaves the loop: its sum, and values from before the loop. (Other uses
  // of the sum are in blocks the loop dominates: after its one exit edge.)
  for (Value v : out)
    if (v != stepped && v.getParentBlock() == loop)
      return fail("a value of the loop other than its sum is used after it");
  exitOperands.assign(out.begin(), out.end());
  return true;
}

bool Analysis::matchEntry() {
  // Entry: G -> (P ->) L, G choosing between the loop and something else.
  SmallVector<Block *> entries;
  for (Block *pred : loop->getPredecessors())
    if (pred != loop && !llvm::is_contained(entries, pred))
      entries.push_back(pred);
  if (entries.size() != 1)
    return fail("the loop is not entered from one place");
  Block *entry = entries.front();
  guard = entry;
  if (isa<LLVM::BrOp>(entry->getTerminator())) {
    preheader = entry;
    guard = preheader->getSinglePredecessor();
    if (!guard)
      return fail("the loop's preheader is not behind a guard");
    // The sums variant keeps the preheader (its values may be used after
    // the loop), so it may only compute.
    for (Operation &op : *preheader) {
      if (&op == preheader->getTerminator())
        continue;
      if (!isMemoryEffectFree(&op) || op.getNumRegions())
        return fail("the loop's preheader has side effects");
    }
  }
  auto guardBranch = dyn_cast<LLVM::CondBrOp>(guard->getTerminator());
  if (!guardBranch)
    return fail("the loop has no guard");
  Block *enters = preheader ? preheader : loop;
  if (guardBranch.getTrueDest() == enters &&
      guardBranch.getFalseDest() != enters)
    guardTrueEnters = true;
  else if (guardBranch.getFalseDest() == enters &&
           guardBranch.getTrueDest() != enters)
    guardTrueEnters = false;
  else
    return fail(
        "the guard does not choose between the loop and something else");
  guardCondition = guardBranch.getCondition();
  return true;
}

bool Analysis::matchStart() {
  Value start[2];
  if (preheader) {
    auto br = cast<LLVM::BrOp>(preheader->getTerminator());
    start[0] = br.getDestOperands()[0];
    start[1] = br.getDestOperands()[1];
  } else {
    auto guardBranch = cast<LLVM::CondBrOp>(guard->getTerminator());
    OperandRange enter = guardTrueEnters ? guardBranch.getTrueDestOperands()
                                         : guardBranch.getFalseDestOperands();
    start[0] = enter[0];
    start[1] = enter[1];
  }
  if (constantOf(start[kk.getArgNumber()]) != 0)
    return fail("the loop counter does not start at 0");
  init = start[acc.getArgNumber()];
  if (!(isa<BlockArgument>(init) && isInvariant(init)) &&
      !matchPattern(init, m_Constant()))
    return fail("the sum does not start from a constant or an input");
  if (!isInvariant(guardCondition))
    return fail("the guard differs between instances");
  return true;
}

bool Analysis::matchAddresses() {
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<std::pair<Value, Form>> address =
        addressOf(loads[i].getAddr());
    if (!address)
      return fail("a factor's address is not an affine function of the "
                  "instance ids and the loop counter");
    addresses[i] = *address;
  }
  return true;
}

bool Analysis::run() {
  Region &body = leaf.getBody();
  for (Block &block : body)
    for (Operation &op : block)
      if (op.getNumRegions())
        return fail("the leaf has ops with regions (not imported C)");
  for (Block &block : body) {
    if (!llvm::is_contained(block.getSuccessors(), &block))
      continue;
    reason.clear();
    kk = acc = BlockArgument();
    stepOp = productOp = nullptr;
    preheader = guard = exit = nullptr;
    obligations.clear();
    forms.clear();
    if (matchLoop(&block))
      return true;
  }
  if (reason.empty())
    reason = "no loop sums products";
  return false;
}
