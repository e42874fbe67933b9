//===- LaneWidening.h - Consecutive instances of a leaf as vector lanes ---===//
// The core of convert-hpvm-to-vector: builds, next to a leaf, a leaf that runs
// W consecutive x instances of it at once, lane l being instance x + l.
#ifndef HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H
#define HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include <string>

namespace mlir::hpvm {

/// Builds the lane variant of `leaf` (a leaf whose body is imported C: llvm
/// and arith ops in blocks) for `lanes` lanes, named `name`, inserted after
/// `leaf`. It has the leaf's arguments and returns an i1 followed by the
/// leaf's outputs (lane 0's): true when it ran the instances
/// x .. x + lanes - 1 (x being its own instance_id x), false when it
/// declined before any side effect because the
/// lanes would part ways (a branch taken by some lanes only, an index that
/// would wrap between lanes): the caller then runs those instances one by
/// one. On failure returns null and sets `reason` (and `where`, the op that
/// could not be vectorized, when there is one).
/// With `rows` > 1, a block variant: rows y .. y + rows - 1 of those lanes
/// (instance coarsening), each op that differs between rows run once per
/// row, the others once; it needs branches whose conditions are equal in
/// every row.
LeafOp buildLaneVariant(LeafOp leaf, unsigned lanes, unsigned rows,
                        StringRef name, std::string &reason,
                        Operation *&where);

/// The number of lanes for `leaf` in vectors of `vectorBits` bits: the bits
/// over the narrowest floating-point type the leaf loads or stores (32 when
/// it moves no floating-point values).
unsigned getDefaultLaneCount(LeafOp leaf, unsigned vectorBits);

} // namespace mlir::hpvm

#endif // HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H
