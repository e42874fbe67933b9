//===- Markers.cpp - Hetero-C++ marker calls and their argument lists -----===//
#include "Markers.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DebugProgramInstruction.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;

namespace hpvm::hetero {

Marker classify(const CallBase &call) {
  const Function *callee = call.getCalledFunction();
  return callee ? markerNamed(callee->getName()) : Marker::None;
}

Marker markerNamed(StringRef name) {
  if (!name.contains("__hetero_") && !name.contains("__hpvm_"))
    return Marker::None;
  // C linkage is the name itself; a header that declares the markers without
  // extern "C" gives mangled names, whose base name is the marker's.
  std::string base = name.str();
  if (StringRef(base).starts_with("_Z")) {
    std::string demangled = llvm::demangle(base);
    base = StringRef(demangled).split('(').first.str();
  }
  return StringSwitch<Marker>(base)
      .Case("__hetero_launch", Marker::Launch)
      .Case("__hetero_wait", Marker::Wait)
      .Case("__hetero_launch_begin", Marker::LaunchBegin)
      .Case("__hetero_launch_end", Marker::LaunchEnd)
      .Case("__hetero_section_begin", Marker::SectionBegin)
      .Case("__hetero_section_end", Marker::SectionEnd)
      .Case("__hetero_task_begin", Marker::TaskBegin)
      .Case("__hetero_task_end", Marker::TaskEnd)
      .Case("__hetero_parallel_loop", Marker::ParallelLoop)
      .Case("__hetero_hint", Marker::Hint)
      .Case("__hetero_priv", Marker::Priv)
      .Case("__hetero_malloc", Marker::Malloc)
      .Case("__hetero_free", Marker::Free)
      .Case("__hetero_request_mem", Marker::RequestMem)
      .Case("__hetero_copy_mem", Marker::CopyMem)
      .Case("__hetero_isNonZeroLoop", Marker::IsNonZeroLoop)
      // HPVM 2.x's earlier spellings of the same markers.
      .Case("__hpvm_launch", Marker::Launch)
      .Case("__hpvm_wait", Marker::Wait)
      .Case("__hpvm_launch_begin", Marker::LaunchBegin)
      .Case("__hpvm_launch_end", Marker::LaunchEnd)
      .Case("__hpvm_parallel_section_begin", Marker::SectionBegin)
      .Case("__hpvm_parallel_section_end", Marker::SectionEnd)
      .Case("__hpvm_task_begin", Marker::TaskBegin)
      .Case("__hpvm_task_end", Marker::TaskEnd)
      .Case("__hpvm_parallel_loop", Marker::ParallelLoop)
      .Case("__hpvm_priv", Marker::Priv)
      .Default(Marker::None);
}

StringRef spelling(Marker marker) {
  switch (marker) {
  case Marker::None: return "?";
  case Marker::Launch: return "__hetero_launch";
  case Marker::Wait: return "__hetero_wait";
  case Marker::LaunchBegin: return "__hetero_launch_begin";
  case Marker::LaunchEnd: return "__hetero_launch_end";
  case Marker::SectionBegin: return "__hetero_section_begin";
  case Marker::SectionEnd: return "__hetero_section_end";
  case Marker::TaskBegin: return "__hetero_task_begin";
  case Marker::TaskEnd: return "__hetero_task_end";
  case Marker::ParallelLoop: return "__hetero_parallel_loop";
  case Marker::Hint: return "__hetero_hint";
  case Marker::Priv: return "__hetero_priv";
  case Marker::Malloc: return "__hetero_malloc";
  case Marker::Free: return "__hetero_free";
  case Marker::RequestMem: return "__hetero_request_mem";
  case Marker::CopyMem: return "__hetero_copy_mem";
  case Marker::IsNonZeroLoop: return "__hetero_isNonZeroLoop";
  }
  return "?";
}

SmallVector<Value *> Declared::flatInputs() const {
  SmallVector<Value *> values;
  for (const Item &item : inputs) {
    values.push_back(item.value);
    if (item.isPair())
      values.push_back(item.size);
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// The source file of a location as the command named it: clang records a
/// path relative to its working directory, which is not the user's.
static std::string sourcePath(StringRef directory, StringRef file) {
  if (file.empty() || sys::path::is_absolute(file) || directory.empty())
    return file.str();
  SmallString<256> path(directory);
  sys::path::append(path, file);
  return path.str().str();
}

std::string position(const DILocation *location) {
  if (!location)
    return "";
  return (sourcePath(location->getDirectory(), location->getFilename()) + ":" +
          Twine(location->getLine()) + ":" + Twine(location->getColumn()))
      .str();
}

void Reporter::error(const Instruction *at, const Twine &message) {
  std::string where = position(at->getDebugLoc().get());
  if (where.empty()) {
    // Clang gives some instructions no line: the next one with a line.
    for (const Instruction *next = at->getNextNode(); next && where.empty();
         next = next->getNextNode())
      where = position(next->getDebugLoc().get());
  }
  if (where.empty()) {
    error(at->getFunction(), message);
    return;
  }
  emit(where, message);
}

void Reporter::warning(const Instruction *at, const Twine &message) {
  std::string where = position(at->getDebugLoc().get());
  for (const Instruction *next = at->getNextNode(); next && where.empty();
       next = next->getNextNode())
    where = position(next->getDebugLoc().get());
  if (where.empty())
    where = "'" + cName(at->getFunction()) + "'";
  report((where + ": warning: " + message + "\n").str());
}

void Reporter::error(const DILocation *at, const Function *fallback, const Twine &message) {
  std::string where = position(at);
  if (where.empty())
    error(fallback, message);
  else
    emit(where, message);
}

void Reporter::error(const Function *at, const Twine &message) {
  std::string where;
  const DISubprogram *program = at->getSubprogram();
  if (program && program->getLine() == 0) {
    // An outlined region (a launched region's root) has a subprogram without a line:
    // its first line of code.
    for (const BasicBlock &block : *at)
      for (const Instruction &instruction : block)
        if (where.empty() && instruction.getDebugLoc() && instruction.getDebugLoc().getLine())
          where = position(instruction.getDebugLoc().get());
    if (!where.empty()) {
      emit(where, message);
      return;
    }
  }
  if (program)
    where = sourcePath(program->getDirectory(), program->getFilename()) + ":" +
            std::to_string(program->getLine()) + ":1";
  else
    where = ("'" + llvm::demangle(at->getName().str()) + "'");
  emit(where, message);
}

void Reporter::emit(const std::string &where, const Twine &message) {
  anyError = true;
  report((where + ": error: " + message + "\n").str());
}

std::string cName(const Function *function) {
  std::string demangled = llvm::demangle(function->getName().str());
  return StringRef(demangled).split('(').first.str();
}

/// Whether `function` writes no memory but its own locals (unoptimized code
/// stores its parameters to allocas), looking `depth` calls deep.
static bool writesOnlyLocals(const Function &function, unsigned depth) {
  if (function.onlyReadsMemory())
    return true;
  if (function.isDeclaration() || depth == 0 || function.isVarArg())
    return false;
  for (const BasicBlock &block : function)
    for (const Instruction &instruction : block) {
      if (auto *store = dyn_cast<StoreInst>(&instruction)) {
        if (store->isVolatile() || !isa<AllocaInst>(getUnderlyingObject(store->getPointerOperand())))
          return false;
        continue;
      }
      if (auto *call = dyn_cast<CallBase>(&instruction)) {
        if (isa<DbgInfoIntrinsic>(call) || call->isLifetimeStartOrEnd())
          continue;
        const Function *callee = call->getCalledFunction();
        if (!callee || !writesOnlyLocals(*callee, depth - 1))
          return false;
        continue;
      }
      if (instruction.mayWriteToMemory() || instruction.mayThrow())
        return false;
    }
  return true;
}

bool sameValue(const Value *a, const Value *b) {
  if (a == b)
    return true;
  if (!a || !b || a->getType() != b->getType())
    return false;
  if (a->getType()->isPointerTy() && a->stripPointerCasts() == b->stripPointerCasts())
    return true;
  const auto *x = dyn_cast<Instruction>(a), *y = dyn_cast<Instruction>(b);
  // Two reads of the same memory with nothing written between them: loads of
  // one address (`&a[i]` twice in one launch, `i` a global), or calls of one
  // function that writes nothing but its locals (`v.data()` twice).
  auto *xl = dyn_cast_or_null<LoadInst>(x), *yl = dyn_cast_or_null<LoadInst>(y);
  auto *xc = dyn_cast_or_null<CallInst>(x), *yc = dyn_cast_or_null<CallInst>(y);
  bool reads = xl && yl && sameValue(xl->getPointerOperand(), yl->getPointerOperand());
  if (xc && yc && xc->getCalledFunction() && xc->getCalledFunction() == yc->getCalledFunction() &&
      xc->arg_size() == yc->arg_size() && writesOnlyLocals(*xc->getCalledFunction(), 4)) {
    reads = true;
    for (unsigned i = 0; i < xc->arg_size() && reads; ++i)
      reads = sameValue(xc->getArgOperand(i), yc->getArgOperand(i));
  }
  if (xl || xc) {
    if (!reads || x->getParent() != y->getParent())
      return false;
    const Instruction *first = x, *second = y;
    if (second->comesBefore(first))
      std::swap(first, second);
    for (const Instruction *i = first->getNextNode(); i != second; i = i->getNextNode()) {
      auto *call = dyn_cast<CallInst>(i);
      bool reader = call && call->getCalledFunction() &&
                    writesOnlyLocals(*call->getCalledFunction(), 4);
      if (!reader && i->mayWriteToMemory())
        return false;
    }
    return true;
  }
  // Computation only: two locals (allocas) or two calls are different values.
  if (!x || !y || !x->isSameOperationAs(y) ||
      !isa<BinaryOperator, UnaryOperator, CastInst, GetElementPtrInst, CmpInst, SelectInst>(x) ||
      x->getNumOperands() != y->getNumOperands())
    return false;
  for (unsigned i = 0; i < x->getNumOperands(); ++i)
    if (!sameValue(x->getOperand(i), y->getOperand(i)))
      return false;
  return true;
}

std::string describe(const Value *value) {
  if (isa<Constant>(value) && !isa<GlobalValue>(value))
    return "a constant";
  if (value->getType()->isPointerTy())
    value = value->stripPointerCasts();
  // The C variable the debug information says the value is.
  SmallVector<DbgVariableRecord *> records;
  findDbgValues(const_cast<Value *>(value), records);
  // A local in memory (an array named `tmp` too): its declaration's record.
  if (auto *alloca = dyn_cast<AllocaInst>(value))
    llvm::append_range(records, findDVRDeclares(const_cast<AllocaInst *>(alloca)));
  for (DbgVariableRecord *record : records)
    if (DILocalVariable *variable = record->getVariable(); variable && !variable->getName().empty())
      return ("'" + variable->getName() + "'").str();
  StringRef name = value->getName();
  // Clang's names: "x.addr", "x.0" (promoted), "conv" (no C name).
  name = name.split('.').first;
  // "hetero": a value the lowering made (a launch's argument struct), no C name.
  if (name.empty() || llvm::is_contained({"call", "conv", "add", "mul", "sub", "idx", "arrayidx",
                                          "idxprom", "tmp", "cmp", "arraydecay", "hetero"},
                                         name))
    return "a value computed in the code";
  return ("'" + name + "'").str();
}

//===----------------------------------------------------------------------===//
// Argument lists
//===----------------------------------------------------------------------===//

static std::optional<int64_t> constantCount(Value *value) {
  if (auto *constant = dyn_cast<ConstantInt>(value))
    return constant->getSExtValue();
  return std::nullopt;
}

/// A bool written after a pair: `false` / `true`, promoted to int.
static bool isFlag(Value *value) {
  auto *constant = dyn_cast<ConstantInt>(value);
  return constant && constant->getValue().ule(1);
}

static std::optional<std::string> stringConstant(Value *value) {
  auto *global = dyn_cast<GlobalVariable>(value->stripPointerCasts());
  if (!global || !global->hasInitializer())
    return std::nullopt;
  auto *data = dyn_cast<ConstantDataArray>(global->getInitializer());
  if (!data || !data->isCString())
    return std::nullopt;
  return data->getAsCString().str();
}

/// The C variable behind a variadic argument: a float is passed as a double,
/// a char or short as an int; the variable is what the code reads.
static Value *unpromoted(Value *value) {
  if (auto *extend = dyn_cast<FPExtInst>(value); extend && extend->getSrcTy()->isFloatTy())
    return extend->getOperand(0);
  if (auto *extend = dyn_cast<CastInst>(value);
      extend && (isa<SExtInst>(extend) || isa<ZExtInst>(extend)) &&
      extend->getSrcTy()->getIntegerBitWidth() < 32)
    return extend->getOperand(0);
  return value;
}

namespace {
/// One reading of a marker's lists, with or without a flag after each pair.
struct ListReader {
  CallBase &call;
  bool flags;
  unsigned next;
  std::string problem;

  Value *at(unsigned index) {
    return index < call.arg_size() ? call.getArgOperand(index) : nullptr;
  }
  bool fail(const Twine &what) {
    problem = what.str();
    return false;
  }
  /// `count` items; outputs must be pairs.
  bool readItems(int64_t count, bool outputs, SmallVectorImpl<Item> &items) {
    for (int64_t k = 0; k < count; ++k) {
      Value *value = at(next);
      if (!value)
        return fail("expected " + Twine(count) + (outputs ? " output" : " input") +
                    " items, found only " + Twine(k));
      if (!value->getType()->isPointerTy()) {
        if (outputs)
          return fail("output " + Twine(k + 1) + " is not a buffer pair (a pointer and its "
                      "size in bytes)");
        items.push_back({unpromoted(value)});
        ++next;
        continue;
      }
      Value *size = at(next + 1);
      if (!size || !size->getType()->isIntegerTy())
        return fail(Twine(outputs ? "output " : "input ") + Twine(k + 1) + " (" +
                    describe(value) + ") is a pointer without its size in bytes after it");
      items.push_back({value, size});
      next += 2;
      if (flags) {
        if (!at(next) || !isFlag(at(next)))
          return fail("expected a bool after the size of buffer " + describe(value));
        ++next;
      }
    }
    return true;
  }
  bool read(Declared &out) {
    std::optional<int64_t> numIn = at(next) ? constantCount(at(next)) : std::nullopt;
    if (!numIn || *numIn < 0)
      return fail("expected a constant count of inputs first");
    ++next;
    if (!readItems(*numIn, false, out.inputs))
      return false;
    std::optional<int64_t> numOut = at(next) ? constantCount(at(next)) : std::nullopt;
    if (!numOut || *numOut < 0)
      return fail("expected a constant count of outputs after the " + Twine(*numIn) +
                  " inputs");
    ++next;
    if (!readItems(*numOut, true, out.outputs))
      return false;
    if (next + 1 == call.arg_size()) {
      std::optional<std::string> name = stringConstant(at(next));
      if (!name)
        return fail("expected the node's name (a string literal) after the outputs");
      out.name = *name;
      ++next;
    }
    if (next != call.arg_size())
      return fail("found " + Twine(call.arg_size() - next) +
                  " arguments more than the counts of inputs and outputs declare");
    return true;
  }
};
} // namespace

bool parseDeclared(CallBase &call, unsigned first, Reporter &reporter, Declared &out) {
  std::string problem;
  for (bool flags : {false, true}) {
    Declared attempt;
    ListReader reader{call, flags, first, ""};
    if (reader.read(attempt)) {
      out = std::move(attempt);
      return true;
    }
    if (!flags)
      problem = reader.problem;
  }
  reporter.error(&call, spelling(classify(call)) + ": " + problem);
  return false;
}

} // namespace hpvm::hetero
