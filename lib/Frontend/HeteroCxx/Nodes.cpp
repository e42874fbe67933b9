//===- Nodes.cpp - Outlined code as HPVM-C node functions ------------------===//
// An outlined task or loop body becomes a node function: its parameters are
// the parent's values it receives (ports), its outputs returned through
// __hpvm__return; a leaf gets its hint and attributes, and __hetero_priv
// buffers become each instance's own copies.
#include "Graph.h"

#include "HPVM/HPVMC/ApiNames.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace hpvm::hetero {

Argument *Lowering::constantInput(Function *function, Constant *value) {
  for (Argument &arg : function->args())
    if (knownConstants.lookup(&arg) == value)
      return &arg;
  return nullptr;
}

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

void rewriteReturns(Function *node, ArrayRef<Value *> outputs, bool withOutputs,
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
                 other->getCalledFunction()->getName().starts_with(hpvmc_api::Prefix));
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

} // namespace hpvm::hetero
