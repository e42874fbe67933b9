//===- Sequential.cpp - Hetero-C++ as sequential C++ ----------------------===//
// hpvm-cc -fhetero-sequential: the markers go, each __hetero_launch calls its
// root with the arguments it lists (a buffer pair passes two), waits do
// nothing, and the memory markers are libc's. What is left is the sequential
// program the markers annotate: the native build a Hetero-C++ program's
// results are compared with.
#include "Graph.h"

#include "HPVM/HPVMC/ApiNames.h"

#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace hpvm::hetero {

void stripSectionMarkers(Function &function) {
  SmallVector<CallInst *> calls;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction)) {
        // The HPVM-C hints of its tasks too: in plain code they hint no node.
        Function *callee = call->getCalledFunction();
        if (llvm::is_contained({Marker::SectionBegin, Marker::SectionEnd, Marker::TaskBegin,
                                Marker::TaskEnd, Marker::ParallelLoop, Marker::Hint},
                               classify(*call)) ||
            (callee && callee->getName() == hpvmc_api::Hint))
          calls.push_back(call);
      }
  for (CallInst *call : calls) {
    if (!call->getType()->isVoidTy())
      call->replaceAllUsesWith(PoisonValue::get(call->getType()));
    call->eraseFromParent();
  }
}

bool Lowering::runSequential() {
  SmallVector<std::pair<CallInst *, Marker>> calls;
  for (Function &function : module)
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallInst>(&instruction))
          if (Marker marker = classify(*call); marker != Marker::None)
            calls.push_back({call, marker});
  // HPVM-C hints in the regions of the markers hint nodes that are not made.
  SmallPtrSet<Function *, 8> marked;
  for (auto [call, marker] : calls)
    marked.insert(call->getFunction());
  for (Function *function : marked)
    for (BasicBlock &block : *function)
      for (Instruction &instruction : llvm::make_early_inc_range(block))
        if (auto *call = dyn_cast<CallInst>(&instruction))
          if (Function *callee = call->getCalledFunction();
              callee && callee->getName() == hpvmc_api::Hint)
            call->eraseFromParent();
  for (auto [call, marker] : calls) {
    if (marker == Marker::Launch) {
      Function *root = nullptr;
      Declared declared;
      SmallVector<Value *> values;
      if (!parseLaunch(call, root, declared, values))
        return false;
      IRBuilder<> b(call);
      SmallVector<Value *> args;
      for (auto [value, arg] : llvm::zip(values, root->args()))
        args.push_back(asParameter(b, value, arg.getType()));
      b.CreateCall(root, args);
    } else if (marker == Marker::Malloc || marker == Marker::Free ||
               marker == Marker::CopyMem) {
      lowerMemoryMarker(call, marker);
      continue;
    }
    if (!call->getType()->isVoidTy())
      call->replaceAllUsesWith(PoisonValue::get(call->getType()));
    call->eraseFromParent();
  }
  return true;
}

} // namespace hpvm::hetero
