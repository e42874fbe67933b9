//===- LineTables.cpp - Line tables for generated functions --------------===//
// hpvm-line-tables (Passes.td).
#include "HPVM/Pipelines/Passes.h"

#include "HPVM/Conversion/DebugScopes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMLINETABLES
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {
struct LineTablesPass : public hpvm::impl::HPVMLineTablesBase<LineTablesPass> {
  LineTablesPass() {
    LLVM::DIScopeForLLVMFuncOpPassOptions options;
    options.emissionKind = LLVM::DIEmissionKind::LineTablesOnly;
    lines.addPass(LLVM::createDIScopeForLLVMFuncOpPass(options));
  }
  LineTablesPass(const LineTablesPass &other)
      : HPVMLineTablesBase(other), lines(other.lines) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    HPVMLineTablesBase::getDependentDialects(registry);
    lines.getDependentDialects(registry);
  }

  void runOnOperation() override {
    hpvm::dropDebugScopes(
        getOperation(),
        [](FunctionOpInterface function) {
          return isa<LLVM::LLVMFuncOp>(function) &&
                 !hpvm::hasSubprogram(function);
        },
        /*globals=*/false);
    // A nested pipeline: --mlir-print-ir-after-all and --mlir-timing show it.
    if (failed(runPipeline(lines, getOperation())))
      signalPassFailure();
  }

  /// ensure-debug-info-scope-on-llvm-func, of line tables only.
  OpPassManager lines{ModuleOp::getOperationName()};
};
} // namespace
