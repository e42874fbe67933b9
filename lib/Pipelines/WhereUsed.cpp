//===- WhereUsed.cpp - Lowerings run only where their dialect is ----------===//
// hpvm-linalg-to-loops-where-used and hpvm-vector-to-llvm-where-used
// (Passes.td): some upstream lowerings cost a walk or a pattern driver over all
// the IR they are given even when it holds none of the ops they lower. These
// passes run such a lowering, as a nested pipeline, only on the IR that holds
// an op of its dialect, and otherwise change nothing (the pass manager then
// skips verifying the module again).
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMLINALGTOLOOPSWHEREUSED
#define GEN_PASS_DEF_HPVMVECTORTOLLVMWHEREUSED
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// Runs `lowering` (anchored on the module itself, or on func.func) on each op
/// of that kind that holds an op of the dialect `dialect`. `Base` is the
/// TableGen'd base of the pass `Derived`.
template <typename Derived, template <typename> class Base>
struct WhereUsed : public Base<Derived> {
  WhereUsed(StringRef dialect, StringRef anchor, std::unique_ptr<Pass> pass)
      : dialect(dialect), lowering(anchor) {
    lowering.addPass(std::move(pass));
  }
  WhereUsed(const WhereUsed &other)
      : Base<Derived>(other), dialect(other.dialect), lowering(other.lowering) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    Base<Derived>::getDependentDialects(registry);
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
    ModuleOp module = this->getOperation();
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
      return this->markAllAnalysesPreserved();
    for (Operation *target : targets)
      if (failed(this->runPipeline(lowering, target)))
        return this->signalPassFailure();
  }

  StringRef dialect;
  OpPassManager lowering;
};

struct LinalgToLoopsWhereUsed
    : public WhereUsed<LinalgToLoopsWhereUsed,
                       hpvm::impl::HPVMLinalgToLoopsWhereUsedBase> {
  LinalgToLoopsWhereUsed()
      : WhereUsed("linalg", func::FuncOp::getOperationName(),
                  createConvertLinalgToLoopsPass()) {}
};

struct VectorToLLVMWhereUsed
    : public WhereUsed<VectorToLLVMWhereUsed,
                       hpvm::impl::HPVMVectorToLLVMWhereUsedBase> {
  VectorToLLVMWhereUsed()
      : WhereUsed("vector", ModuleOp::getOperationName(),
                  createConvertVectorToLLVMPass()) {}
};

} // namespace
