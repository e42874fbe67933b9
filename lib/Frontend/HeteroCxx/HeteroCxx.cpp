//===- HeteroCxx.cpp - Hetero-C++ to HPVM-C: the entry points -------------===//
// Promotes the locals of the functions that use markers to SSA values (clang's
// unoptimized IR keeps every variable in memory: a task's inputs must be the
// values the markers name), then lowers sections, tasks, parallel loops and
// launches (Graph.cpp, Host.cpp), and verifies the module.
#include "HPVM/Frontend/HeteroCxx.h"

#include "Graph.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace llvm;

namespace hpvm {

bool usesHeteroCxx(const Module &module) {
  for (const Function &function : module)
    if (function.isDeclaration() && function.getName().contains("__hetero_"))
      for (const User *user : function.users())
        if (const auto *call = dyn_cast<CallBase>(user))
          if (hetero::classify(*call) != hetero::Marker::None)
            return true;
  return false;
}

static void promoteLocals(Function &function) {
  SmallVector<AllocaInst *> promotable;
  for (Instruction &instruction : function.getEntryBlock())
    if (auto *alloca = dyn_cast<AllocaInst>(&instruction); alloca && isAllocaPromotable(alloca))
      promotable.push_back(alloca);
  if (promotable.empty())
    return;
  DominatorTree tree(function);
  AssumptionCache assumptions(function);
  PromoteMemToReg(promotable, tree, &assumptions);
}

bool lowerHeteroCxx(Module &module, function_ref<void(StringRef)> report, bool sequential) {
  hetero::Reporter reporter(report);
  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    bool marked = false;
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallBase>(&instruction))
          marked = marked || hetero::classify(*call) != hetero::Marker::None;
    if (marked)
      promoteLocals(function);
  }
  hetero::Lowering lowering(module, reporter);
  if (!(sequential ? lowering.runSequential() : lowering.run()) || reporter.failed())
    return false;
  // The markers' declarations go with their last calls.
  for (Function &function : llvm::make_early_inc_range(module))
    if (function.isDeclaration() && function.use_empty() &&
        function.getName().contains("__hetero_"))
      function.eraseFromParent();
  std::string problems;
  raw_string_ostream stream(problems);
  if (verifyModule(module, &stream)) {
    report(("error: internal error: the HPVM-C the Hetero-C++ lowering made is invalid:\n" +
            problems)
               .c_str());
    return false;
  }
  return true;
}

} // namespace hpvm
