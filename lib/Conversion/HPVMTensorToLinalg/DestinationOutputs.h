//===- DestinationOutputs.h - Leaves write into the host's destination ----===//
#ifndef HPVM_CONVERSION_HPVMTENSORTOLINALG_DESTINATIONOUTPUTS_H
#define HPVM_CONVERSION_HPVMTENSORTOLINALG_DESTINATIONOUTPUTS_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::hpvm {

/// An output of a launched tensor graph that the host stores into a
/// destination it promises is not aliased:
/// `bufferization.materialize_in_destination %out in restrict writable %dest`
/// where %out is result `port` of `wait` and %dest an argument of the host
/// function used by nothing else.
struct DestinationOutput {
  WaitOp wait;
  unsigned port;
  unsigned destination; // argument number in the host function
};

/// Before bufferization: the destination outputs of the host functions of
/// `module`.
SmallVector<DestinationOutput> findDestinationOutputs(ModuleOp module);

/// After bufferization (before buffers are freed): for each destination
/// output whose root binds it to the fresh buffer a converted leaf (in
/// `converted`, instantiated once, no grid, no device version) allocates and
/// returns, the destination becomes a new input of the launch, the root and
/// that leaf, which writes into it instead of allocating, and the host's copy
/// goes away. Other outputs keep their copy.
void writeIntoDestinations(ModuleOp module, ArrayRef<DestinationOutput> outputs,
                           const llvm::SmallPtrSetImpl<Operation *> &converted);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTENSORTOLINALG_DESTINATIONOUTPUTS_H
