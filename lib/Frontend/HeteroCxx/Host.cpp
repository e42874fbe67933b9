//===- Host.cpp - Hetero-C++ launches as HPVM-C host calls ----------------===//
// __hetero_launch(root, inputs..., outputs...) fills a packed struct with the
// root's parameters (a buffer pair is its pointer and its size), tracks the
// buffers and calls __hpvm__launch; __hetero_wait waits, requests the output
// buffers back from wherever the graph left them, and untracks the buffers.
// __hetero_launch_begin/end outlines the code between them as the root and
// launches and waits in its place. The memory markers become the runtime's
// calls (or libc's); a section or task that no launch reaches is an error.
#include "Graph.h"

#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace hpvm::hetero {

/// `call(b)` where `pointer` is not null (a program may name a null buffer:
/// there is no memory to track or move).
static void unlessNull(IRBuilder<> &b, Value *pointer, function_ref<void(IRBuilder<> &)> call) {
  if (isa<ConstantPointerNull>(pointer))
    return;
  Instruction *then = SplitBlockAndInsertIfThen(b.CreateIsNotNull(pointer),
                                                b.GetInsertPoint(), /*Unreachable=*/false);
  IRBuilder<> tb(then);
  call(tb);
  b.SetInsertPoint(then->getParent()->getSingleSuccessor(),
                   then->getParent()->getSingleSuccessor()->getFirstInsertionPt());
}

Value *Lowering::emitLaunch(IRBuilder<> &b, Function *node, ArrayRef<Value *> values,
                            const Declared &declared) {
  SmallVector<Type *> fields(node->getFunctionType()->params());
  if (!node->getReturnType()->isVoidTy())
    fields.push_back(node->getReturnType());
  StructType *type = StructType::get(context, fields, /*isPacked=*/true);
  Function *host = b.GetInsertBlock()->getParent();
  IRBuilder<> entry(&*host->getEntryBlock().getFirstInsertionPt());
  AllocaInst *args = entry.CreateAlloca(type, nullptr, "hetero.args");
  for (auto [index, value] : llvm::enumerate(values)) {
    Value *converted = asParameter(b, value, node->getArg(index)->getType());
    b.CreateStore(converted, b.CreateStructGEP(type, args, index));
  }
  SmallPtrSet<Value *, 8> tracked;
  for (const Item &item : declared.inputs)
    if (item.isPair() && tracked.insert(item.value).second)
      unlessNull(b, item.value, [&](IRBuilder<> &tb) {
        tb.CreateCall(api.track, {item.value, tb.CreateSExtOrTrunc(item.size, tb.getInt64Ty())});
      });
  return b.CreateCall(api.launch, {b.getInt32(0), node, args}, "graph");
}

void Lowering::emitWait(IRBuilder<> &b, Value *handle) {
  b.CreateCall(api.wait, {handle});
  auto known = launched.find(handle);
  if (known == launched.end())
    return;
  for (const Item &item : known->second.outputs)
    unlessNull(b, item.value, [&](IRBuilder<> &tb) {
      tb.CreateCall(api.request, {item.value, tb.CreateSExtOrTrunc(item.size, tb.getInt64Ty())});
    });
  SmallPtrSet<Value *, 8> untracked;
  for (const Item &item : known->second.inputs)
    if (item.isPair() && untracked.insert(item.value).second)
      unlessNull(b, item.value, [&](IRBuilder<> &tb) { tb.CreateCall(api.untrack, {item.value}); });
}

/// The root's argument numbers of the declared outputs (pointer, size, ...).
static bool outputArguments(const Declared &declared, ArrayRef<Value *> values,
                            SmallVectorImpl<unsigned> &outputs, Reporter &reporter,
                            Instruction *at) {
  for (const Item &item : declared.outputs) {
    auto pointer = llvm::find_if(values, [&](Value *v) { return sameValue(v, item.value); });
    if (pointer == values.end()) {
      reporter.error(at, "output buffer " + describe(item.value) +
                             " is not among the launch's inputs; the root writes only what "
                             "it is given");
      return false;
    }
    unsigned index = pointer - values.begin();
    unsigned size =
        index + 1 < values.size() && sameValue(values[index + 1], item.size)
            ? index + 1
            : llvm::find_if(values, [&](Value *v) { return sameValue(v, item.size); }) -
                  values.begin();
    if (size == values.size()) {
      reporter.error(at, "the size of output buffer " + describe(item.value) +
                             " is not among the launch's inputs");
      return false;
    }
    outputs.push_back(index);
    outputs.push_back(size);
  }
  return true;
}

bool Lowering::parseLaunch(CallInst *launch, Function *&root, Declared &declared,
                           SmallVectorImpl<Value *> &values) {
  root = dyn_cast<Function>(launch->getArgOperand(0)->stripPointerCasts());
  if (!root) {
    reporter.error(launch, "__hetero_launch expects the root function as its first argument");
    return false;
  }
  if (!parseDeclared(*launch, 1, reporter, declared))
    return false;
  values.assign(declared.flatInputs());
  if (values.size() != root->arg_size()) {
    reporter.error(launch, "the launch passes " + Twine(values.size()) + " values ('" +
                               cName(root) + "' has " + Twine(root->arg_size()) +
                               " parameters; a buffer pair passes two)");
    return false;
  }
  for (auto [value, arg] : llvm::zip(values, root->args()))
    if (!passableAs(value->getType(), arg.getType())) {
      reporter.error(launch, "the launch passes " + describe(value) + " for parameter '" +
                                 arg.getName() + "' of another kind");
      return false;
    }
  return true;
}

bool Lowering::lowerLaunch(CallInst *launch) {
  Function *root = nullptr;
  Declared declared;
  SmallVector<Value *> values;
  if (!parseLaunch(launch, root, declared, values))
    return false;
  if (root->isDeclaration()) {
    reporter.error(launch, "the root '" + cName(root) + "' of this launch is not defined in "
                           "this file; a graph is compiled with its launch");
    return false;
  }
  SmallVector<unsigned> outputs;
  if (!outputArguments(declared, values, outputs, reporter, launch))
    return false;
  Function *node = lowerRoot(root, outputs, launch);
  if (!node)
    return false;
  IRBuilder<> b(launch);
  Value *handle = emitLaunch(b, node, values, declared);
  launched[handle] = declared;
  launch->replaceAllUsesWith(handle);
  launch->eraseFromParent();
  return true;
}

bool Lowering::lowerLaunchRegion(CallInst *begin) {
  Declared declared;
  if (!parseDeclared(*begin, 0, reporter, declared))
    return false;
  // The region is a task of the host: outlined the same way.
  SmallVector<BasicBlock *> blocks;
  CallInst *end = nullptr;
  if (!markedRegion(begin, Marker::LaunchEnd, "launched region", blocks, end))
    return false;
  CallInst *call = nullptr;
  Function *extracted = extract(blocks, begin, "launched region", call);
  if (!extracted)
    return false;
  std::string name = declared.name.empty() ? cName(begin->getFunction()) + "_root"
                                           : declared.name;
  Child child;
  IRBuilder<> b(call);
  // The call's position survives the outlining into a node: launch there.
  Instruction *marker = b.CreateCall(api.wait, {PoisonValue::get(b.getPtrTy())});
  if (!makeNode(extracted, call, declared, {}, /*host=*/true, name, begin, child))
    return false;
  // The host reads the buffers, not the root's outputs.
  child.node = dropOutputs(child.node);
  b.SetInsertPoint(marker);
  if (!streamLaunch(marker, child.node, child.ports, declared)) {
    Value *handle = emitLaunch(b, child.node, child.ports, declared);
    launched[handle] = declared;
    emitWait(b, handle);
  }
  marker->eraseFromParent();
  end->eraseFromParent();
  begin->eraseFromParent();
  return true;
}

bool Lowering::lowerMemoryMarker(CallInst *call, Marker marker) {
  IRBuilder<> b(call);
  Value *replacement = nullptr;
  switch (marker) {
  case Marker::Malloc: {
    FunctionCallee malloc = module.getOrInsertFunction(
        "malloc", FunctionType::get(b.getPtrTy(), {b.getInt64Ty()}, false));
    replacement =
        b.CreateCall(malloc, {b.CreateZExtOrTrunc(call->getArgOperand(0), b.getInt64Ty())});
    break;
  }
  case Marker::Free: {
    FunctionCallee free =
        module.getOrInsertFunction("free", FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false));
    b.CreateCall(free, {call->getArgOperand(0)});
    break;
  }
  case Marker::RequestMem:
    b.CreateCall(api.request, {call->getArgOperand(0),
                               b.CreateZExtOrTrunc(call->getArgOperand(1), b.getInt64Ty())});
    break;
  case Marker::CopyMem:
    b.CreateMemCpy(call->getArgOperand(0), MaybeAlign(), call->getArgOperand(1), MaybeAlign(),
                   call->getArgOperand(2));
    break;
  default:
    return false;
  }
  if (replacement)
    call->replaceAllUsesWith(replacement);
  call->eraseFromParent();
  return true;
}

bool Lowering::lowerRemaining() {
  bool ok = true;
  // Collected first: a wait's buffer checks split its block.
  SmallVector<std::pair<CallInst *, Marker>> calls;
  for (Function &function : module)
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallInst>(&instruction))
          if (Marker marker = classify(*call); marker != Marker::None)
            calls.push_back({call, marker});
  // A function whose section no launch reached: one error, at its first marker.
  SmallPtrSet<Function *, 4> unlaunched;
  for (auto [call, marker] : calls) {
    if (unlaunched.contains(call->getFunction()))
      continue;
    if (marker == Marker::Wait) {
      IRBuilder<> b(call);
      emitWait(b, call->getArgOperand(0));
      call->eraseFromParent();
      continue;
    }
    if (lowerMemoryMarker(call, marker))
      continue;
    if (marker == Marker::IsNonZeroLoop) {
      // A promise that a loop runs at least once: nothing to compile.
      call->eraseFromParent();
      continue;
    }
    ok = false;
    if (llvm::is_contained({Marker::SectionBegin, Marker::SectionEnd, Marker::TaskBegin,
                            Marker::TaskEnd, Marker::ParallelLoop, Marker::Hint},
                           marker)) {
      unlaunched.insert(call->getFunction());
      reporter.error(call, spelling(marker) + ": no __hetero_launch or __hetero_launch_begin "
                                              "reaches this code (a launch names the root "
                                              "function)");
      continue;
    }
    reporter.error(call, spelling(marker) +
                             " is not supported (docs/HeteroCxx.md lists what is)");
  }
  return ok;
}

bool Lowering::run() {
  SmallVector<CallInst *> regions, launches;
  for (Function &function : module)
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallInst>(&instruction)) {
          if (classify(*call) == Marker::LaunchBegin)
            regions.push_back(call);
          else if (classify(*call) == Marker::Launch)
            launches.push_back(call);
        }
  for (CallInst *begin : regions)
    if (!lowerLaunchRegion(begin))
      return false;
  for (CallInst *launch : launches)
    if (!lowerLaunch(launch))
      return false;
  return lowerRemaining();
}

} // namespace hpvm::hetero
