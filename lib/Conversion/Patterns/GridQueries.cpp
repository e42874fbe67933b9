//===- GridQueries.cpp - hpvm.instance_id / num_instances by patterns -----===//
#include "HPVM/Conversion/GridQueries.h"

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::hpvm;

GridQueryStrategy::~GridQueryStrategy() = default;

namespace {
/// A grid query (InstanceIdOp or NumInstancesOp) replaced by the strategy's
/// value.
template <typename QueryOp>
struct GridQueryLowering : OpRewritePattern<QueryOp> {
  GridQueryLowering(MLIRContext *context, GridQueryStrategy &strategy)
      : OpRewritePattern<QueryOp>(context), strategy(strategy) {}

  LogicalResult matchAndRewrite(QueryOp query,
                                PatternRewriter &rewriter) const override {
    rewriter.setInsertionPoint(query);
    Value value = strategy.lowerGridQuery(
        rewriter, query, std::is_same_v<QueryOp, InstanceIdOp>,
        static_cast<unsigned>(query.getDim()), query.getLevel());
    rewriter.replaceOp(query, value);
    return success();
  }

  GridQueryStrategy &strategy;
};
} // namespace

void mlir::hpvm::populateGridQueryPatterns(RewritePatternSet &patterns,
                                           GridQueryStrategy &strategy) {
  patterns.add<GridQueryLowering<InstanceIdOp>, GridQueryLowering<NumInstancesOp>>(
      patterns.getContext(), strategy);
}
