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

/// `call(b)` where the buffer pair `item` has memory: a non-null pointer and a
/// size other than 0 (a buffer of 0 bytes has nothing to track or move).
static void unlessEmpty(IRBuilder<> &b, const Item &item,
                        function_ref<void(IRBuilder<> &)> call) {
  auto *constantSize = dyn_cast<ConstantInt>(item.size);
  if (isa<ConstantPointerNull>(item.value) || (constantSize && constantSize->isZero()))
    return;
  Value *present = b.CreateIsNotNull(item.value);
  if (!constantSize)
    present = b.CreateAnd(present, b.CreateIsNotNull(item.size));
  Instruction *then = SplitBlockAndInsertIfThen(present, b.GetInsertPoint(), /*Unreachable=*/false);
  IRBuilder<> tb(then);
  call(tb);
  b.SetInsertPoint(then->getParent()->getSingleSuccessor(),
                   then->getParent()->getSingleSuccessor()->getFirstInsertionPt());
}

/// At run time, before the launch: a buffer pair whose size is negative (as a
/// signed 64-bit count; a size_t made from a negative int is one) stops the
/// program with an error naming the buffer, through the runtime's check (a
/// guarded call gets it back as a status).
static void checkSize(IRBuilder<> &b, Module &module, const Item &item, unsigned number) {
  // `number`: the item's position in the launch's input list (a pair is one).
  Value *size = b.CreateSExtOrTrunc(item.size, b.getInt64Ty());
  if (isa<Constant>(size))
    return; // constants were checked when the launch was parsed
  LLVMContext &context = module.getContext();
  Type *ptr = PointerType::getUnqual(context);
  FunctionCallee create = module.getOrInsertFunction(
      "hpvm_status_create", FunctionType::get(ptr, {b.getInt32Ty(), ptr}, /*isVarArg=*/true));
  FunctionCallee check = module.getOrInsertFunction(
      "hpvm_rt_check_at", FunctionType::get(b.getVoidTy(), {ptr, ptr}, false));
  Instruction *then = SplitBlockAndInsertIfThen(b.CreateICmpSLT(size, b.getInt64(0)),
                                                b.GetInsertPoint(), /*Unreachable=*/false);
  IRBuilder<> tb(then);
  std::string where = position(b.getCurrentDebugLocation().get());
  std::string message = "__hetero_launch: input " + std::to_string(number) + " (" +
                         describe(item.value) +
                         ", a buffer) is given %lld bytes; expected its size in bytes, 0 or more";
  Value *status = tb.CreateCall(
      create, {tb.getInt32(3 /* HPVM_STATUS_INVALID_ARGUMENT */),
               tb.CreateGlobalString(message, "hetero.size.message"), size});
  tb.CreateCall(check, {status, tb.CreateGlobalString(where.empty() ? "__hetero_launch" : where,
                                                      "hetero.size.where")});
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
  unsigned number = 0;
  for (const Item &item : declared.inputs)
    if (++number && item.isPair())
      checkSize(b, module, item, number);
  SmallPtrSet<Value *, 8> tracked;
  for (const Item &item : declared.inputs)
    if (item.isPair() && tracked.insert(item.value).second)
      unlessEmpty(b, item, [&](IRBuilder<> &tb) {
        tb.CreateCall(api.track, {item.value, tb.CreateSExtOrTrunc(item.size, tb.getInt64Ty())});
      });
  // nomerge: launches and waits of different roots in the branches of an `if`
  // stay apart (SimplifyCFG would sink them into one call on a merged handle,
  // whose root the host lowering cannot tell).
  CallInst *launch = b.CreateCall(api.launch, {b.getInt32(0), node, args}, "graph");
  launch->addFnAttr(Attribute::NoMerge);
  return launch;
}

void Lowering::emitWait(IRBuilder<> &b, Value *handle) {
  b.CreateCall(api.wait, {handle})->addFnAttr(Attribute::NoMerge);
  auto known = launched.find(handle);
  if (known == launched.end())
    return;
  for (const Item &item : known->second.outputs)
    unlessEmpty(b, item, [&](IRBuilder<> &tb) {
      tb.CreateCall(api.request, {item.value, tb.CreateSExtOrTrunc(item.size, tb.getInt64Ty())});
    });
  SmallPtrSet<Value *, 8> untracked;
  for (const Item &item : known->second.inputs)
    if (item.isPair() && untracked.insert(item.value).second)
      unlessEmpty(b, item, [&](IRBuilder<> &tb) { tb.CreateCall(api.untrack, {item.value}); });
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

/// Whether `callee` throws a C++ exception itself (a throw expression or a rethrow).
static bool isThrow(const Function *callee) {
  return callee && (callee->getName() == "__cxa_throw" || callee->getName() == "__cxa_rethrow");
}

/// A call in `function` through which a C++ exception leaves it, found in this
/// translation unit: a throw expression not inside a try, or a call of a function
/// defined here from which one leaves; an exception that may pass a handler
/// (a landing pad whose path ends in `resume`) counts. Calls of functions defined
/// elsewhere are not followed. Null when none is found.
static const CallBase *escapingThrow(const Function &function,
                                     DenseMap<const Function *, const CallBase *> &known) {
  if (function.isDeclaration())
    return nullptr;
  auto [it, inserted] = known.try_emplace(&function, nullptr);
  if (!inserted)
    return it->second; // known, or being looked at (a recursion adds nothing)
  bool resumes = false;
  for (const BasicBlock &block : function)
    resumes = resumes || isa<ResumeInst>(block.getTerminator());
  const CallBase *found = nullptr;
  for (const BasicBlock &block : function)
    for (const Instruction &instruction : block) {
      const auto *call = dyn_cast<CallBase>(&instruction);
      const Function *callee = call ? call->getCalledFunction() : nullptr;
      if (found || !callee || (isa<InvokeInst>(call) && !resumes))
        continue;
      if (isThrow(callee) || escapingThrow(*callee, known))
        found = call;
    }
  known[&function] = found;
  return found;
}

/// An error at the throw expression from which a C++ exception would leave the
/// graph of `root` (launched at `launch`): nodes run on the runtime's threads,
/// apart from the host code that launched them, so an exception cannot reach the
/// launch's caller (and __hetero_launch is noexcept).
static bool checkNoEscapingThrow(Function *root, Instruction *launch, Reporter &reporter) {
  DenseMap<const Function *, const CallBase *> known;
  const CallBase *call = escapingThrow(*root, known);
  if (!call)
    return true;
  // Down to the throw expression itself, naming the functions on the way.
  std::string path = "'" + cName(root) + "'";
  while (!isThrow(call->getCalledFunction())) {
    const Function *callee = call->getCalledFunction();
    path += " -> '" + cName(callee) + "'";
    call = known.lookup(callee);
  }
  reporter.error(call, "a C++ exception thrown here leaves the graph launched at line " +
                           Twine(launch->getDebugLoc() ? launch->getDebugLoc().getLine() : 0) +
                           " (through " + path +
                           "); an exception cannot leave a node: nodes run on the runtime's "
                           "threads, apart from the launch's caller, and __hetero_launch is "
                           "noexcept; catch it where it is thrown, or pass the failure on in an "
                           "output buffer");
  return false;
}

/// The first exception handling code (a landing pad: a try/catch, or the cleanup of
/// an object with a destructor around a call that may throw) in `function` or in the
/// functions of this file it calls; `path` names the functions down to it.
static const Instruction *exceptionHandling(const Function &function,
                                            SmallPtrSetImpl<const Function *> &seen,
                                            std::string &path, bool top) {
  if (function.isDeclaration() || !seen.insert(&function).second)
    return nullptr;
  // The root's own tasks have their own error (markedRegion: "exception cleanup code").
  for (const BasicBlock &block : function)
    if (block.isLandingPad() && !top)
      return block.getFirstNonPHIIt() != block.end() ? &*block.getFirstNonPHIIt() : nullptr;
  for (const BasicBlock &block : function)
    for (const Instruction &instruction : block)
      if (const auto *call = dyn_cast<CallBase>(&instruction))
        if (const Function *callee = call->getCalledFunction())
          if (const Instruction *found = exceptionHandling(*callee, seen, path, false)) {
            path = " -> '" + cName(callee) + "'" + path;
            return found;
          }
  return nullptr;
}

/// The graph's code is compiled without exception tables (a node's function has no
/// personality): exception handling in the functions its nodes call is refused where it
/// is, rather than failing later without a source line. Found before the root is
/// lowered (which replaces it), reported after (the tasks' own exception code has its
/// own error: markedRegion). Null when there is none.
struct ExceptionHandling {
  const Instruction *at = nullptr;
  std::string message;
};
static ExceptionHandling findExceptionHandling(Function *root, Instruction *launch) {
  SmallPtrSet<const Function *, 16> seen;
  std::string path;
  ExceptionHandling found;
  found.at = exceptionHandling(*root, seen, path, /*top=*/true);
  if (found.at)
    found.message =
        ("the graph launched at line " +
         Twine(launch->getDebugLoc() ? launch->getDebugLoc().getLine() : 0) +
         " runs code with exception handling here (through '" + cName(root) + "'" + path +
         "): a try/catch, or the cleanup of an object with a destructor around a call that "
         "may throw; the code of nodes is compiled without exception tables: keep the try in "
         "host code, make the callees noexcept, or compile with -fno-exceptions")
            .str();
  return found;
}

bool Lowering::parseLaunch(CallInst *launch, Function *&root, Declared &declared,
                           SmallVectorImpl<Value *> &values) {
  root = dyn_cast<Function>(launch->getArgOperand(0)->stripPointerCasts());
  if (!root) {
    reporter.error(launch, "__hetero_launch expects the root function as its first argument");
    return false;
  }
  // The graph runs while the host goes on; only its wait brings the outputs back (without one,
  // the program read them before the graph wrote them: a wrong result, silently).
  if (launch->use_empty()) {
    reporter.error(launch, "the graph launched here is never waited for: __hetero_launch "
                           "returns a handle, and __hetero_wait(handle) is where the outputs "
                           "are ready; expected a wait, found the handle unused");
    return false;
  }
  if (!parseDeclared(*launch, 1, reporter, declared))
    return false;
  unsigned number = 0;
  for (const Item &item : declared.inputs) {
    ++number;
    if (!item.isPair())
      continue;
    if (auto *size = dyn_cast<ConstantInt>(item.size);
        size && size->getBitWidth() <= 64 && size->getSExtValue() < 0) {
      reporter.error(launch, "input " + Twine(number) + " (" + describe(item.value) +
                                 ", a buffer) of the launch is given " +
                                 Twine(size->getSExtValue()) +
                                 " bytes; expected its size in bytes, 0 or more");
      return false;
    }
  }
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
  return checkNoEscapingThrow(root, launch, reporter);
}

bool Lowering::lowerLaunch(CallInst *launch) {
  Function *root = nullptr;
  Declared declared;
  SmallVector<Value *> values;
  if (!parseLaunch(launch, root, declared, values))
    return false;
  if (root->isDeclaration()) {
    reporter.error(launch, "the root '" + cName(root) + "' of this launch is not defined in "
                           "this file; a graph is compiled with its launch: give hpvm-cc the "
                           "file that defines it in the same command (hpvm-cc graph.cpp "
                           "host.cpp -o prog), not apart with -c");
    return false;
  }
  ExceptionHandling handling = findExceptionHandling(root, launch);
  SmallVector<unsigned> outputs;
  if (!outputArguments(declared, values, outputs, reporter, launch))
    return false;
  Function *node = lowerRoot(root, outputs, launch);
  if (!node)
    return false;
  if (handling.at) {
    reporter.error(handling.at, handling.message);
    return false;
  }
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
  if (!extracted || !checkNoEscapingThrow(extracted, begin, reporter))
    return false;
  ExceptionHandling handling = findExceptionHandling(extracted, begin);
  std::string name = declared.name.empty() ? cName(begin->getFunction()) + "_root"
                                           : declared.name;
  Child child;
  IRBuilder<> b(call);
  // The call's position survives the outlining into a node: launch there.
  Instruction *marker = b.CreateCall(api.wait, {PoisonValue::get(b.getPtrTy())});
  if (!makeNode(extracted, call, declared, {}, /*host=*/true, name, begin, child))
    return false;
  if (handling.at) {
    reporter.error(handling.at, handling.message);
    return false;
  }
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

/// Whether `call` lies between `begin` and the end marker that takes its value
/// (blocks reached from `begin` without passing the end; `call` after `begin`
/// in its block, before the end in the end's).
static bool insideRegion(CallInst *call, CallInst *begin, Marker endMarker) {
  CallInst *end = nullptr;
  for (User *user : begin->users())
    if (auto *candidate = dyn_cast<CallInst>(user); candidate && classify(*candidate) == endMarker)
      end = end ? end : candidate;
  if (!end || call->getFunction() != begin->getFunction())
    return false;
  BasicBlock *from = begin->getParent(), *to = end->getParent(), *at = call->getParent();
  if (from == to && begin->comesBefore(end)) // a region within one block
    return at == from && begin->comesBefore(call) && call->comesBefore(end);
  if (at == from && begin->comesBefore(call))
    return true;
  SmallVector<BasicBlock *> work{from};
  SmallPtrSet<BasicBlock *, 16> seen{from};
  while (!work.empty()) {
    BasicBlock *block = work.pop_back_val();
    for (BasicBlock *next : successors(block)) {
      if (!seen.insert(next).second)
        continue;
      if (next == at)
        return next != to || call->comesBefore(end);
      if (next != to)
        work.push_back(next);
    }
  }
  return false;
}

/// A launch in the code of a node (a task, a parallel loop, a launched region)
/// or of a function holding a section is an error: nodes run on the runtime's
/// threads and describe graphs; they do not launch them.
static bool checkLaunchesInHostCode(Module &module, Reporter &reporter) {
  bool ok = true;
  for (Function &function : module) {
    SmallVector<CallInst *> launches, begins;
    CallInst *section = nullptr;
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallInst>(&instruction)) {
          Marker marker = classify(*call);
          if (marker == Marker::Launch || marker == Marker::LaunchBegin)
            launches.push_back(call);
          if (marker == Marker::LaunchBegin || marker == Marker::TaskBegin)
            begins.push_back(call);
          if (marker == Marker::SectionBegin && !section)
            section = call;
        }
    // A section in a launched region is that region's graph, not the function's.
    if (section && llvm::any_of(begins, [&](CallInst *begin) {
          return classify(*begin) == Marker::LaunchBegin &&
                 insideRegion(section, begin, Marker::LaunchEnd);
        }))
      section = nullptr;
    for (CallInst *launch : launches) {
      CallInst *inside = nullptr;
      for (CallInst *begin : begins)
        if (begin != launch &&
            insideRegion(launch, begin,
                         classify(*begin) == Marker::TaskBegin ? Marker::TaskEnd
                                                               : Marker::LaunchEnd))
          inside = inside ? inside : begin;
      std::string what;
      if (inside)
        what = std::string(classify(*inside) == Marker::TaskBegin ? "the task"
                                                                  : "the launched region") +
               " that begins at line " +
               std::to_string(inside->getDebugLoc() ? inside->getDebugLoc().getLine() : 0);
      else if (section)
        what = "'" + cName(&function) + "', which holds the section that begins at line " +
               std::to_string(section->getDebugLoc() ? section->getDebugLoc().getLine() : 0);
      if (what.empty())
        continue;
      reporter.error(launch, spelling(classify(*launch)) + " inside " + what +
                                 ": a graph's code cannot launch a graph (its nodes run on the "
                                 "runtime's threads); launch from host code");
      ok = false;
    }
  }
  return ok;
}

bool Lowering::run() {
  if (!checkLaunchesInHostCode(module, reporter))
    return false;
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
