//===- GridQueries.h - hpvm.instance_id / num_instances by patterns -*- C++ -*-===//
// The grid queries of a leaf are lowered by the same patterns on every
// target; what a query becomes is the target's strategy.
#ifndef HPVM_CONVERSION_GRIDQUERIES_H
#define HPVM_CONVERSION_GRIDQUERIES_H

#include "mlir/IR/Builders.h"

namespace mlir {
class RewritePatternSet;

namespace hpvm {

/// How one target reads the grid of the instance that runs a leaf.
class GridQueryStrategy {
public:
  virtual ~GridQueryStrategy();
  /// The value that replaces `query`, an `hpvm.instance_id` (`isId`) or
  /// `hpvm.num_instances` of dimension `dim` (0 to 2) at `level` (0: the
  /// leaf's own grid, 1: its parent's, ...), built with `b` before `query`.
  virtual Value lowerGridQuery(OpBuilder &b, Operation *query, bool isId,
                               unsigned dim, unsigned level) = 0;
};

/// Adds the patterns that replace `hpvm.instance_id` and `hpvm.num_instances`
/// by what `strategy` builds (it must outlive the patterns).
void populateGridQueryPatterns(RewritePatternSet &patterns,
                               GridQueryStrategy &strategy);

} // namespace hpvm
} // namespace mlir

#endif // HPVM_CONVERSION_GRIDQUERIES_H
