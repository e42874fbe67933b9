//===- GraphChecks.cpp - UBSan's checks out of graph descriptions ---------===//
#include "GraphChecks.h"

#include "HPVM/Frontend/CheckedArithmetic.h"

#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/SimplifyCFGOptions.h"

using namespace llvm;
using mlir::hpvm::isOnlyExtracted;
using mlir::hpvm::uncheckOperation;

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
  SmallVector<WithOverflowInst *> checked;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block)
      if (auto *operation = dyn_cast<WithOverflowInst>(&instruction);
          operation && isOnlyExtracted(operation))
        checked.push_back(operation);
  for (WithOverflowInst *operation : checked)
    uncheckOperation(operation);
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
