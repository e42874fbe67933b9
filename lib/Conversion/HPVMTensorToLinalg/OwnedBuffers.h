//===- OwnedBuffers.h - Free the buffers tensor leaves hand on ------------===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_OWNEDBUFFERS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_OWNEDBUFFERS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::hpvm {

/// After bufferization, frees the buffers that bufferized leaves allocate for
/// their outputs, in whoever receives them last: a buffer that is a fresh
/// allocation of its leaf (or a view of an input the leaf owns) and goes along
/// exactly one edge is owned by the consuming leaf, which frees it before it
/// returns unless it hands it on as its own output; one bound to an output of
/// a launched root is freed by the host function after its last use of the
/// `hpvm.wait` / `hpvm.pop` result; one that goes along several edges (a
/// residual's skip connection) is freed by the consumer every other consumer
/// reaches through edges (which therefore runs last) or, where there is none
/// (two branches from one input), by the consumer that finishes last, which
/// each asks the runtime (hpvm_rt_buffer_last_use); either when no consumer
/// keeps a view of it. Only leaves instantiated once, without an
/// instance grid and without device versions take part; anything else keeps
/// its buffers (a leak, never a double free). Only the node definitions in
/// `converted` (those whose tensor interfaces this pass made buffers) and the
/// launches of converted roots are considered: other graphs own their memrefs
/// as their authors wrote them.
void freeHandedOnBuffers(ModuleOp module,
                         const llvm::SmallPtrSetImpl<Operation *> &converted);

/// After freeHandedOnBuffers: in the converted leaves, a fresh buffer that is
/// only a copy of an input the leaf owns (frees), reshaped or not — a reshape
/// leaf's output — becomes that input itself, and the leaf no longer frees it:
/// its receiver does. Nothing is copied for a reshape of a buffer handed on.
void forwardOwnedInputCopies(ModuleOp module,
                             const llvm::SmallPtrSetImpl<Operation *> &converted);

/// `value`, then the value each memref.collapse_shape / expand_shape in a
/// chain of them is a reshape of (the reshapes keep the elements' order): the
/// last is the buffer itself.
SmallVector<Value> reshapeChain(Value value);

/// True when `buffer` may be reachable after its function returns: it is
/// returned, directly or through a view, or used by an op that might keep it
/// (any op other than known views whose results are memrefs, or a store of it).
bool mayEscape(Value buffer);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_OWNEDBUFFERS_H
