//===- TilingLegality.h - When a replicated leaf may be tiled ---*- C++ -*-===//
// Whether hpvm-tile-nodes may split a child into tiles, with a reason when not.
#ifndef HPVM_TRANSFORMS_ANALYSIS_TILINGLEGALITY_H
#define HPVM_TRANSFORMS_ANALYSIS_TILINGLEGALITY_H

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include "llvm/ADT/SetVector.h"

#include <string>

namespace mlir::hpvm {

/// How an extent of the child's grid is known inside the tile leaf: the ops
/// of the parent that compute it (in program order) and the parent inputs
/// they read, which the tile nodes receive as extra inputs.
struct ExtentSlice {
  llvm::SetVector<Operation *> operations;
  llvm::SetVector<Value> parentInputs;
};

/// The parent's ops and inputs that compute `extent`, or failure when it
/// depends on anything but side-effect-free single-result ops without regions,
/// constants and the parent's inputs.
FailureOr<ExtentSlice> getExtentSlice(InternalOp parent, Value extent);

/// True when the last tile of size `size` along `extent` may be partial (the
/// extent is not a constant multiple of the size).
bool mayHavePartialTile(Value extent, int64_t size);

/// Whether child `index` of `graph` can become a grid of tiles of `sizes`
/// (x first). Returns the empty string when legal, otherwise why not.
std::string checkTilingLegality(const DataflowGraph &graph, unsigned index,
                                ArrayRef<int64_t> sizes);

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_ANALYSIS_TILINGLEGALITY_H
