//===- LineTables.cpp - Line tables for generated functions --------------===//
#include "LineTables.h"

#include "HPVM/Target/DebugScopes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {
struct LineTablesPass
    : public PassWrapper<LineTablesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LineTablesPass)

  StringRef getArgument() const final { return "hpvm-line-tables"; }
  StringRef getDescription() const final {
    return "Give generated functions subprograms and line tables";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    hpvm::dropDebugScopes(
        getOperation(),
        [](FunctionOpInterface function) {
          return isa<LLVM::LLVMFuncOp>(function) &&
                 !hpvm::hasSubprogram(function);
        },
        /*globals=*/false);
    OpPassManager lines(ModuleOp::getOperationName());
    LLVM::DIScopeForLLVMFuncOpPassOptions options;
    options.emissionKind = LLVM::DIEmissionKind::LineTablesOnly;
    lines.addPass(LLVM::createDIScopeForLLVMFuncOpPass(options));
    if (failed(runPipeline(lines, getOperation())))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::hpvm::createLineTablesPass() {
  return std::make_unique<LineTablesPass>();
}
