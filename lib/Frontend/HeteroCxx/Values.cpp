//===- Values.cpp - Values passed and cloned across functions --------------===//
// C's conversions of an argument to a parameter, the pure computation that may
// be cloned from one function into another (Rematerializer), and finding a
// function's markers.
#include "Graph.h"


using namespace llvm;

namespace hpvm::hetero {

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

} // namespace hpvm::hetero
