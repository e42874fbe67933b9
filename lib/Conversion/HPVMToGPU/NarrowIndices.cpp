//===- NarrowIndices.cpp - CUDA kernels with 32-bit index arithmetic -------===//
// Every CUDA kernel gets a second entry point, `<kernel>__i32`, whose address
// arithmetic is 32-bit: the runtime launches it when the grid and every buffer
// of the launch fit 2^31 (instances, bytes), the 64-bit one otherwise.
//
// Why it is exact: under that condition every address a kernel forms from a
// buffer parameter lies less than 2^31 bytes from it (C's rule for pointer
// arithmetic, which HPVM-C leaves follow, and the memref lowering's: each
// pointer formed stays within its buffer; work-group and private memory are
// smaller still), so the index of each getelementptr is in [-2^31, 2^31) and
// equals sext(trunc(index)).
// Truncation commutes with add, sub, mul, shl and phis, so the whole index
// expression is computed in 32 bits (the C source's `(long)row * k + p`, loop
// counters as 32-bit twins), as nvcc does for `int` indices, where the loops
// count in 32 bits too: exits `counter + 1 == zext(n)` of a counter from 0
// compare in 32 bits (exact anyway: such a counter never passes n < 2^32). An
// index that steps with a counter left 64-bit (MLIR's `index` loops up to a
// 64-bit bound) is left as it is, for LLVM's strength reduction to make a
// stepping pointer of. What no longer feeds anything is LLVM's to delete.
// The grid's bounds checks before the leaf's body compare in 32 bits too.
#include "KernelSerialization.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/CallingConv.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

/// The 32-bit value of 64-bit integers, trunc(value), computed in 32 bits
/// where it can be: through add, sub, mul, shl by a constant, and, or, xor
/// (which truncation commutes with), phis (loop counters get a 32-bit twin)
/// and extensions of 32-bit values; elsewhere the value itself is truncated.
/// Exact for any value: only the use at a getelementptr relies on the
/// variant's condition.
class Narrower {
public:
  explicit Narrower(Function &function)
      : function(function), i32(Type::getInt32Ty(function.getContext())) {}

  Value *get(Value *value);

private:
  /// A builder placed just after `value`'s definition.
  IRBuilder<> after(Value *value);
  Value *narrowBinary(BinaryOperator *binary);

  Function &function;
  Type *i32;
  DenseMap<Value *, Value *> narrowed;
};

IRBuilder<> Narrower::after(Value *value) {
  auto *instruction = dyn_cast<Instruction>(value);
  if (!instruction)
    return IRBuilder<>(&*function.getEntryBlock().getFirstInsertionPt());
  if (isa<PHINode>(instruction))
    return IRBuilder<>(&*instruction->getParent()->getFirstInsertionPt());
  return IRBuilder<>(instruction->getNextNode());
}

Value *Narrower::narrowBinary(BinaryOperator *binary) {
  switch (binary->getOpcode()) {
  case Instruction::Shl: {
    auto *amount = dyn_cast<ConstantInt>(binary->getOperand(1));
    if (!amount || amount->getZExtValue() >= 32)
      return nullptr;
    [[fallthrough]];
  }
  case Instruction::Add:
  case Instruction::Sub:
  case Instruction::Mul:
  case Instruction::And:
  case Instruction::Or:
  case Instruction::Xor: {
    Value *lhs = get(binary->getOperand(0));
    Value *rhs = get(binary->getOperand(1));
    return after(binary).CreateBinOp(binary->getOpcode(), lhs, rhs);
  }
  default:
    return nullptr;
  }
}

Value *Narrower::get(Value *value) {
  if (Value *known = narrowed.lookup(value))
    return known;
  Value *result = nullptr;
  if (auto *constant = dyn_cast<ConstantInt>(value)) {
    result = ConstantInt::get(i32, constant->getValue().trunc(32));
  } else if (isa<SExtInst, ZExtInst>(value)) {
    auto *extension = cast<CastInst>(value);
    Value *source = extension->getOperand(0);
    unsigned width = source->getType()->getIntegerBitWidth();
    if (width == 32)
      result = source;
    else if (width < 32)
      result = after(extension).CreateCast(extension->getOpcode(), source, i32);
  } else if (auto *binary = dyn_cast<BinaryOperator>(value)) {
    result = narrowBinary(binary);
  } else if (auto *phi = dyn_cast<PHINode>(value)) {
    // The twin first (a loop counter reaches itself), then its inputs.
    PHINode *twin = PHINode::Create(i32, phi->getNumIncomingValues(),
                                    phi->getName() + ".i32");
    twin->insertBefore(phi->getParent()->begin());
    narrowed[value] = twin;
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i)
      twin->addIncoming(get(phi->getIncomingValue(i)), phi->getIncomingBlock(i));
    return twin;
  }
  if (!result)
    result = after(value).CreateTrunc(value, i32);
  narrowed[value] = result;
  return result;
}

/// Whether `value` is a loop counter's next value: `counter + 1`, the counter
/// a phi starting at 0 that this value updates.
bool isCountFromZero(Value *value) {
  auto *next = dyn_cast<BinaryOperator>(value);
  if (!next || next->getOpcode() != Instruction::Add ||
      !match(next->getOperand(1), m_One()))
    return false;
  auto *counter = dyn_cast<PHINode>(next->getOperand(0));
  if (!counter || counter->getNumIncomingValues() != 2)
    return false;
  bool fromZero = false, updated = false;
  for (unsigned i = 0; i < 2; ++i) {
    Value *incoming = counter->getIncomingValue(i);
    fromZero |= match(incoming, m_Zero());
    updated |= incoming == next;
  }
  return fromZero && updated;
}

/// Loop exits `counter + 1 == zext(n)` (n 32-bit) compared in 32 bits: the
/// counter runs from 0 up to n < 2^32, so the truncated values are equal
/// exactly when the values are (C's `for (int p = 0; p < n; ++p)` after the
/// host compiler widened p to 64 bits).
void narrowLoopExits(Function &function, Narrower &narrower,
                     SmallPtrSetImpl<PHINode *> &counters) {
  SmallVector<ICmpInst *> compares;
  for (Instruction &instruction : instructions(function))
    if (auto *compare = dyn_cast<ICmpInst>(&instruction))
      if (compare->isEquality() && compare->getOperand(0)->getType()->isIntegerTy(64))
        compares.push_back(compare);
  for (ICmpInst *compare : compares) {
    for (unsigned side = 0; side < 2; ++side) {
      Value *next = compare->getOperand(side);
      auto *bound = dyn_cast<ZExtInst>(compare->getOperand(1 - side));
      if (!isCountFromZero(next) || !bound ||
          !bound->getOperand(0)->getType()->isIntegerTy(32))
        continue;
      Value *narrow = narrower.get(next);
      counters.insert(cast<PHINode>(cast<BinaryOperator>(next)->getOperand(0)));
      compare->setOperand(side, narrow);
      compare->setOperand(1 - side, bound->getOperand(0));
      break;
    }
  }
}

/// Whether `value` is computed from the thread's special registers (ids,
/// work-group sizes) alone, through Narrower's operations.
bool isFromSpecialRegisters(Value *value) {
  if (auto *call = dyn_cast<IntrinsicInst>(value)) {
    switch (call->getIntrinsicID()) {
    case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
    case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
    case Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
    case Intrinsic::nvvm_read_ptx_sreg_ntid_x:
    case Intrinsic::nvvm_read_ptx_sreg_ntid_y:
    case Intrinsic::nvvm_read_ptx_sreg_ntid_z:
    case Intrinsic::nvvm_read_ptx_sreg_tid_x:
    case Intrinsic::nvvm_read_ptx_sreg_tid_y:
    case Intrinsic::nvvm_read_ptx_sreg_tid_z:
      return true;
    default:
      return false;
    }
  }
  auto *instruction = dyn_cast<Instruction>(value);
  if (!instruction || !isa<BinaryOperator, SExtInst, ZExtInst>(instruction))
    return isa<ConstantInt>(value);
  return llvm::all_of(instruction->operands(), isFromSpecialRegisters);
}

/// The grid checks `id < extent` (the kernel's prologue) compared in 32 bits:
/// in the variant the extents are below 2^31 and the ids below 2^32 (a
/// partial last work-group reaches past the extent by less than its size).
void narrowGridChecks(Function &function, Narrower &narrower) {
  for (Instruction &instruction : instructions(function)) {
    auto *compare = dyn_cast<ICmpInst>(&instruction);
    if (!compare || !compare->isUnsigned() ||
        !compare->getOperand(0)->getType()->isIntegerTy(64))
      continue;
    for (unsigned side = 0; side < 2; ++side) {
      Value *id = compare->getOperand(side);
      Value *extent = compare->getOperand(1 - side);
      if (!isa<Argument>(extent) || isa<ConstantInt>(id) || !isFromSpecialRegisters(id))
        continue;
      compare->setOperand(side, narrower.get(id));
      compare->setOperand(1 - side, narrower.get(extent));
      break;
    }
  }
}

/// Whether the 32-bit form of `value` leaves no 64-bit loop counter behind:
/// each phi it depends on through the operations Narrower computes in 32 bits
/// is one of `counters`, whose loop exits are 32-bit too. (An address that
/// steps with a 64-bit counter is better left to LLVM's strength reduction,
/// which makes it a pointer that steps.)
bool dependsOnNarrowCountersOnly(Value *value, const SmallPtrSetImpl<PHINode *> &counters,
                                 SmallPtrSetImpl<Value *> &seen) {
  if (!seen.insert(value).second)
    return true;
  if (auto *phi = dyn_cast<PHINode>(value))
    return counters.contains(phi);
  auto *instruction = dyn_cast<Instruction>(value);
  if (!instruction || !isa<BinaryOperator, SExtInst, ZExtInst>(instruction))
    return true;
  return llvm::all_of(instruction->operands(), [&](Value *operand) {
    return dependsOnNarrowCountersOnly(operand, counters, seen);
  });
}

/// Rewrites each variable 64-bit index of the getelementptrs of `function`
/// as sext of its 32-bit value (see the file's comment), where that leaves no
/// 64-bit loop counter behind.
void narrowAddresses(Function &function, Narrower &narrower,
                     const SmallPtrSetImpl<PHINode *> &counters) {
  SmallVector<GetElementPtrInst *> geps;
  for (Instruction &instruction : instructions(function))
    if (auto *gep = dyn_cast<GetElementPtrInst>(&instruction))
      geps.push_back(gep);
  for (GetElementPtrInst *gep : geps) {
    for (Use &index : gep->indices()) {
      Value *value = index.get();
      SmallPtrSet<Value *, 16> seen;
      if (isa<Constant>(value) || !value->getType()->isIntegerTy(64) ||
          !dependsOnNarrowCountersOnly(value, counters, seen))
        continue;
      Value *narrow = narrower.get(value);
      index.set(IRBuilder<>(gep).CreateSExt(narrow, value->getType()));
    }
  }
}

} // namespace

namespace mlir::hpvm {

/// Narrows `function` as the variant's body (see the file's comment).
static void narrowKernel(Function &function) {
  Narrower narrower(function);
  SmallPtrSet<PHINode *, 8> counters;
  narrowLoopExits(function, narrower, counters);
  narrowAddresses(function, narrower, counters);
  narrowGridChecks(function, narrower);
}

/// The defined functions of `module` with calling convention `convention`.
static SmallVector<Function *> getKernels(Module &module,
                                          CallingConv::ID convention) {
  SmallVector<Function *> kernels;
  for (Function &function : module)
    if (!function.isDeclaration() && function.getCallingConv() == convention)
      kernels.push_back(&function);
  return kernels;
}

void addNarrowIndexKernels(Module &module) {
  for (Function *kernel : getKernels(module, CallingConv::PTX_Kernel)) {
    ValueToValueMapTy mapping;
    Function *variant = CloneFunction(kernel, mapping);
    variant->setName(kernel->getName() + kNarrowKernelSuffix);
    variant->setLinkage(kernel->getLinkage());
    narrowKernel(*variant);
  }
}

void narrowOpenCLKernelsForTesting(Module &module) {
  for (Function *kernel : getKernels(module, CallingConv::SPIR_KERNEL))
    narrowKernel(*kernel);
}

} // namespace mlir::hpvm
