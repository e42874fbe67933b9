//===- CheckedArithmetic.h - UBSan's overflow checks undone -----*- C++ -*-===//
// Shared by the frontends that take clang's LLVM IR compiled with
// -fsanitize=undefined: the HPVM-C import (graph descriptions keep no checks)
// and the Hetero-C++ lowering (loop variables' increments keep none).
#ifndef HPVM_FRONTEND_CHECKEDARITHMETIC_H
#define HPVM_FRONTEND_CHECKEDARITHMETIC_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

namespace mlir::hpvm {

/// Whether every user of `checked` is an `extractvalue` of its value or its
/// overflow flag (as UBSan's checks use it), so that uncheckOperation applies.
inline bool isOnlyExtracted(const llvm::WithOverflowInst *checked) {
  return llvm::all_of(checked->users(), [](const llvm::User *user) {
    const auto *extract = llvm::dyn_cast<llvm::ExtractValueInst>(user);
    return extract && extract->getNumIndices() == 1;
  });
}

/// Replaces `checked` (`llvm.sadd.with.overflow`, ..., whose users are only
/// extracts: isOnlyExtracted) by the plain operation, `nsw` or `nuw` as it
/// was signed or not, for its value and `false` for its flag; returns the
/// plain operation. The checks that branched on the flag then fold away.
inline llvm::BinaryOperator *uncheckOperation(llvm::WithOverflowInst *checked) {
  auto *plain = llvm::BinaryOperator::Create(checked->getBinaryOp(), checked->getLHS(),
                                             checked->getRHS(), "", checked->getIterator());
  if (checked->isSigned())
    plain->setHasNoSignedWrap(true);
  else
    plain->setHasNoUnsignedWrap(true);
  plain->setDebugLoc(checked->getDebugLoc());
  for (llvm::User *user : llvm::SmallVector<llvm::User *>(checked->users())) {
    auto *extract = llvm::cast<llvm::ExtractValueInst>(user);
    extract->replaceAllUsesWith(extract->getIndices()[0] == 0
                                    ? static_cast<llvm::Value *>(plain)
                                    : llvm::ConstantInt::getFalse(checked->getContext()));
    extract->eraseFromParent();
  }
  checked->eraseFromParent();
  return plain;
}

} // namespace mlir::hpvm

#endif // HPVM_FRONTEND_CHECKEDARITHMETIC_H
