//===- Graph.cpp - Hetero-C++ sections to HPVM-C graphs -------------------===//
// A function holding a section becomes an internal node: each task and each
// parallel loop nest of the section is outlined (LLVM's CodeExtractor) into
// a node function whose parameters are what the marker declares, and the
// section's function is rebuilt as HPVM-C graph calls: createNodeND (the
// loop nest's trip counts as extents), bindIn for the parent's own inputs,
// an edge where an earlier sibling declared the value as an output, bindOut
// for the parent's outputs. A task's own section makes it an internal node in
// turn. The leaves get __hpvm__hint, __hpvm__attributes and __hpvm__return.
// The regions are outlined by Regions.cpp, made nodes by Nodes.cpp and
// checked by Checks.cpp; this file makes the graph of a section and of a
// launched root.
#include "Graph.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace hpvm::hetero {

/// The count of loops a parallel loop marker declares.
static unsigned count(CallInst *marker) {
  return cast<ConstantInt>(marker->getArgOperand(0))->getZExtValue();
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
