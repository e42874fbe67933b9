//===- VectorToLLVMWhereUsed.cpp - vector to llvm, only where needed ------===//
// See VectorToLLVMWhereUsed.h.
#include "VectorToLLVMWhereUsed.h"

#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {

struct VectorToLLVMWhereUsed
    : public PassWrapper<VectorToLLVMWhereUsed, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorToLLVMWhereUsed)

  VectorToLLVMWhereUsed() : lowering(ModuleOp::getOperationName()) {
    lowering.addPass(createConvertVectorToLLVMPass());
  }
  VectorToLLVMWhereUsed(const VectorToLLVMWhereUsed &other)
      : PassWrapper(other), lowering(other.lowering) {}

  StringRef getArgument() const final { return "hpvm-vector-to-llvm-where-used"; }
  StringRef getDescription() const final {
    return "convert-vector-to-llvm on a module that holds vector ops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    lowering.getDependentDialects(registry);
  }

  void runOnOperation() override {
    bool usesVector = getOperation()
                          .walk([](Operation *op) {
                            return isa<vector::VectorDialect>(op->getDialect())
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          })
                          .wasInterrupted();
    // Nothing to lower: the module is unchanged, and the pass manager need
    // not verify it again.
    if (!usesVector)
      return markAllAnalysesPreserved();
    if (failed(runPipeline(lowering, getOperation())))
      signalPassFailure();
  }

  OpPassManager lowering;
};

} // namespace

std::unique_ptr<Pass> mlir::hpvm::createVectorToLLVMWhereUsed() {
  return std::make_unique<VectorToLLVMWhereUsed>();
}
