//===- CollapsedGridRunner.h - Nested grids as one parallel-for -*- C++ -*-===//
// A replicated internal node whose only child is a replicated leaf, run as
// one parallel-for over the combined space of both grids. Built on the
// GridRunner it is given (lanes, contractions, parallel-for bodies).
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_COLLAPSEDGRIDRUNNER_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_COLLAPSEDGRIDRUNNER_H

#include "GridRunner.h"

namespace mlir::hpvm::cpu {

class CollapsedGridRunner : LoweringPart {
public:
  CollapsedGridRunner(LoweringState &state, GridRunner &gridRunner)
      : LoweringPart(state), gridRunner(gridRunner) {}

  /// Whether nested grids may run as one parallel-for (collapse-grids).
  void setCollapseGrids(bool enable) { collapseGrids = enable; }
  /// The leaf to run in one parallel-for with the grid of `node` when `node`
  /// is a replicated internal node whose only child is that replicated leaf,
  /// without barriers or per-tile memory; null otherwise.
  LeafOp getCollapsibleLeaf(NodeOpInterface node, PerInstancePorts perInstance);
  /// Runs `leaf` inside the grid `outerDims` of `internal` as one
  /// parallel-for over the combined space; returns the outputs of `internal`.
  SmallVector<Value> runCollapsed(OpBuilder &b, Location loc,
                                  InternalOp internal, LeafOp leaf,
                                  ValueRange outerDims, ValueRange inputs,
                                  Value parentFrame);

private:
  /// { leaf inputs..., ptr parent frame, i64 tiles[3], i64 tile[3],
  ///   ptr outputs }.
  LLVM::LLVMStructType getCollapsedContextType(LeafOp leaf);
  /// The parallel-for body over the combined space of `rank` dimensions.
  LLVM::LLVMFuncOp getCollapsedRangeFunction(InternalOp internal, LeafOp leaf,
                                             unsigned rank);
  /// What the body of a collapsed grid reads on entry.
  struct CollapsedBody;
  /// Loads the collapsed context of `leaf` and the box of the combined space
  /// of `rank` dimensions, and allocates the tile's frame.
  CollapsedBody loadCollapsedBody(OpBuilder &b, Location loc, LeafOp leaf,
                                  unsigned rank, Value contextPtr,
                                  Value instances);
  /// Runs the tiles the box touches along x, each over the part of its row
  /// (or of `rows` rows from the y the loops reached) inside.
  void emitCollapsedRows(OpBuilder &rb, Location loc, LeafOp leaf,
                         CollapsedBody &body, unsigned rows);
  /// Walks y a block of `blockRows` rows at a time where it fits in the tile
  /// and the box, else row by row (a leaf with a block variant).
  void emitCollapsedBlockRows(OpBuilder &b, Location loc, LeafOp leaf,
                              CollapsedBody &body, unsigned blockRows);

  GridRunner &gridRunner;
  bool collapseGrids = true;
  /// The collapsed range functions generated so far.
  GeneratedFunctions<CollapsedFunctionKey> collapsedFunctions;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_COLLAPSEDGRIDRUNNER_H
