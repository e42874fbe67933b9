//===- TileLanes.h - Tile rows of structured leaves in lock-step ----------===//
// The structured half of hpvm-vectorize: a leaf whose body is
// memref/scf/arith in one block, replicated in grids whose x extent is one
// constant W (a tile, as after hpvm-tile-nodes), gets a variant that runs a
// whole row of the tile at once, like the threads of a GPU thread block.
#ifndef HPVM_LIB_CONVERSION_HPVMTOVECTOR_TILELANES_H
#define HPVM_LIB_CONVERSION_HPVMTOVECTOR_TILELANES_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

namespace mlir::hpvm {

/// Builds `@<leaf>__tile<W>` after `leaf`: the leaf's inputs, one i1 output
/// (always true), `hpvm.lanes = width`; it runs instances x .. x + W - 1 (x
/// its own x id) in lock-step. Values that differ between instances are
/// vectors, accesses whose last index is the x id plus a uniform offset are
/// vector loads and stores, other accesses lane by lane, and divergent
/// `scf.if`s run under masks (a side only when some lane takes it; divisions
/// see a divisor of 1 in inactive lanes). Null, with nothing built, when the
/// body has outputs, several blocks, or ops it cannot run in lock-step
/// (calls, atomics, `hpvm.alloc`, barriers, loops with per-lane bounds).
LeafOp buildTileVariant(LeafOp leaf, unsigned width);

} // namespace mlir::hpvm

#endif // HPVM_LIB_CONVERSION_HPVMTOVECTOR_TILELANES_H
