//===- HeteroCxx.cpp - Hetero-C++ to HPVM-C: the entry points -------------===//
// Promotes the locals of the functions that use markers to SSA values (clang's
// unoptimized IR keeps every variable in memory: a task's inputs must be the
// values the markers name), then lowers sections, tasks, parallel loops and
// launches (Graph.cpp, Host.cpp), and verifies the module.
#include "HPVM/Frontend/HeteroCxx.h"

#include "HPVM/Frontend/CheckedArithmetic.h"
#include "HPVM/HPVMC/ApiNames.h"

#include "Graph.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/InstructionSimplify.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/IR/DebugProgramInstruction.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace llvm;

namespace hpvm {

bool usesHeteroCxx(const Module &module) {
  for (const Function &function : module)
    if (function.isDeclaration() && hetero::markerNamed(function.getName()) != hetero::Marker::None)
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

/// UBSan's check of a loop variable's increment (hpvm-cc -fsanitize=undefined makes `++i` an
/// overflow-checked add whose flag branches to a handler) as the plain increment, so that the
/// loop keeps clang's shape for the parallel loops' analysis. The check can never fire in a
/// loop the lowering accepts: in `for (i = a; i < b; ++i)` the increment follows a passed
/// test, so i + 1 <= b. Other checks stay.
static void foldCheckedIncrements(Function &function) {
  SmallVector<WithOverflowInst *> increments;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block) {
      auto *checked = dyn_cast<WithOverflowInst>(&instruction);
      if (!checked || checked->getBinaryOp() != Instruction::Add)
        continue;
      auto *phi = dyn_cast<PHINode>(checked->getLHS());
      auto *one = dyn_cast<ConstantInt>(checked->getRHS());
      bool feedsPhi = phi && llvm::any_of(checked->users(), [&](User *user) {
                        return llvm::is_contained(phi->incoming_values(), user);
                      });
      if (one && one->isOne() && feedsPhi && mlir::hpvm::isOnlyExtracted(checked))
        increments.push_back(checked);
    }
  for (WithOverflowInst *checked : increments) {
    BinaryOperator *plain = mlir::hpvm::uncheckOperation(checked);
    // The branch on the (now constant) flag goes; the handler with it; the increment's block
    // and the one after the check are one again (clang's `for.inc`).
    BasicBlock *block = plain->getParent();
    for (Instruction &instruction : llvm::make_early_inc_range(*block))
      if (Value *folded = simplifyInstruction(&instruction, function.getDataLayout())) {
        instruction.replaceAllUsesWith(folded);
        if (isInstructionTriviallyDead(&instruction))
          instruction.eraseFromParent();
      }
    ConstantFoldTerminator(block, /*DeleteDeadConditions=*/true);
    removeUnreachableBlocks(function);
    if (BasicBlock *next = block->getUniqueSuccessor(); next && next->getSinglePredecessor())
      MergeBlockIntoPredecessor(next);
  }
}

/// A function holding a section called from another node's code (a task that
/// calls it): the section is that task's graph, so the call is inlined. A
/// function that reaches itself that way is an error.
static bool inlineCalledSections(Module &module, hetero::Reporter &reporter) {
  SmallPtrSet<Function *, 8> inlined;
  for (unsigned round = 0;; ++round) {
    SmallVector<CallBase *> calls;
    for (Function &function : module) {
      // A section inside a launch region is the host's graph, not the function's.
      if (function.isDeclaration() ||
          !hetero::findMarker(function, {hetero::Marker::SectionBegin}) ||
          hetero::findMarker(function, {hetero::Marker::LaunchBegin}))
        continue;
      for (User *user : function.users())
        if (auto *call = dyn_cast<CallBase>(user); call && call->getCalledFunction() == &function)
          calls.push_back(call);
    }
    if (calls.empty())
      break;
    if (round == 16) {
      reporter.error(calls.front(), "'" + hetero::cName(calls.front()->getCalledFunction()) +
                                        "' holds a section and calls itself (directly or not); "
                                        "a graph cannot contain itself");
      return false;
    }
    for (CallBase *call : calls) {
      InlineFunctionInfo info;
      Function *callee = call->getCalledFunction();
      if (!InlineFunction(*call, info).isSuccess()) {
        reporter.error(call, "'" + hetero::cName(callee) +
                                 "' holds a section and cannot be inlined where it is called");
        return false;
      }
      inlined.insert(callee);
    }
  }
  // What was inlined everywhere: gone when local, else plain code for callers
  // elsewhere (which call it as a function, not as a graph).
  for (Function *function : inlined) {
    if (!function->use_empty())
      continue;
    if (function->hasLocalLinkage())
      function->eraseFromParent();
    else
      hetero::stripSectionMarkers(*function);
  }
  return true;
}

/// The EPOCHS scheduler's annotation of a task, `__hpvm__task(TASK_TYPE, function)`
/// (IBM's scheduler-library HPVM: which task of its task library a node is, for its
/// scheduler to map onto accelerators). hpvm-cc has no EPOCHS scheduler: the call goes,
/// in both builds, with a warning at its line, and the task runs its own code.
static void dropEpochsTasks(Module &module, hetero::Reporter &reporter) {
  auto isEpochsTask = [](const Function *callee) {
    if (!callee || !callee->isDeclaration() || !callee->getName().contains("__hpvm__task"))
      return false;
    std::string name = callee->getName().str();
    if (StringRef(name).starts_with("_Z"))
      name = StringRef(llvm::demangle(name)).split('(').first.str();
    return name == "__hpvm__task";
  };
  SmallVector<CallInst *> calls; // in the order of the source, for the warnings
  for (Function &function : module)
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallInst>(&instruction);
            call && isEpochsTask(call->getCalledFunction()))
          calls.push_back(call);
  for (CallInst *call : calls) {
    reporter.warning(call, "'__hpvm__task' (the EPOCHS scheduler's task type of this task) "
                           "is ignored: hpvm-cc has no EPOCHS scheduler, and the task runs "
                           "its own code on the device its hint names (else the CPU)");
    call->eraseFromParent();
  }
}

/// The HDC stage markers and loops of hdc.h (`__hetero_hdc_encoding`,
/// `__hetero_hdc_inference_loop`, ...; always_inline templates) inlined where they are
/// called, in both builds: the function they are given is then a constant there, the
/// root of the launches they make or a call a task makes. Their own definitions go:
/// their launches' roots are parameters.
static void inlineHdcHelpers(Module &module) {
  auto isHelper = [](const Function &function) {
    return !function.isDeclaration() && function.hasFnAttribute(Attribute::AlwaysInline) &&
           function.getName().contains("__hetero_hdc_");
  };
  SmallPtrSet<Function *, 8> callers;
  SmallPtrSet<Function *, 8> helpers;
  for (unsigned round = 0; round < 64; ++round) { // one level of helpers per round
    SmallVector<CallBase *> calls;
    for (Function &function : module)
      if (isHelper(function)) {
        helpers.insert(&function);
        for (User *user : function.users())
          if (auto *call = dyn_cast<CallBase>(user);
              call && call->getCalledFunction() == &function && !isHelper(*call->getFunction()))
            calls.push_back(call);
      }
    if (calls.empty())
      break;
    for (CallBase *call : calls) {
      Function *caller = call->getFunction();
      InlineFunctionInfo info;
      if (InlineFunction(*call, info).isSuccess())
        callers.insert(caller);
    }
  }
  // The function a stage marker calls, loaded from the inlined parameter's slot, is
  // the constant itself once the slot is promoted.
  for (Function *caller : callers)
    promoteLocals(*caller);
  // A helper used only by another helper goes after it: until none is left unused.
  SmallVector<Function *> pending(helpers.begin(), helpers.end());
  for (bool erased = true; erased;) {
    erased = false;
    for (Function *&helper : pending)
      if (helper && helper->use_empty() && helper->isDiscardableIfUnused()) {
        helper->eraseFromParent();
        helper = nullptr;
        erased = true;
      }
  }
}

/// The functions whose code runs on a device: the leaves hinted to another target than
/// the CPU (their __hpvm__hint, after the lowering) and every function they call.
static SmallPtrSet<Function *, 16> offCpuCode(Module &module) {
  SmallVector<Function *> work;
  if (Function *hint = module.getFunction(hpvmc_api::Hint))
    for (User *user : hint->users())
      if (auto *call = dyn_cast<CallInst>(user)) {
        auto *target = dyn_cast<ConstantInt>(call->getArgOperand(0));
        if (!target || target->getZExtValue() != 1) // 1: CPU_TARGET
          work.push_back(call->getFunction());
      }
  SmallPtrSet<Function *, 16> code(work.begin(), work.end());
  while (!work.empty()) {
    Function *function = work.pop_back_val();
    for (BasicBlock &block : *function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallBase>(&instruction))
          if (Function *callee = call->getCalledFunction();
              callee && !callee->isDeclaration() && code.insert(callee).second)
            work.push_back(callee);
  }
  return code;
}

/// The debug records of `function` that describe a variable as a function (the rows' body
/// of an intrinsic inlined there) describe it as optimized out: a kernel may refer to no
/// function, not even in its debug information.
static void forgetFunctionsInDebugInfo(Function &function) {
  for (BasicBlock &block : function)
    for (Instruction &instruction : block)
      for (DbgVariableRecord &record : filterDbgVars(instruction.getDbgRecordRange()))
        if (llvm::any_of(record.location_ops(), [](Value *v) { return isa<Function>(v); }))
          record.setKillLocation();
}

/// hdc.h's `__hetero_hdc_rows(count, body, context)`: the rows of a long intrinsic. In the
/// graph build, in host code and CPU nodes, they run on the runtime's threads:
/// `hpvm_rt_parallel_for(1, &count, range, &{body, context})`, where `range` calls
/// `body(context, begin, end)` for each box of rows (and, should the runtime refuse,
/// `body(context, 0, count)` runs them all here). In the sequential build and in code that
/// runs on a device, `body(context, 0, count)`.
static void lowerHdcRows(Module &module, bool sequential) {
  Function *marker = module.getFunction("__hetero_hdc_rows");
  if (!marker)
    return;
  LLVMContext &context = module.getContext();
  Type *ptr = PointerType::getUnqual(context);
  Type *i64 = Type::getInt64Ty(context);
  FunctionType *bodyType = FunctionType::get(Type::getVoidTy(context), {ptr, i64, i64}, false);
  SmallPtrSet<Function *, 16> device = offCpuCode(module);
  Function *range = nullptr;
  for (User *user : llvm::make_early_inc_range(marker->users())) {
    auto *call = dyn_cast<CallInst>(user);
    if (!call || call->getCalledFunction() != marker)
      continue;
    IRBuilder<> b(call);
    Value *count = b.CreateZExtOrTrunc(call->getArgOperand(0), i64);
    Value *body = call->getArgOperand(1), *data = call->getArgOperand(2);
    if (sequential || device.contains(call->getFunction())) {
      // Inlined: the rows' loop in the code as the intrinsic's was (a kernel's context
      // then stays in its private memory, which the optimizer takes apart).
      CallInst *rows = b.CreateCall(bodyType, body, {data, b.getInt64(0), count});
      call->eraseFromParent();
      InlineFunctionInfo info;
      if (isa<Function>(body))
        (void)InlineFunction(*rows, info);
      continue;
    }
    if (!range) {
      // range(job, box): job->body(job->context, box->begin[0], box->end[0]).
      range = Function::Create(FunctionType::get(Type::getVoidTy(context), {ptr, ptr}, false),
                               GlobalValue::InternalLinkage, "__hpvm_hdc_rows_range", module);
      IRBuilder<> r(BasicBlock::Create(context, "entry", range));
      Value *job = range->getArg(0), *box = range->getArg(1);
      Value *rowsBody = r.CreateLoad(ptr, job);
      Value *rowsData = r.CreateLoad(ptr, r.CreateConstGEP1_64(r.getInt8Ty(), job, 8));
      Value *begin = r.CreateLoad(i64, box);
      Value *end = r.CreateLoad(i64, r.CreateConstGEP1_64(r.getInt8Ty(), box, 24));
      r.CreateCall(bodyType, rowsBody, {rowsData, begin, end});
      r.CreateRetVoid();
    }
    FunctionCallee parallelFor = module.getOrInsertFunction(
        "hpvm_rt_parallel_for", FunctionType::get(ptr, {b.getInt32Ty(), ptr, ptr, ptr}, false));
    FunctionCallee statusFree = module.getOrInsertFunction(
        "hpvm_status_free", FunctionType::get(Type::getVoidTy(context), {ptr}, false));
    IRBuilder<> entry(&*call->getFunction()->getEntryBlock().getFirstInsertionPt());
    Value *extent = entry.CreateAlloca(i64, nullptr, "rows.extent");
    Value *job = entry.CreateAlloca(ArrayType::get(ptr, 2), nullptr, "rows.job");
    b.CreateStore(count, extent);
    b.CreateStore(body, job);
    b.CreateStore(data, b.CreateConstGEP1_64(b.getInt8Ty(), job, 8));
    Value *status = b.CreateCall(parallelFor, {b.getInt32(1), extent, range, job});
    Instruction *refused = SplitBlockAndInsertIfThen(b.CreateIsNotNull(status), call, false);
    b.SetInsertPoint(refused);
    b.CreateCall(statusFree, {status});
    b.CreateCall(bodyType, body, {data, b.getInt64(0), count});
    call->eraseFromParent();
  }
  if (marker->use_empty())
    marker->eraseFromParent();
  for (Function *function : device)
    forgetFunctionsInDebugInfo(*function);
}

/// Each section begin has its end, and each section or task end takes the value
/// of a begin of its kind (in both builds: the sequential one drops the markers,
/// and would accept a program the graph build refuses).
static bool checkMarkerPairs(Module &module, hetero::Reporter &reporter) {
  using hetero::Marker;
  bool ok = true;
  for (Function &function : module)
    for (BasicBlock &block : function)
      for (Instruction &instruction : block) {
        auto *call = dyn_cast<CallInst>(&instruction);
        if (!call)
          continue;
        Marker marker = hetero::classify(*call);
        if (marker == Marker::SectionBegin) {
          bool ended = llvm::any_of(call->users(), [](User *user) {
            auto *end = dyn_cast<CallInst>(user);
            return end && hetero::classify(*end) == Marker::SectionEnd;
          });
          if (!ended) {
            reporter.error(call, "this section has no __hetero_section_end (expected a "
                                 "__hetero_section_end that takes the value this "
                                 "__hetero_section_begin returns, found none)");
            ok = false;
          }
        } else if ((marker == Marker::SectionEnd || marker == Marker::TaskEnd) &&
                   call->arg_size() >= 1) {
          Marker begin = marker == Marker::SectionEnd ? Marker::SectionBegin : Marker::TaskBegin;
          auto *from = dyn_cast<CallInst>(call->getArgOperand(0)->stripPointerCasts());
          if (!from || hetero::classify(*from) != begin) {
            reporter.error(call, hetero::spelling(marker) + " expects the value " +
                                     hetero::spelling(begin) + " returned; found " +
                                     (isa<Constant>(call->getArgOperand(0))
                                          ? std::string("a constant")
                                          : hetero::describe(call->getArgOperand(0))));
            ok = false;
          }
        }
      }
  return ok;
}

/// What a begin marker opens, for diagnostics.
static std::string opened(const CallInst *begin) {
  hetero::Marker marker = hetero::classify(*begin);
  return (marker == hetero::Marker::SectionBegin ? "the section"
          : marker == hetero::Marker::TaskBegin  ? "the task"
                                                 : "the launched region") +
         std::string(" that begins at line ") + std::to_string(begin->getDebugLoc().getLine());
}

/// The regions of one function nest as the source writes them (blocks in
/// clang's order, which is the source's): an end marker ends the innermost
/// open region, once; a task or parallel loop after the end of the section
/// around it is outside it.
static bool checkNesting(Function &function, hetero::Reporter &reporter) {
  using hetero::Marker;
  SmallVector<CallInst *> open;
  DenseMap<CallInst *, CallInst *> endOf;
  CallInst *lastSection = nullptr;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block) {
      auto *call = dyn_cast<CallInst>(&instruction);
      Marker marker = call ? hetero::classify(*call) : Marker::None;
      if ((marker == Marker::TaskBegin || marker == Marker::ParallelLoop) && lastSection &&
          llvm::none_of(open, [](CallInst *begin) {
            return hetero::classify(*begin) == Marker::SectionBegin;
          })) {
        reporter.error(call, hetero::spelling(marker) + " after the end of " +
                                 opened(lastSection) + " (line " +
                                 Twine(endOf[lastSection]->getDebugLoc().getLine()) +
                                 "); tasks and parallel loops are children of the section "
                                 "around them");
        return false;
      }
      if (marker == Marker::SectionBegin || marker == Marker::TaskBegin ||
          marker == Marker::LaunchBegin) {
        // One without an end is reported where the lowering looks for it.
        if (llvm::any_of(call->users(), [](User *user) {
              auto *end = dyn_cast<CallInst>(user);
              Marker kind = end ? hetero::classify(*end) : Marker::None;
              return kind == Marker::SectionEnd || kind == Marker::TaskEnd ||
                     kind == Marker::LaunchEnd;
            }))
          open.push_back(call);
        continue;
      }
      if (marker != Marker::SectionEnd && marker != Marker::TaskEnd &&
          marker != Marker::LaunchEnd)
        continue;
      auto *begin = dyn_cast<CallInst>(call->getArgOperand(0)->stripPointerCasts());
      if (!begin)
        continue;
      if (CallInst *first = endOf.lookup(begin)) {
        reporter.error(call, "a second " + hetero::spelling(marker) + " of " + opened(begin) +
                                 " (it ended at line " +
                                 Twine(first->getDebugLoc().getLine()) +
                                 "); each begin marker has one end");
        return false;
      }
      auto at = llvm::find(open, begin);
      if (at == open.end())
        continue;
      if (at + 1 != open.end()) {
        reporter.error(call, hetero::spelling(marker) + " ends " + opened(begin) + " while " +
                                 opened(open.back()) + ", inside it, is still open; end "
                                 "that one first (sections and tasks nest)");
        return false;
      }
      open.pop_back();
      endOf[begin] = call;
      if (marker == Marker::SectionEnd)
        lastSection = begin;
    }
  return true;
}

bool lowerHeteroCxx(Module &module, function_ref<void(StringRef)> report,
                    HeteroCxxOptions options) {
  bool sequential = options.sequential;
  hetero::Reporter reporter(report);
  dropEpochsTasks(module, reporter);
  inlineHdcHelpers(module);
  if (!sequential && !inlineCalledSections(module, reporter))
    return false;
  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    bool marked = false;
    for (BasicBlock &block : function)
      for (Instruction &instruction : block)
        if (auto *call = dyn_cast<CallBase>(&instruction))
          marked = marked || hetero::classify(*call) != hetero::Marker::None;
    if (marked) {
      promoteLocals(function);
      // Blocks clang leaves after a call that does not return (`assert`'s failure): their
      // edges into a loop's body would give it a second entry.
      removeUnreachableBlocks(function);
      foldCheckedIncrements(function);
    }
  }
  if (!checkMarkerPairs(module, reporter))
    return false;
  for (Function &function : module)
    if (!function.isDeclaration() && !checkNesting(function, reporter))
      return false;
  hetero::Lowering lowering(module, reporter, options.streaming);
  if (!(sequential ? lowering.runSequential() : lowering.run()) || reporter.failed())
    return false;
  lowerHdcRows(module, sequential);
  // The markers' declarations go with their last calls.
  for (Function &function : llvm::make_early_inc_range(module))
    if (function.isDeclaration() && function.use_empty() &&
        hetero::markerNamed(function.getName()) != hetero::Marker::None)
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
