//===- WhereUsed.cpp - Lowerings run only where their dialect is ----------===//
// See WhereUsed.h.
#include "WhereUsed.h"

#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

using namespace mlir;

namespace {

/// Runs `lowering` (anchored on `anchor`: the module itself, or func.func) on
/// each op of that kind that holds an op of the dialect `dialect`.
struct WhereUsed : public PassWrapper<WhereUsed, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(WhereUsed)

  WhereUsed(StringRef argument, StringRef dialect, StringRef anchor,
            std::unique_ptr<Pass> pass)
      : argument(argument), dialect(dialect), lowering(anchor) {
    lowering.addPass(std::move(pass));
  }
  WhereUsed(const WhereUsed &other)
      : PassWrapper(other), argument(other.argument), dialect(other.dialect),
        lowering(other.lowering) {}

  StringRef getArgument() const final { return argument; }
  // Timings and crash reproducers name which lowering this is.
  StringRef getName() const final { return argument; }
  StringRef getDescription() const final {
    return "a lowering run only on the IR that holds ops of its dialect";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    lowering.getDependentDialects(registry);
  }

  bool holdsDialect(Operation *root) const {
    return root
        ->walk([&](Operation *op) {
          Dialect *owner = op->getDialect();
          return owner && owner->getNamespace() == dialect ? WalkResult::interrupt()
                                                           : WalkResult::advance();
        })
        .wasInterrupted();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> targets;
    if (lowering.getOpName() == ModuleOp::getOperationName()) {
      if (holdsDialect(module))
        targets.push_back(module);
    } else {
      for (Operation &op : module.getOps())
        if (op.getName().getStringRef() == lowering.getOpName() && holdsDialect(&op))
          targets.push_back(&op);
    }
    // Nothing to lower: the module is unchanged, and the pass manager need
    // not verify it again.
    if (targets.empty())
      return markAllAnalysesPreserved();
    for (Operation *target : targets)
      if (failed(runPipeline(lowering, target)))
        return signalPassFailure();
  }

  std::string argument, dialect;
  OpPassManager lowering;
};

} // namespace

std::unique_ptr<Pass> mlir::hpvm::createLinalgToLoopsWhereUsed() {
  return std::make_unique<WhereUsed>("hpvm-linalg-to-loops-where-used", "linalg",
                                     func::FuncOp::getOperationName(),
                                     createConvertLinalgToLoopsPass());
}

std::unique_ptr<Pass> mlir::hpvm::createVectorToLLVMWhereUsed() {
  return std::make_unique<WhereUsed>("hpvm-vector-to-llvm-where-used", "vector",
                                     ModuleOp::getOperationName(),
                                     createConvertVectorToLLVMPass());
}
