//===- ImageChunks.h - The loops hpvm-tile-tensor-batch makes ---*- C++ -*-===//
// The attribute that marks the scf.for over chunks of images which
// hpvm-tile-tensor-batch wraps a leaf's tensor ops in: the lowering
// (convert-hpvm-tensor-to-linalg, hpvm-parallel-leaf-loops) treats those
// loops, and no loop of the program's own, as chunk loops.
#ifndef HPVM_DIALECT_HPVM_IR_IMAGECHUNKS_H
#define HPVM_DIALECT_HPVM_IR_IMAGECHUNKS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::hpvm {
// Unprefixed: a marker between two passes of the CPU pipeline, not an attribute of
// the dialect (whose verifier names every hpvm.* attribute it accepts).
inline constexpr llvm::StringLiteral kImageChunksAttrName = "image_chunks";
} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_IR_IMAGECHUNKS_H
