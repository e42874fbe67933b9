//===- LaneWidening.h - Consecutive instances of a leaf as vector lanes ---===//
// The core of hpvm-vectorize: builds, next to a leaf, a leaf that runs
// W consecutive x instances of it at once, lane l being instance x + l.
#ifndef HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H
#define HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include <string>

namespace mlir::hpvm {

/// The variants of one leaf, built from one analysis.
struct LaneVariants {
  /// `@<leaf>__lanes<W>`, inserted after the leaf: the leaf's arguments, and
  /// an i1 followed by the leaf's outputs (lane 0's). True when it ran the
  /// instances x .. x + W - 1 (x being its own instance_id x), false when it
  /// declined before any side effect because the lanes would part ways (a
  /// branch taken by some lanes only, an index that would wrap between
  /// lanes): the caller then runs those instances one by one. Null when the
  /// leaf cannot run as lanes: `reason`, and `where` the op at fault if any.
  LeafOp lanes;
  std::string reason;
  Operation *where = nullptr;
  /// `@<leaf>__lanes<W>_masked`, the remainder variant: the lane variant
  /// with a trailing i64 input n (1 <= n <= W) that runs instances x ..
  /// x + n - 1 only, the other lanes masked off (a row's last group). Null
  /// when `lanes` is.
  LeafOp remainder;
  /// `@<leaf>__lanes<W>x<U>`, the block variant (instance coarsening): rows
  /// y .. y + U - 1 of those lanes, each op that differs between rows run
  /// once per row, the others once. Null when not asked for (U < 2) or when
  /// refused: `blockReason`.
  LeafOp block;
  std::string blockReason;
};

/// Builds the lane variant of `leaf` (a leaf whose body is imported C: llvm
/// and arith ops in blocks) for `lanes` lanes and, when `rows` >= 2, its block
/// variant of `rows` rows.
LaneVariants buildLaneVariants(LeafOp leaf, unsigned lanes, unsigned rows);

/// The bits of the narrowest floating-point type `leaf` loads or stores (32
/// when it moves no floating-point values): the element of its vectors.
unsigned getLaneElementBits(LeafOp leaf);

/// The lanes of a variant whose elements have `elementBits` bits on a target
/// with `vectorBits`-bit registers: a 64-byte cache line, or one register
/// when that is wider, so that a contiguous access uses all of the line it
/// fetches (two AVX2 registers of floats: two independent chains per row).
unsigned getDefaultLaneCount(unsigned elementBits, unsigned vectorBits);

/// The rows of a block variant of `lanes` lanes of `elementBits` bits: as
/// many rows as the register file holds (32 registers with 512-bit vectors,
/// else 16) with each row of lanes in its own registers, at most 8.
unsigned getDefaultRowCount(unsigned lanes, unsigned elementBits,
                            unsigned vectorBits);

} // namespace mlir::hpvm

#endif // HPVM_LIB_CONVERSION_HPVMTOVECTOR_LANEWIDENING_H
