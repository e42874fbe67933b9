//===- GraphChecks.cpp - UBSan's checks out of graph descriptions ---------===//
#include "GraphChecks.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/SimplifyCFGOptions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {
/// Whether `function` describes a graph: it creates nodes, binds or connects them.
bool describesGraph(const Function &function) {
  for (const BasicBlock &block : function)
    for (const Instruction &instruction : block)
      if (const auto *call = dyn_cast<CallBase>(&instruction))
        if (const Function *callee = call->getCalledFunction()) {
          StringRef name = callee->getName();
          if (name.starts_with("__hpvm__createNode") || name.starts_with("__hpvm__bind") ||
              name.starts_with("__hpvm__edge"))
            return true;
        }
  return false;
}

bool isHandler(const Instruction &instruction) {
  const auto *call = dyn_cast<CallBase>(&instruction);
  const Function *callee = call ? call->getCalledFunction() : nullptr;
  return callee && callee->getName().starts_with("__ubsan_handle_");
}

/// The plain operation of an overflow-checked one, or 0.
Instruction::BinaryOps plainOperation(Intrinsic::ID id) {
  switch (id) {
  case Intrinsic::sadd_with_overflow:
  case Intrinsic::uadd_with_overflow:
    return Instruction::Add;
  case Intrinsic::ssub_with_overflow:
  case Intrinsic::usub_with_overflow:
    return Instruction::Sub;
  case Intrinsic::smul_with_overflow:
  case Intrinsic::umul_with_overflow:
    return Instruction::Mul;
  default:
    return Instruction::BinaryOpsEnd;
  }
}

unsigned dropChecks(Function &function) {
  unsigned dropped = 0;
  // Branches to handler blocks go to their other successor.
  SmallVector<BasicBlock *> handlers;
  for (BasicBlock &block : function)
    if (llvm::any_of(block, isHandler))
      handlers.push_back(&block);
  for (BasicBlock *handler : handlers) {
    for (BasicBlock *predecessor : SmallVector<BasicBlock *>(predecessors(handler))) {
      auto *branch = dyn_cast<BranchInst>(predecessor->getTerminator());
      if (!branch || !branch->isConditional())
        continue;
      BasicBlock *other = branch->getSuccessor(branch->getSuccessor(0) == handler ? 1 : 0);
      if (other == handler)
        continue;
      handler->removePredecessor(predecessor);
      BranchInst::Create(other, branch->getIterator());
      branch->eraseFromParent();
      ++dropped;
    }
  }
  removeUnreachableBlocks(function);
  // Overflow-checked arithmetic (the checks' operands) as plain arithmetic.
  SmallVector<IntrinsicInst *> checked;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block)
      if (auto *intrinsic = dyn_cast<IntrinsicInst>(&instruction))
        if (plainOperation(intrinsic->getIntrinsicID()) != Instruction::BinaryOpsEnd)
          checked.push_back(intrinsic);
  for (IntrinsicInst *intrinsic : checked) {
    bool onlyExtracts = llvm::all_of(intrinsic->users(), [](User *user) {
      auto *extract = dyn_cast<ExtractValueInst>(user);
      return extract && extract->getNumIndices() == 1;
    });
    if (!onlyExtracts)
      continue;
    auto *plain = BinaryOperator::Create(plainOperation(intrinsic->getIntrinsicID()),
                                         intrinsic->getArgOperand(0),
                                         intrinsic->getArgOperand(1), "",
                                         intrinsic->getIterator());
    plain->setDebugLoc(intrinsic->getDebugLoc());
    for (User *user : SmallVector<User *>(intrinsic->users())) {
      auto *extract = cast<ExtractValueInst>(user);
      extract->replaceAllUsesWith(extract->getIndices()[0] == 0
                                      ? static_cast<Value *>(plain)
                                      : ConstantInt::getFalse(function.getContext()));
      extract->eraseFromParent();
    }
    intrinsic->eraseFromParent();
  }
  // What computed the removed conditions.
  for (BasicBlock &block : function)
    for (Instruction &instruction : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isInstructionTriviallyDead(&instruction))
        instruction.eraseFromParent();
  // A choice the checks kept a branch (`n < 16 ? 1 : (n + 15) / 16`, whose arm held a check)
  // becomes the select clang makes of it without them.
  if (dropped) {
    TargetTransformInfo costs(function.getDataLayout());
    for (bool changed = true; changed;) {
      changed = false;
      for (BasicBlock &block : llvm::make_early_inc_range(function))
        if (simplifyCFG(&block, costs, /*DTU=*/nullptr, SimplifyCFGOptions())) {
          changed = true;
          break;
        }
    }
  }
  return dropped;
}
} // namespace

unsigned mlir::hpvm::dropChecksInGraphFunctions(Module &module) {
  unsigned dropped = 0;
  for (Function &function : module)
    if (!function.isDeclaration() && describesGraph(function))
      dropped += dropChecks(function);
  return dropped;
}
