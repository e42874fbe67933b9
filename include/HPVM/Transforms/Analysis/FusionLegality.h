//===- FusionLegality.h - When two sibling nodes may be fused ---*- C++ -*-===//
// The HPVM paper's node-fusion legality, answered with a reason when refused.
#ifndef HPVM_TRANSFORMS_ANALYSIS_FUSIONLEGALITY_H
#define HPVM_TRANSFORMS_ANALYSIS_FUSIONLEGALITY_H

#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"

#include <string>

namespace mlir::hpvm {

/// Whether children `first` and `second` of `graph` (in that order: edges may
/// only go from first to second) can become one leaf. Returns the empty string
/// when legal, otherwise why not ("different extents in dimension x").
std::string checkFusionLegality(const DataflowGraph &graph, unsigned first,
                                unsigned second);

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_ANALYSIS_FUSIONLEGALITY_H
