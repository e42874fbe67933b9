//===- Graph.cpp - Hetero-C++ regions to HPVM-C node functions ------------===//
// A function holding a section becomes an internal node: each task and each
// parallel loop nest of the section is outlined (LLVM's CodeExtractor) into
// a node function whose parameters are what the marker declares, and the
// section's function is rebuilt as HPVM-C graph calls: createNodeND (the
// loop nest's trip counts as extents), bindIn for the parent's own inputs,
// an edge where an earlier sibling declared the value as an output, bindOut
// for the parent's outputs. A task's own section makes it an internal node in
// turn. The leaves get __hpvm__hint, __hpvm__attributes and __hpvm__return.
#include "Graph.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

using namespace llvm;

namespace hpvm::hetero {

HPVMCApi::HPVMCApi(Module &module) {
  LLVMContext &c = module.getContext();
  Type *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c), *ptr = PointerType::get(c, 0);
  Type *voidType = Type::getVoidTy(c);
  auto get = [&](StringRef name, Type *result, ArrayRef<Type *> params, bool varargs = false) {
    return module.getOrInsertFunction(name, FunctionType::get(result, params, varargs));
  };
  hint = get("__hpvm__hint", voidType, {i32});
  attributes = get("__hpvm__attributes", voidType, {i32}, true);
  ret = get("__hpvm__return", voidType, {i32}, true);
  createNode = get("__hpvm__createNodeND", ptr, {i32}, true);
  bindIn = get("__hpvm__bindIn", voidType, {ptr, i32, i32, i32});
  bindOut = get("__hpvm__bindOut", voidType, {ptr, i32, i32, i32});
  edge = get("__hpvm__edge", ptr, {ptr, ptr, i32, i32, i32, i32});
  getNode = get("__hpvm__getNode", ptr, {});
  instanceId[0] = get("__hpvm__getNodeInstanceID_x", i64, {ptr});
  instanceId[1] = get("__hpvm__getNodeInstanceID_y", i64, {ptr});
  instanceId[2] = get("__hpvm__getNodeInstanceID_z", i64, {ptr});
  launch = get("__hpvm__launch", ptr, {i32}, true);
  wait = get("__hpvm__wait", voidType, {ptr});
  push = get("__hpvm__push", voidType, {ptr, ptr});
  track = get("llvm_hpvm_track_mem", voidType, {ptr, i64});
  untrack = get("llvm_hpvm_untrack_mem", voidType, {ptr});
  request = get("llvm_hpvm_request_mem", voidType, {ptr, i64});
}

bool passableAs(Type *from, Type *type) {
  return from == type || (from->isPointerTy() && type->isPointerTy()) ||
         ((from->isIntegerTy() || from->isFloatingPointTy()) &&
          (type->isIntegerTy() || type->isFloatingPointTy()) &&
          !(from->isFloatingPointTy() && type->isIntegerTy()));
}

Value *asParameter(IRBuilder<> &b, Value *value, Type *type) {
  Type *from = value->getType();
  if (!passableAs(from, type))
    return nullptr;
  if (from == type || (from->isPointerTy() && type->isPointerTy()))
    return value;
  if (from->isIntegerTy() && type->isIntegerTy())
    return b.CreateSExtOrTrunc(value, type);
  if (from->isFloatingPointTy() && type->isFloatingPointTy())
    return b.CreateFPCast(value, type);
  if (from->isIntegerTy() && type->isFloatingPointTy())
    return b.CreateSIToFP(value, type);
  return nullptr;
}

bool isPure(const Instruction *instruction) {
  return isa<BinaryOperator, UnaryOperator, CastInst, GetElementPtrInst, CmpInst, SelectInst,
             ExtractValueInst, InsertValueInst, FreezeInst>(instruction);
}

Value *Rematerializer::get(Value *value) {
  if (auto known = map.find(value); known != map.end())
    return known->second;
  if (isa<Constant>(value))
    return value; // constants, globals and functions are everyone's
  // The same buffer or number computed again (`a` of an array at each mention).
  for (auto [known, mapped] : map)
    if (sameValue(known, value))
      return map[value] = mapped;
  auto *instruction = dyn_cast<Instruction>(value);
  if (!instruction || !isPure(instruction)) {
    failedOn = value;
    return nullptr;
  }
  Instruction *clone = instruction->clone();
  for (Use &operand : clone->operands()) {
    Value *mapped = get(operand.get());
    if (!mapped) {
      clone->deleteValue();
      return nullptr;
    }
    operand.set(mapped);
  }
  // The line belongs to the other function's subprogram.
  clone->setDebugLoc(DebugLoc());
  b.Insert(clone, instruction->getName());
  map[value] = clone;
  return clone;
}

CallInst *findMarker(Function &function, std::initializer_list<Marker> markers) {
  for (BasicBlock &block : function)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction))
        if (llvm::is_contained(markers, classify(*call)))
          return call;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Regions
//===----------------------------------------------------------------------===//

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

Argument *Lowering::constantInput(Function *function, Constant *value) {
  for (Argument &arg : function->args())
    if (knownConstants.lookup(&arg) == value)
      return &arg;
  return nullptr;
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

//===----------------------------------------------------------------------===//
// Node functions
//===----------------------------------------------------------------------===//

/// The first instruction of `function` that uses `value`, for diagnostics.
static Instruction *firstUse(Value *value) {
  Instruction *first = nullptr;
  for (User *user : value->users())
    if (auto *instruction = dyn_cast<Instruction>(user))
      if (!first || instruction->getDebugLoc())
        first = instruction;
  return first;
}

/// A loop's marker is in the loop's body: what it computes for its arguments
/// (a float promoted to double) moved into the node's code with it.
static bool isComputedIn(Value *value, Function *function) {
  auto *instruction = dyn_cast<Instruction>(value);
  return instruction && instruction->getFunction() == function;
}

/// The values of the parent that `value` stands for: itself, or when the node's
/// code computes it (a loop's marker argument), what that computation reads
/// from the parent (the call's operands of the arguments it uses).
static void parentSources(Value *value, Function *extracted, CallInst *call,
                          SmallVectorImpl<Value *> &sources) {
  if (auto *arg = dyn_cast<Argument>(value); arg && arg->getParent() == extracted) {
    sources.push_back(call->getArgOperand(arg->getArgNo()));
    return;
  }
  if (!isComputedIn(value, extracted)) {
    sources.push_back(value);
    return;
  }
  for (Value *operand : cast<Instruction>(value)->operands())
    parentSources(operand, extracted, call, sources);
}

/// The parameters a node needs for `value` of its parent: itself when the
/// parent can pass it (`bindable`), else the leaves of its pure computation.
static bool addPorts(Value *value, function_ref<bool(Value *)> bindable,
                     SmallVectorImpl<Value *> &ports, DenseMap<Value *, unsigned> &portOf,
                     Value *&failedOn) {
  if (portOf.count(value) || isa<Constant>(value))
    return true;
  if (bindable(value)) {
    portOf[value] = ports.size();
    ports.push_back(value);
    return true;
  }
  auto *instruction = dyn_cast<Instruction>(value);
  if (!instruction || !isPure(instruction)) {
    failedOn = value;
    return false;
  }
  for (Value *operand : instruction->operands())
    if (!addPorts(operand, bindable, ports, portOf, failedOn))
      return false;
  return true;
}

/// Each return of `node` returns its outputs: __hpvm__return(outputs) when
/// `withOutputs` (a leaf; an internal node is rebuilt), then a return of the
/// node's type (its value is __hpvm__return's, never read).
static void rewriteReturns(Function *node, ArrayRef<Value *> outputs, bool withOutputs,
                           FunctionCallee hpvmReturn) {
  Type *result = node->getReturnType();
  for (BasicBlock &block : *node) {
    auto *ret = dyn_cast<ReturnInst>(block.getTerminator());
    if (!ret)
      continue;
    IRBuilder<> b(ret);
    if (withOutputs) {
      SmallVector<Value *> operands{b.getInt32(outputs.size())};
      llvm::append_range(operands, outputs);
      b.CreateCall(hpvmReturn, operands);
    }
    if (result->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(PoisonValue::get(result));
    ret->eraseFromParent();
  }
}

/// The node's parameters: the parent's values it receives (`ports`), and for
/// each declared value the parameter that holds it (`portOf`).
bool Lowering::collectPorts(Function *extracted, CallInst *call, const Declared &declared,
                            ArrayRef<LoopLevel> levels, bool host, StringRef name,
                            Instruction *at, SmallVectorImpl<Value *> &ports,
                            DenseMap<Value *, unsigned> &portOf) {
  Function *parent = call->getFunction();
  auto bindable = [&](Value *value) {
    if (host)
      return !isa<Constant>(value);
    auto *arg = dyn_cast<Argument>(value);
    return arg && arg->getParent() == parent;
  };
  // Each declared input is a parameter when the parent can pass it (pairs
  // stay pointer then size, even when two share a size): the host passes
  // anything; a section its own inputs, among them the constants it was given
  // (`sizeof(int)` declared all the way down keeps the pair whole).
  // An output buffer need not be listed among the inputs: it is one too.
  SmallVector<Value *> declaredValues = declared.flatInputs();
  for (const Item &item : declared.outputs)
    if (llvm::none_of(declaredValues, [&](Value *v) { return sameValue(v, item.value); })) {
      declaredValues.push_back(item.value);
      declaredValues.push_back(item.size);
    }
  for (Value *value : declaredValues) {
    if (isComputedIn(value, extracted))
      continue;
    Value *source = value;
    if (isa<Constant>(value) && !host)
      source = constantInput(parent, cast<Constant>(value));
    else if (!bindable(value) && !(host && isa<Constant>(value)))
      source = nullptr;
    if (!source)
      continue;
    portOf.try_emplace(value, ports.size());
    ports.push_back(source);
  }
  Value *failedOn = nullptr;
  SmallVector<Value *> needed(declaredValues);
  for (const LoopLevel &level : levels)
    needed.push_back(level.start);
  // What the loop's body computes for its marker comes from the parent's values.
  SmallVector<Value *> sources;
  for (Value *value : needed)
    parentSources(value, extracted, call, sources);
  for (Value *value : sources)
    if (!addPorts(value, bindable, ports, portOf, failedOn)) {
      reporter.error(at, "input " + describe(value) + " of '" + name +
                             "' is computed in the section outside any task from " +
                             describe(failedOn) +
                             "; a section passes on only its own inputs");
      return false;
    }
  return true;
}

bool Lowering::makeNode(Function *extracted, CallInst *call, const Declared &declared,
                        ArrayRef<LoopLevel> levels, bool host, StringRef name,
                        CallInst *marker, Child &child) {
  // Where errors point: the marker, or for a loop the call of its body.
  Instruction *at = marker ? static_cast<Instruction *>(marker) : call;
  DenseMap<Value *, unsigned> portOf;
  if (!collectPorts(extracted, call, declared, levels, host, name, at, child.ports, portOf))
    return false;
  SmallVector<Type *> params;
  for (Value *port : child.ports)
    params.push_back(port->getType());
  child.levels.assign(levels.begin(), levels.end());
  child.line = at->getDebugLoc();
  // An output computed at the marker (`a` of a local array, decayed where it is
  // named) went into the extracted code with it: the parent's value is that
  // computation from the call's operands, made again before the call.
  DenseMap<Value *, Value *> fromCall;
  for (unsigned index = 0; index < call->arg_size(); ++index)
    fromCall[extracted->getArg(index)] = call->getArgOperand(index);
  IRBuilder<> before(call);
  Rematerializer inParent{fromCall, before};
  auto parentValue = [&](Value *value) -> Value * {
    auto *instruction = dyn_cast<Instruction>(value);
    auto *argument = dyn_cast<Argument>(value);
    if ((instruction && instruction->getFunction() == extracted) ||
        (argument && argument->getParent() == extracted))
      if (Value *rebuilt = inParent.get(value))
        return rebuilt;
    return value;
  };
  for (const Item &item : declared.outputs) {
    child.outputs.push_back(parentValue(item.value));
    child.outputs.push_back(parentValue(item.size));
  }
  SmallVector<Type *> outputTypes;
  for (Value *output : child.outputs)
    outputTypes.push_back(output->getType());
  Type *result = outputTypes.empty() ? Type::getVoidTy(context)
                                     : StructType::get(context, outputTypes, /*isPacked=*/true);
  Function *node = Function::Create(FunctionType::get(result, params, false),
                                    GlobalValue::InternalLinkage, name, module);
  node->setSubprogram(extracted->getSubprogram());
  extracted->setSubprogram(nullptr);
  for (auto [arg, port] : llvm::zip(node->args(), child.ports)) {
    // The C variable's name where the debug information has it.
    std::string variable = describe(port);
    arg.setName(StringRef(variable).starts_with("'") ? StringRef(variable).drop_front().drop_back()
                                                     : port->getName());
    if (auto *constant = dyn_cast<Constant>(port))
      knownConstants[&arg] = constant;
    else if (auto *from = dyn_cast<Argument>(port); from && knownConstants.count(from))
      knownConstants[&arg] = knownConstants[from];
  }

  BasicBlock *prelude = BasicBlock::Create(context, "entry", node);
  IRBuilder<> b(prelude);
  DenseMap<Value *, Value *> map;
  for (auto [arg, port] : llvm::zip(node->args(), child.ports))
    map.try_emplace(port, &arg);
  Rematerializer remat{map, b};
  // The loop variables of a parallel loop: start + the instance's id.
  if (!levels.empty()) {
    Value *self = b.CreateCall(api.getNode, {}, "self");
    for (auto [dim, level] : llvm::enumerate(levels)) {
      Value *id = b.CreateCall(api.instanceId[dim], {self}, "id");
      Value *start = remat.get(level.start);
      map[level.iv] = b.CreateAdd(b.CreateSExtOrTrunc(id, level.iv->getType()), start,
                                  level.iv->getName());
    }
  }
  // The extracted code's arguments, from the node's.
  SmallVector<Value *> args;
  for (unsigned index = 0; index < call->arg_size(); ++index) {
    Value *mapped = remat.get(call->getArgOperand(index));
    if (!mapped) {
      Value *culprit = remat.failedOn;
      Instruction *use = firstUse(extracted->getArg(index));
      std::string what = isa<AllocaInst>(culprit) ? "local variable " : "";
      reporter.error(use ? use : at,
                     "'" + name + "' uses " + what + describe(culprit) +
                         ", which is not among its declared inputs; list it in the " +
                         (host              ? "__hetero_launch_begin"
                          : levels.empty() ? "__hetero_task_begin"
                                           : "__hetero_parallel_loop") +
                         (isa<PointerType>(culprit->getType()) ? " as a buffer pair" : ""));
      return false;
    }
    args.push_back(mapped);
  }
  SmallVector<Value *> outputs;
  for (Value *output : child.outputs) {
    Value *mapped = remat.get(output);
    if (!mapped) {
      reporter.error(at, "output " + describe(output) + " of '" + name +
                                 "' is not among its inputs");
      return false;
    }
    outputs.push_back(mapped);
  }
  // A section makes an internal node, rebuilt by lowerSection: no return calls.
  bool internal = findMarker(*extracted, {Marker::SectionBegin}) != nullptr;
  // The extracted body follows the prelude; its allocas move to the entry.
  BasicBlock *body = &extracted->getEntryBlock();
  node->splice(node->end(), extracted);
  for (Instruction &instruction : llvm::make_early_inc_range(*body))
    if (auto *alloca = dyn_cast<AllocaInst>(&instruction); alloca && alloca->isStaticAlloca())
      alloca->moveBefore(prelude->end());
  // So do the locals claimLocals moved into the region.
  for (BasicBlock &block : *node)
    for (Instruction &instruction : llvm::make_early_inc_range(block))
      if (auto *alloca = dyn_cast<AllocaInst>(&instruction); alloca && claimed.erase(alloca))
        alloca->moveBefore(prelude->end());
  b.CreateBr(body);
  for (auto [arg, value] : llvm::zip(extracted->args(), args))
    arg.replaceAllUsesWith(value);
  rewriteReturns(node, outputs, /*withOutputs=*/!internal, api.ret);
  call->eraseFromParent();
  extracted->eraseFromParent();
  child.node = node;
  if (internal) {
    child.node = lowerSection(node, outputs);
    return child.node != nullptr;
  }
  if (!checkLeafMarkers(node))
    return false;
  finishLeaf(node, &declared, outputs);
  return privatize(node) && (host || checkInputsOnlyRead(node, child.ports, outputs, name, marker));
}

/// An instruction of the node's code that writes through `pointer` (a store,
/// memset, memcpy or atomic to it or to an address computed from it); calls
/// of other functions are not followed.
static Instruction *writeThrough(Value *pointer) {
  SmallVector<Value *> work{pointer};
  SmallPtrSet<Value *, 16> seen{pointer};
  while (!work.empty()) {
    Value *value = work.pop_back_val();
    for (Use &use : value->uses()) {
      auto *user = dyn_cast<Instruction>(use.getUser());
      if (!user)
        continue;
      if (auto *store = dyn_cast<StoreInst>(user); store && use.getOperandNo() == 1)
        return store;
      if (auto *intrinsic = dyn_cast<AnyMemIntrinsic>(user); intrinsic && use.getOperandNo() == 0)
        return intrinsic;
      if (isa<AtomicRMWInst, AtomicCmpXchgInst>(user) && use.getOperandNo() == 0)
        return user;
      if (isa<GetElementPtrInst, CastInst, PHINode, SelectInst>(user) &&
          user->getType()->isPointerTy() && seen.insert(user).second)
        work.push_back(user);
    }
  }
  return nullptr;
}

/// Whether the node uses `pointer` as its own scratch memory: it reads the buffer
/// back (a load, a copy from it, a call given it), and each such read comes after
/// one of its writes on every path, so that nothing the node computes depends on
/// what the buffer held when the node began. HPVM 2.x's HDC programs keep their
/// update and norm vectors so, declared only as inputs.
static bool usedAsScratch(Value *pointer, Function &node) {
  SmallVector<Instruction *> writes, reads;
  SmallVector<Value *> work{pointer};
  SmallPtrSet<Value *, 16> seen{pointer};
  while (!work.empty()) {
    Value *value = work.pop_back_val();
    for (Use &use : value->uses()) {
      auto *user = dyn_cast<Instruction>(use.getUser());
      if (!user)
        continue;
      // The node's declaration of the buffers it accesses is no access.
      if (auto *call = dyn_cast<CallInst>(user); call && call->getCalledFunction() &&
                                                 call->getCalledFunction()->getName().starts_with(
                                                     "__hpvm__"))
        continue;
      bool written = (isa<StoreInst>(user) && use.getOperandNo() == 1) ||
                     (isa<AnyMemIntrinsic>(user) && use.getOperandNo() == 0) ||
                     (isa<AtomicRMWInst, AtomicCmpXchgInst>(user) && use.getOperandNo() == 0);
      if (written)
        writes.push_back(user);
      else if (isa<GetElementPtrInst, CastInst, PHINode, SelectInst>(user) &&
               user->getType()->isPointerTy()) {
        if (seen.insert(user).second)
          work.push_back(user);
      } else if (!isa<IntrinsicInst>(user) || isa<AnyMemIntrinsic>(user)) {
        reads.push_back(user);
      }
    }
  }
  if (writes.empty() || reads.empty())
    return false;
  DominatorTree tree(node);
  return llvm::all_of(reads, [&](Instruction *read) {
    return llvm::any_of(writes, [&](Instruction *write) {
      return write != read && tree.dominates(write, read);
    });
  });
}

bool Lowering::checkInputsOnlyRead(Function *node, ArrayRef<Value *> ports,
                                   ArrayRef<Value *> outputs, StringRef name, CallInst *marker) {
  for (Argument &arg : node->args()) {
    if (!arg.getType()->isPointerTy() || llvm::is_contained(outputs, &arg))
      continue;
    Instruction *write = writeThrough(&arg);
    if (!write || usedAsScratch(&arg, *node))
      continue;
    // The parent's buffer, for its name: what the parent passes.
    Value *buffer = arg.getArgNo() < ports.size() ? ports[arg.getArgNo()]
                                                  : static_cast<Value *>(&arg);
    reporter.error(write, "'" + name + "' writes " + describe(buffer) +
                              ", which it declares only as an input; a node's writes reach "
                              "the rest of the graph through its outputs: list the buffer "
                              "among the outputs of its " +
                              (marker ? "__hetero_task_begin" : "__hetero_parallel_loop") +
                              " too");
    return false;
  }
  return true;
}

bool Lowering::privatize(Function *node) {
  SmallVector<CallInst *> calls;
  for (BasicBlock &block : *node)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction); call && classify(*call) == Marker::Priv)
        calls.push_back(call);
  if (calls.empty())
    return true;
  LLVMContext &c = node->getContext();
  FunctionCallee malloc = module.getOrInsertFunction(
      "malloc", FunctionType::get(PointerType::get(c, 0), {Type::getInt64Ty(c)}, false));
  FunctionCallee free = module.getOrInsertFunction(
      "free", FunctionType::get(Type::getVoidTy(c), {PointerType::get(c, 0)}, false));
  IRBuilder<> b(&*node->getEntryBlock().getFirstNonPHIOrDbgOrAlloca());
  SmallVector<Value *> copies;
  for (CallInst *call : calls) {
    auto *count = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!count || call->arg_size() != 1 + 2 * count->getZExtValue()) {
      reporter.error(call, "__hetero_priv expects a constant count of buffer pairs, then "
                           "that many pointers each followed by its size");
      return false;
    }
    for (unsigned k = 0; k < count->getZExtValue(); ++k) {
      Value *buffer = call->getArgOperand(1 + 2 * k), *size = call->getArgOperand(2 + 2 * k);
      if (!isa<Argument, Constant>(buffer) || !isa<Argument, Constant>(size) ||
          !buffer->getType()->isPointerTy()) {
        reporter.error(call, "__hetero_priv: buffer " + Twine(k + 1) + " (" + describe(buffer) +
                                 ") must be an input of the parallel loop, with its size");
        return false;
      }
      // The instance's own copy, made from the shared buffer as the instance
      // begins and dropped as it ends; the node's output stays the shared one.
      Value *bytes = b.CreateZExtOrTrunc(size, b.getInt64Ty());
      CallInst *copy = b.CreateCall(malloc, {bytes}, "private");
      b.CreateMemCpy(copy, MaybeAlign(), buffer, MaybeAlign(), bytes);
      buffer->replaceUsesWithIf(copy, [&](Use &use) {
        auto *user = dyn_cast<Instruction>(use.getUser());
        if (!user || user->getFunction() != node || user == copy)
          return false;
        if (auto *memcpy = dyn_cast<MemCpyInst>(user); memcpy && memcpy->getDest() == copy)
          return false;
        // The node's declarations (__hpvm__attributes, __hpvm__return) keep naming
        // the shared buffer.
        auto *other = dyn_cast<CallInst>(user);
        return !(other && other->getCalledFunction() &&
                 other->getCalledFunction()->getName().starts_with("__hpvm__"));
      });
      copies.push_back(copy);
    }
    call->eraseFromParent();
  }
  for (BasicBlock &block : *node)
    if (auto *ret = dyn_cast<ReturnInst>(block.getTerminator()))
      for (Value *copy : copies)
        CallInst::Create(free, {copy}, "", ret->getIterator());
  return true;
}

bool Lowering::checkLeafMarkers(Function *node) {
  CallInst *stray = findMarker(*node, {Marker::TaskBegin, Marker::ParallelLoop,
                                       Marker::SectionEnd, Marker::LaunchBegin});
  if (!stray)
    return true;
  reporter.error(stray, spelling(classify(*stray)) +
                            " outside a section: tasks and parallel loops are the children of "
                            "the __hetero_section_begin / __hetero_section_end around them");
  return false;
}

/// Whether the module was compiled from C++ (its debug information says so).
static bool isCxx(const Module &module) {
  for (const DICompileUnit *unit : module.debug_compile_units()) {
    uint16_t language = unit->getSourceLanguage().getName();
    if (unit->getSourceLanguage().hasVersionedName())
      return language == dwarf::DW_LNAME_C_plus_plus;
    return llvm::is_contained({dwarf::DW_LANG_C_plus_plus, dwarf::DW_LANG_C_plus_plus_03,
                               dwarf::DW_LANG_C_plus_plus_11, dwarf::DW_LANG_C_plus_plus_14,
                               dwarf::DW_LANG_C_plus_plus_17, dwarf::DW_LANG_C_plus_plus_20},
                              language);
  }
  return false;
}

Value *Lowering::hintTarget(CallInst *call) {
  Value *target = call->getArgOperand(0);
  // hetero.h's C++ overload takes a target by name (hpvm::Target); so does C,
  // where a target is an int. In C++, an int is a number of HPVM 2.x's
  // heterocc.h, whose targets were numbered differently from 3 on.
  if (call->getCalledFunction()->getName().starts_with("_Z") || !isCxx(module))
    return target;
  static const std::pair<const char *, int> release[] = {
      {"None", -1},           {"CPU_TARGET", 1},         {"GPU_TARGET", 2},
      {"CUDNN_TARGET", 4},    {"TENSOR_TARGET", 9},      {"CPU_OR_GPU_TARGET", 6},
      {"CPU_OR_SPIR_TARGET", 7}, {"FPGA_TARGET", 8}};
  auto *number = dyn_cast<ConstantInt>(target);
  int64_t value = number ? number->getSExtValue() : -1;
  if (!number || value < 1 || value >= (int64_t)std::size(release)) {
    std::string found = number ? "the number " + std::to_string(value) +
                                     (value == 0 ? " (HPVM 2.x's None: no device)" : "")
                               : describe(target) + ", a value known only when it runs";
    reporter.error(call, "__hetero_hint expects a target: one of hpvm::CPU_TARGET, "
                         "hpvm::GPU_TARGET, ... by name, or a number of HPVM 2.x's "
                         "heterocc.h (1 CPU_TARGET to 7 FPGA_TARGET); found " + found);
    return nullptr;
  }
  return ConstantInt::get(target->getType(), release[value].second);
}

void Lowering::finishLeaf(Function *node, const Declared *declared, ArrayRef<Value *> outputs) {
  IRBuilder<> b(&*node->getEntryBlock().getFirstNonPHIOrDbgOrAlloca());
  Value *hint = nullptr;
  for (BasicBlock &block : *node)
    for (Instruction &instruction : llvm::make_early_inc_range(block))
      if (auto *call = dyn_cast<CallInst>(&instruction); call && classify(*call) == Marker::Hint) {
        hint = hintTarget(call);
        call->eraseFromParent();
      }
  if (hint)
    b.CreateCall(api.hint, {b.CreateZExtOrTrunc(hint, b.getInt32Ty())});
  // Which pointer parameters the leaf reads and writes.
  SmallVector<Value *> ins, outs;
  for (Argument &arg : node->args()) {
    if (!arg.getType()->isPointerTy())
      continue;
    ins.push_back(&arg);
    if (llvm::is_contained(outputs, &arg))
      outs.push_back(&arg);
  }
  SmallVector<Value *> operands{b.getInt32(ins.size())};
  llvm::append_range(operands, ins);
  operands.push_back(b.getInt32(outs.size()));
  llvm::append_range(operands, outs);
  b.CreateCall(api.attributes, operands);
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

/// The count of loops a parallel loop marker declares.
static unsigned count(CallInst *marker) {
  return cast<ConstantInt>(marker->getArgOperand(0))->getZExtValue();
}

/// A task (or a loop nest) inside a loop of its section would run once per
/// iteration as C, once as a node: refused.
bool Lowering::checkNotRepeated(CallInst *marker, unsigned loops) {
  DominatorTree tree(*marker->getFunction());
  LoopInfo info(tree);
  if (info.getLoopDepth(marker->getParent()) <= loops)
    return true;
  reporter.error(marker, (loops ? "this parallel loop nest" : "this task") +
                             Twine(" is inside a loop of its section: as C it runs once per "
                                   "iteration, as a node once; make the loop a "
                                   "__hetero_parallel_loop, or move it into a task"));
  return false;
}

bool Lowering::extractChild(Function *parent, CallInst *marker, Child &child) {
  bool loop = classify(*marker) == Marker::ParallelLoop;
  Declared declared;
  if (!parseDeclared(*marker, loop ? 1 : 0, reporter, declared))
    return false;
  // Unnamed nodes are named after the function they are in (its C++ name).
  std::string name = declared.name;
  if (name.empty()) {
    std::string demangled = llvm::demangle(parent->getName().str());
    name = StringRef(demangled).split('(').first.rsplit("::").second.str();
    if (name.empty())
      name = StringRef(demangled).split('(').first.str();
    name += loop ? "_loop" : "_task";
  }
  SmallVector<BasicBlock *> blocks;
  SmallVector<LoopLevel> levels;
  CallInst *end = nullptr; // the task's end marker, which stays behind
  if (loop) {
    auto *count = dyn_cast<ConstantInt>(marker->getArgOperand(0));
    if (!count || count->getSExtValue() < 1 || count->getSExtValue() > 3) {
      reporter.error(marker, "__hetero_parallel_loop: expects a constant count of 1 to 3 "
                             "enclosing loops first");
      return false;
    }
    if (!loopRegion(marker, count->getZExtValue(), blocks, levels))
      return false;
  } else if (!markedRegion(marker, Marker::TaskEnd, "task", blocks, end)) {
    return false;
  }
  if (!checkNotRepeated(marker, loop ? count(marker) : 0))
    return false;
  CallInst *call = nullptr;
  Function *extracted = extract(blocks, marker, loop ? "parallel loop" : "task", call);
  if (!extracted)
    return false;
  if (end)
    end->eraseFromParent();
  // A loop's marker moved with the body: the call of the body answers for it.
  if (loop) {
    call->setDebugLoc(marker->getDebugLoc());
    marker->eraseFromParent();
    marker = call;
  }
  bool ok = makeNode(extracted, call, declared, levels, /*host=*/false, name,
                     loop ? nullptr : marker, child);
  if (!loop)
    marker->eraseFromParent();
  return ok;
}

bool Lowering::checkSectionCode(Function *function, CallInst *begin) {
  for (BasicBlock &block : *function)
    for (Instruction &instruction : block) {
      if (instruction.isTerminator() || isPure(&instruction) || isa<PHINode>(instruction) ||
          isa<AllocaInst, DbgInfoIntrinsic>(instruction) || instruction.isLifetimeStartOrEnd())
        continue;
      if (auto *call = dyn_cast<CallInst>(&instruction)) {
        Marker marker = classify(*call);
        if (marker == Marker::SectionBegin || marker == Marker::SectionEnd ||
            marker == Marker::Hint)
          continue;
      }
      if (!instruction.mayHaveSideEffects() && instruction.use_empty())
        continue;
      reporter.error(&instruction,
                     "this code is in the section that begins at line " +
                         Twine(begin->getDebugLoc().getLine()) +
                         " but in none of its tasks; a section holds tasks and parallel "
                         "loops only");
      return false;
    }
  return true;
}

Function *Lowering::lowerSection(Function *function, ArrayRef<Value *> outputs) {
  CallInst *begin = findMarker(*function, {Marker::SectionBegin});
  SmallVector<Child> children;
  while (CallInst *marker = findMarker(*function, {Marker::TaskBegin, Marker::ParallelLoop})) {
    Child child;
    if (!extractChild(function, marker, child))
      return nullptr;
    children.push_back(std::move(child));
  }
  if (!checkSectionCode(function, begin))
    return nullptr;
  for (BasicBlock &block : *function)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction);
          call && classify(*call) == Marker::SectionBegin && call != begin) {
        reporter.error(call, "a second section in '" + cName(function) +
                                 "'; a node holds one (nest sections in tasks)");
        return nullptr;
      }
  Value *hint = nullptr;
  for (BasicBlock &block : *function)
    for (Instruction &instruction : block)
      if (auto *call = dyn_cast<CallInst>(&instruction); call && classify(*call) == Marker::Hint)
        if (!(hint = hintTarget(call)))
          return nullptr;
  return buildInternal(function, children, outputs, hint);
}

/// The trip count of `level` as a 64-bit extent, cloned by `remat`: 0 for a
/// loop that does not run, and -1 for one of 2^63 iterations or more, which no
/// extent counts (the runtime refuses a negative extent: the launch's wait
/// stops the program with the node's name, where the sequential loop would run
/// on). Narrower loop variables are widened first, so that their counts never
/// wrap (`int` from INT_MIN to INT_MAX, `unsigned` from 10 to 5).
static Value *tripCount(IRBuilder<> &b, Rematerializer &remat, const LoopLevel &level) {
  Value *bound = remat.get(level.bound);
  Value *start = remat.get(level.start);
  if (!bound || !start)
    return nullptr;
  if (level.ivCast != Instruction::CastOpsEnd)
    start = b.CreateCast(level.ivCast, start, bound->getType());
  Type *i64 = b.getInt64Ty();
  if (bound->getType()->getIntegerBitWidth() < 64) {
    bound = level.isSigned ? b.CreateSExt(bound, i64) : b.CreateZExt(bound, i64);
    start = level.isSigned ? b.CreateSExt(start, i64) : b.CreateZExt(start, i64);
    Value *count = b.CreateSub(bound, start, "count");
    if (level.inclusive)
      count = b.CreateAdd(count, b.getInt64(1));
    Value *empty = b.CreateICmpSLT(count, b.getInt64(0));
    return b.CreateSelect(empty, b.getInt64(0), count, "extent");
  }
  bound = b.CreateTrunc(bound, i64);
  start = b.CreateTrunc(start, i64);
  // Whether the loop runs at all, compared as the loop compares.
  Value *runs =
      level.isSigned
          ? (level.inclusive ? b.CreateICmpSLE(start, bound) : b.CreateICmpSLT(start, bound))
          : (level.inclusive ? b.CreateICmpULE(start, bound) : b.CreateICmpULT(start, bound));
  // bound - start wraps to the right count modulo 2^64; counts of 2^63 and more
  // read as negative.
  Value *count = b.CreateSub(bound, start, "count");
  Value *tooMany = b.CreateICmpSLT(count, b.getInt64(0));
  if (level.inclusive) {
    tooMany = b.CreateOr(tooMany, b.CreateICmpEQ(count, b.getInt64(INT64_MAX)));
    count = b.CreateAdd(count, b.getInt64(1));
  }
  Value *extent = b.CreateSelect(tooMany, b.getInt64(-1), count);
  return b.CreateSelect(runs, extent, b.getInt64(0), "extent");
}

Function *Lowering::buildInternal(Function *function, ArrayRef<Child> children,
                                  ArrayRef<Value *> outputs, Value *hint) {
  SmallVector<Type *> outputTypes;
  for (Value *output : outputs)
    outputTypes.push_back(output->getType());
  Type *result = outputTypes.empty() ? Type::getVoidTy(context)
                                     : StructType::get(context, outputTypes, true);
  Function *node = Function::Create(
      FunctionType::get(result, function->getFunctionType()->params(), false),
      function->getLinkage(), "", module);
  node->takeName(function);
  BasicBlock *entry = BasicBlock::Create(context, "entry", node);
  IRBuilder<> b(entry);
  DenseMap<Value *, Value *> map;
  for (auto [from, to] : llvm::zip(function->args(), node->args())) {
    to.setName(from.getName());
    map[&from] = &to;
  }
  Rematerializer remat{map, b};
  if (hint)
    b.CreateCall(api.hint, {b.CreateZExtOrTrunc(remat.get(hint), b.getInt32Ty())});
  // Values compare as what they are: a parameter always given a constant is it.
  auto same = [&](Value *a, Value *b) {
    auto resolve = [&](Value *v) -> Value * {
      auto *arg = dyn_cast<Argument>(v);
      Constant *constant = arg ? knownConstants.lookup(arg) : nullptr;
      return constant ? constant : v;
    };
    return sameValue(resolve(a), resolve(b));
  };
  SmallVector<Value *> handles;
  for (const Child &child : children) {
    SmallVector<Value *> operands{b.getInt32(child.levels.size()), child.node};
    for (const LoopLevel &level : child.levels) {
      Value *extent = tripCount(b, remat, level);
      if (!extent) {
        reporter.error(child.line.get(), function,
                       "a bound of parallel loop '" + child.node->getName() +
                                     "' depends on " + describe(remat.failedOn) +
                                     ", known only inside the loop nest; the loops must be "
                                     "rectangular, their bounds inputs of the section");
        return nullptr;
      }
      operands.push_back(extent);
    }
    Value *handle = b.CreateCall(api.createNode, operands, child.node->getName());
    // Each port: the latest earlier sibling that outputs the value, else the
    // parent's own input.
    for (auto [port, value] : llvm::enumerate(child.ports)) {
      // Only buffers order siblings: a size or scalar the parent has is bound
      // (two buffers of one size are not a dependence).
      bool fed = !value->getType()->isPointerTy() && isa<Argument>(value);
      if (fed)
        b.CreateCall(api.bindIn, {handle, b.getInt32(cast<Argument>(value)->getArgNo()),
                                  b.getInt32(port), b.getInt32(0)});
      for (size_t s = handles.size(); s-- > 0 && !fed;)
        for (auto [out, produced] : llvm::enumerate(children[s].outputs))
          if (same(produced, value) && !fed) {
            b.CreateCall(api.edge, {handles[s], handle, b.getInt32(1), b.getInt32(out),
                                    b.getInt32(port), b.getInt32(0)});
            fed = true;
          }
      if (!fed)
        b.CreateCall(api.bindIn, {handle, b.getInt32(cast<Argument>(value)->getArgNo()),
                                  b.getInt32(port), b.getInt32(0)});
    }
    handles.push_back(handle);
  }
  for (auto [index, value] : llvm::enumerate(outputs)) {
    bool bound = false;
    for (size_t s = handles.size(); s-- > 0 && !bound;)
      for (auto [out, produced] : llvm::enumerate(children[s].outputs))
        if (same(produced, value) && !bound) {
          b.CreateCall(api.bindOut,
                       {handles[s], b.getInt32(out), b.getInt32(index), b.getInt32(0)});
          bound = true;
        }
    if (!bound) {
      reporter.error(function, "output " + Twine(index / 2 + 1) + " (" + describe(value) +
                                   ") of '" + cName(node) +
                                   "' is not an output of any of its tasks");
      return nullptr;
    }
  }
  if (result->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateRet(PoisonValue::get(result));
  function->replaceAllUsesWith(node);
  function->eraseFromParent();
  // Children whose outputs no sibling and no output of this node reads.
  for (Value *handle : handles)
    pruneUnreadOutputs(cast<CallInst>(handle));
  return node;
}

/// Whether a child's outputs are read: an edge from it or a bindOut of it.
static bool outputsRead(CallInst *handle, HPVMCApi &api) {
  return llvm::any_of(handle->users(), [&](User *user) {
    auto *call = dyn_cast<CallInst>(user);
    if (!call)
      return true;
    Function *callee = call->getCalledFunction();
    return !callee || callee == api.bindOut.getCallee() ||
           (callee == api.edge.getCallee() && call->getArgOperand(0) == handle);
  });
}

void Lowering::pruneUnreadOutputs(CallInst *handle) {
  auto *child = dyn_cast<Function>(handle->getArgOperand(1));
  if (!child || outputsRead(handle, api) || child->getReturnType()->isVoidTy() ||
      llvm::count_if(child->users(), [](User *) { return true; }) != 1)
    return;
  dropOutputs(child);
}

Function *Lowering::dropOutputs(Function *node) {
  if (node->getReturnType()->isVoidTy())
    return node;
  // Outputs exist to order siblings and to pass buffers up; unread, they only
  // keep a leaf from lanes, blocks and contractions (which take leaves with
  // none), so the node returns nothing instead.
  Function *pruned = Function::Create(
      FunctionType::get(Type::getVoidTy(context), node->getFunctionType()->params(), false),
      node->getLinkage(), "");
  module.getFunctionList().insert(node->getIterator(), pruned); // where the node was
  pruned->takeName(node);
  pruned->setSubprogram(node->getSubprogram());
  node->setSubprogram(nullptr);
  pruned->splice(pruned->end(), node);
  for (auto [from, to] : llvm::zip(node->args(), pruned->args())) {
    to.setName(from.getName());
    from.replaceAllUsesWith(&to);
    if (Constant *constant = knownConstants.lookup(&from))
      knownConstants[&to] = constant;
  }
  SmallVector<CallInst *> children;
  for (BasicBlock &block : *pruned)
    for (Instruction &instruction : llvm::make_early_inc_range(block)) {
      if (auto *ret = dyn_cast<ReturnInst>(&instruction)) {
        ReturnInst::Create(context, nullptr, ret->getIterator());
        ret->eraseFromParent();
        continue;
      }
      auto *call = dyn_cast<CallInst>(&instruction);
      Function *callee = call ? call->getCalledFunction() : nullptr;
      if (callee == api.ret.getCallee() || callee == api.bindOut.getCallee())
        call->eraseFromParent();
      else if (callee == api.createNode.getCallee())
        children.push_back(call);
    }
  node->replaceAllUsesWith(pruned);
  for (auto &[key, root] : roots)
    if (root == node)
      root = pruned;
  node->eraseFromParent();
  for (CallInst *handle : children)
    pruneUnreadOutputs(handle);
  return pruned;
}

Function *Lowering::lowerRoot(Function *root, ArrayRef<unsigned> outputs,
                              Instruction *launchedAt) {
  auto key = std::make_pair(root, std::vector<unsigned>(outputs.begin(), outputs.end()));
  if (auto known = roots.find(key); known != roots.end())
    return known->second;
  // Launched again after the first launch made it a node (the launch now
  // names the node function).
  for (auto &[other, node] : roots)
    if (node == root && other.second == key.second)
      return node;
  for (auto &[other, node] : roots)
    if (other.first == root || node == root) {
      reporter.error(launchedAt, "'" + cName(node) +
                                     "' is launched with other outputs elsewhere; a root "
                                     "declares the same outputs at every launch");
      return nullptr;
    }
  SmallVector<Value *> values;
  for (unsigned index : outputs)
    values.push_back(root->getArg(index));
  Function *node = nullptr;
  if (findMarker(*root, {Marker::SectionBegin})) {
    node = lowerSection(root, values);
  } else {
    // A root without a section is one leaf: its code, returning the outputs.
    SmallVector<Type *> types;
    for (Value *value : values)
      types.push_back(value->getType());
    Type *result =
        types.empty() ? Type::getVoidTy(context) : StructType::get(context, types, true);
    node = Function::Create(FunctionType::get(result, root->getFunctionType()->params(), false),
                            root->getLinkage(), "", module);
    node->takeName(root);
    node->setSubprogram(root->getSubprogram());
    root->setSubprogram(nullptr);
    node->splice(node->end(), root);
    SmallVector<Value *> mapped;
    for (auto [from, to] : llvm::zip(root->args(), node->args())) {
      to.setName(from.getName());
      from.replaceAllUsesWith(&to);
    }
    for (unsigned index : outputs)
      mapped.push_back(node->getArg(index));
    rewriteReturns(node, mapped, /*withOutputs=*/true, api.ret);
    root->replaceAllUsesWith(node);
    root->eraseFromParent();
    if (!checkLeafMarkers(node))
      return nullptr;
    finishLeaf(node, nullptr, mapped);
  }
  // The host reads the buffers, not the root's outputs (the wait requests
  // them by the launch's declarations).
  if (node)
    node = dropOutputs(node);
  if (node)
    roots[key] = node;
  return node;
}

} // namespace hpvm::hetero
