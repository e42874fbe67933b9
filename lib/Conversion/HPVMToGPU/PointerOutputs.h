//===- PointerOutputs.h - Pointer outputs of kernels as input codes -*- C++ -*-===//
// A device cannot hand a host pointer back, but a leaf's pointer output is
// almost always one of its pointer inputs passed on (a buffer travelling along
// an edge) or null. A kernel returns such an output as a code: the index of
// the input it is, or -1 for null; the host turns the code back into the host
// pointer it passed in (KernelSiteRunner::decodePointerOutput).
#ifndef HPVM_CONVERSION_HPVMTOGPU_POINTEROUTPUTS_H
#define HPVM_CONVERSION_HPVMTOGPU_POINTEROUTPUTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::hpvm {

/// Checks that every value `pointer` can take is an argument of `entry` or
/// null, following block arguments through their predecessors, selects, and
/// loads from local slots (an `llvm.alloca` only stored to and loaded from:
/// how the frontend gathers the outputs of several `__hpvm__return`s).
/// Returns "" or the reason it is not.
std::string checkPointerOrigins(Value pointer, Block *entry);

/// Builds the i64 codes of pointers that checkPointerOrigins accepted (the
/// index of the argument of `entry` a pointer is, -1 for null), mirroring
/// how they are computed: a code argument beside each block argument, filled
/// in by its predecessors; a select of codes beside each select; a code slot
/// beside each local slot, stored and loaded beside it. One per kernel: what
/// was built is shared between its outputs.
class PointerCodeBuilder {
public:
  explicit PointerCodeBuilder(Block *entry) : entry(entry) {}
  Value build(OpBuilder &b, Value pointer);

private:
  Value getSlot(OpBuilder &b, Value slot);

  Block *entry;
  llvm::DenseMap<Value, Value> codes; // pointer -> its code
  llvm::DenseMap<Value, Value> slots; // local slot -> its code slot
};

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTOGPU_POINTEROUTPUTS_H
