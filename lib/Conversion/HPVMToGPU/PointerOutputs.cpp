//===- PointerOutputs.cpp - Pointer outputs of kernels as input codes -----===//
#include "PointerOutputs.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::hpvm;

/// Whether `value` is a null pointer constant.
static bool isNull(Value value) {
  return value.getDefiningOp<LLVM::ZeroOp>() != nullptr;
}

/// The value that predecessor terminator `terminator` passes to argument
/// `argument` of its successor `block` at successor position `successor`.
static Value getIncoming(BranchOpInterface terminator, unsigned successor,
                         BlockArgument argument) {
  SuccessorOperands operands = terminator.getSuccessorOperands(successor);
  if (argument.getArgNumber() < operands.getProducedOperandCount())
    return Value();
  return operands[argument.getArgNumber()];
}

/// Calls `visit(terminator, successor index)` for each edge into `block`;
/// false when a predecessor's terminator is no branch.
template <typename Visit>
static bool forEachIncomingEdge(Block *block, Visit visit) {
  // A predecessor is listed once per edge; each terminator is visited once.
  llvm::SmallPtrSet<Operation *, 4> visited;
  for (Block *predecessor : block->getPredecessors()) {
    if (!visited.insert(predecessor->getTerminator()).second)
      continue;
    auto terminator = dyn_cast<BranchOpInterface>(predecessor->getTerminator());
    if (!terminator)
      return false;
    for (unsigned s = 0, e = terminator->getNumSuccessors(); s < e; ++s)
      if (terminator->getSuccessor(s) == block)
        if (!visit(terminator, s))
          return false;
  }
  return true;
}

std::string mlir::hpvm::checkPointerOrigins(Value pointer, Block *entry) {
  SmallVector<Value> work{pointer};
  llvm::SmallPtrSet<void *, 16> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value.getAsOpaquePointer()).second || isNull(value))
      continue;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == entry)
        continue;
      bool ok = forEachIncomingEdge(
          argument.getOwner(), [&](BranchOpInterface terminator, unsigned s) {
            Value incoming = getIncoming(terminator, s, argument);
            if (incoming)
              work.push_back(incoming);
            return static_cast<bool>(incoming);
          });
      if (!ok || argument.getOwner()->isEntryBlock())
        return "a pointer output reaches it through control flow the "
               "backend does not follow";
      continue;
    }
    if (auto select = value.getDefiningOp<LLVM::SelectOp>()) {
      work.push_back(select.getTrueValue());
      work.push_back(select.getFalseValue());
      continue;
    }
    if (auto load = value.getDefiningOp<LLVM::LoadOp>()) {
      auto slot = load.getAddr().getDefiningOp<LLVM::AllocaOp>();
      if (slot && seen.insert(slot.getOperation()).second) {
        for (Operation *user : slot->getUsers()) {
          auto store = dyn_cast<LLVM::StoreOp>(user);
          if (store && store.getAddr() == slot.getResult() &&
              store.getValue() != slot.getResult()) {
            work.push_back(store.getValue());
          } else if (!isa<LLVM::LoadOp>(user)) {
            return "a pointer output passes through memory the backend "
                   "does not follow";
          }
        }
      }
      if (slot)
        continue;
    }
    return "it has a pointer output that is neither one of its pointer "
           "inputs nor null (a kernel can only hand back what it was given)";
  }
  return "";
}

Value PointerCodeBuilder::getSlot(OpBuilder &b, Value slot) {
  if (Value known = slots.lookup(slot))
    return known;
  OpBuilder::InsertionGuard guard(b);
  auto alloca = slot.getDefiningOp<LLVM::AllocaOp>();
  Location loc = alloca.getLoc();
  Type i64 = b.getI64Type();
  b.setInsertionPointAfter(alloca);
  Value codeSlot = LLVM::AllocaOp::create(b, loc, alloca.getType(), i64,
                                          alloca.getArraySize(), 8);
  slots[slot] = codeSlot;
  // Every store of a pointer into the slot stores its code beside it.
  for (Operation *user : llvm::make_early_inc_range(slot.getUsers())) {
    auto store = dyn_cast<LLVM::StoreOp>(user);
    if (!store || store.getAddr() != slot)
      continue;
    Value code = build(b, store.getValue());
    b.setInsertionPointAfter(store);
    LLVM::StoreOp::create(b, store.getLoc(), code, codeSlot);
  }
  return codeSlot;
}

Value PointerCodeBuilder::build(OpBuilder &b, Value pointer) {
  if (Value known = codes.lookup(pointer))
    return known;
  OpBuilder::InsertionGuard guard(b);
  Type i64 = b.getI64Type();
  Location loc = pointer.getLoc();
  auto constant = [&](int64_t value) {
    b.setInsertionPointToStart(entry);
    return LLVM::ConstantOp::create(b, loc, i64, value).getResult();
  };
  Value code;
  if (isNull(pointer)) {
    code = constant(-1);
  } else if (auto argument = dyn_cast<BlockArgument>(pointer);
             argument && argument.getOwner() == entry) {
    code = constant(argument.getArgNumber());
  } else if (argument) {
    // A code argument beside it; recorded before the predecessors are
    // visited, so that loops find it.
    Block *block = argument.getOwner();
    code = block->addArgument(i64, loc);
    codes[pointer] = code;
    forEachIncomingEdge(block, [&](BranchOpInterface terminator, unsigned s) {
      Value incoming = getIncoming(terminator, s, argument);
      Value incomingCode = build(b, incoming);
      terminator.getSuccessorOperands(s).append(incomingCode);
      return true;
    });
    return code;
  } else if (auto select = pointer.getDefiningOp<LLVM::SelectOp>()) {
    Value whenTrue = build(b, select.getTrueValue());
    Value whenFalse = build(b, select.getFalseValue());
    b.setInsertionPointAfter(select);
    code = LLVM::SelectOp::create(b, loc, select.getCondition(), whenTrue,
                                  whenFalse);
  } else {
    auto load = pointer.getDefiningOp<LLVM::LoadOp>();
    Value codeSlot = getSlot(b, load.getAddr());
    b.setInsertionPointAfter(load);
    code = LLVM::LoadOp::create(b, loc, i64, codeSlot);
  }
  codes[pointer] = code;
  return code;
}
