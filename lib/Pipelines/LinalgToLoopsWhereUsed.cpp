//===- LinalgToLoopsWhereUsed.cpp - linalg to loops, only where needed ----===//
// See LinalgToLoopsWhereUsed.h.
#include "LinalgToLoopsWhereUsed.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {

struct LinalgToLoopsWhereUsed
    : public PassWrapper<LinalgToLoopsWhereUsed, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LinalgToLoopsWhereUsed)

  LinalgToLoopsWhereUsed() : loops(func::FuncOp::getOperationName()) {
    loops.addPass(createConvertLinalgToLoopsPass());
  }
  LinalgToLoopsWhereUsed(const LinalgToLoopsWhereUsed &other)
      : PassWrapper(other), loops(other.loops) {}

  StringRef getArgument() const final { return "hpvm-linalg-to-loops-where-used"; }
  StringRef getDescription() const final {
    return "convert-linalg-to-loops on the functions that hold linalg ops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    loops.getDependentDialects(registry);
  }

  void runOnOperation() override {
    bool changed = false;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      bool usesLinalg = function
                            .walk([](Operation *op) {
                              return isa<linalg::LinalgDialect>(op->getDialect())
                                         ? WalkResult::interrupt()
                                         : WalkResult::advance();
                            })
                            .wasInterrupted();
      if (!usesLinalg)
        continue;
      changed = true;
      if (failed(runPipeline(loops, function)))
        return signalPassFailure();
    }
    // Nothing to lower: the module is unchanged, and the pass manager need
    // not verify it again.
    if (!changed)
      markAllAnalysesPreserved();
  }

  OpPassManager loops;
};

} // namespace

std::unique_ptr<Pass> mlir::hpvm::createLinalgToLoopsWhereUsed() {
  return std::make_unique<LinalgToLoopsWhereUsed>();
}
