//===- TileShape.h - Internal nodes that run as one work-group ---*- C++ -*-===//
// The shape the device backends turn into one work-group of a kernel: an
// internal node whose children are one replicated leaf (the instances of the
// tile) and any number of single-instance allocation leaves (the tile's
// memory: HPVM's allocation nodes, whose `hpvm.alloc`s reach the instances
// over edges). Both the kernel extraction and the host code that launches it
// read the tile through this analysis, so that they agree on the order of the
// tile's memory buffers.
#ifndef HPVM_DIALECT_HPVM_ANALYSIS_TILESHAPE_H
#define HPVM_DIALECT_HPVM_ANALYSIS_TILESHAPE_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <tuple>

namespace mlir::hpvm {

/// A single-instance child whose body allocates memory for the tile.
struct TileAllocator {
  CreateNodeOp create;
  LeafOp leaf;
  /// For each input of `leaf`, the tile input bound to it.
  SmallVector<unsigned> boundInputs;
  /// The allocations of `leaf`, in program order.
  SmallVector<AllocOp> allocations;
};

/// Where an input of the tile's instances comes from.
struct TileInputSource {
  /// The tile input bound to it, or -1 when an allocator's output feeds it.
  int tileInput = -1;
  /// Otherwise: which allocator (index into TileShape::allocators) and output.
  unsigned allocator = 0;
  unsigned output = 0;
};

struct TileShape {
  InternalOp tile;
  /// The replicated child: the instances of one tile.
  CreateNodeOp instancesCreate;
  LeafOp instances;
  /// One entry per input of `instances`.
  SmallVector<TileInputSource> inputSources;
  /// For each output of `tile`, the output of `instances` bound to it.
  SmallVector<unsigned> boundOutputs;
  /// The allocation children, in the order of their create_node.
  SmallVector<TileAllocator> allocators;

  /// Every allocation, allocator by allocator: the tile's memory buffers in
  /// the order kernels take them.
  SmallVector<AllocOp> getAllocations() const;
};

/// A grid query of a kernel's body about a level above the kernel's own
/// (above the threads of a leaf kernel; above the work-groups of a tile
/// kernel): the host knows its value when it launches the kernel and passes
/// it as an i64 parameter.
struct AncestorQuery {
  unsigned level; // as in hpvm.instance_id / hpvm.num_instances
  unsigned dim;   // 0, 1, 2 for x, y, z
  bool isId;      // instance id, else number of instances
  bool operator<(const AncestorQuery &other) const {
    return std::tie(level, dim, isId) <
           std::tie(other.level, other.dim, other.isId);
  }
  bool operator==(const AncestorQuery &other) const {
    return level == other.level && dim == other.dim && isId == other.isId;
  }
};

/// The distinct queries of `leaf` about levels at or above `firstAncestor`,
/// sorted: the order of the kernel's ancestor parameters.
SmallVector<AncestorQuery> collectAncestorQueries(LeafOp leaf,
                                                  unsigned firstAncestor);

/// Matches `tile` to the tile shape. On failure `reason` says why, in words
/// that complete "no kernel, because ...".
FailureOr<TileShape> matchTileShape(InternalOp tile,
                                    SymbolTableCollection &symbols,
                                    std::string &reason);

/// Clones, at `b` and in program order, the operations of `body` that
/// `values` (values of `body`) depend on, and returns the clones of `values`.
/// Values in `mapping` (the body's arguments, say) are taken from it. The
/// slice must be free of side effects: a tile's extent arithmetic, an
/// allocation node's sizes.
SmallVector<Value> cloneSliceOf(OpBuilder &b, Block &body, ValueRange values,
                                IRMapping &mapping);

/// Clones, at `b`, the operations of `allocator`'s body that `values` (values
/// of that body) depend on, and returns the clones of `values`. The body's
/// arguments become the `tileInputs` bound to them; values already in
/// `mapping` (an allocation's result, say) are taken from it.
SmallVector<Value> cloneFromAllocator(OpBuilder &b,
                                      const TileAllocator &allocator,
                                      ValueRange tileInputs, ValueRange values,
                                      IRMapping &mapping);

} // namespace mlir::hpvm

#endif // HPVM_DIALECT_HPVM_ANALYSIS_TILESHAPE_H
