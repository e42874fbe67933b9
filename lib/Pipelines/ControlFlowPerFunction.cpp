//===- ControlFlowPerFunction.cpp - cf-to-llvm function by function -------===//
// See ControlFlowPerFunction.h.
#include "ControlFlowPerFunction.h"

#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace {

/// The patterns of convert-cf-to-llvm but cf.assert's, on one function (or
/// any op).
struct ControlFlowInFunction
    : public PassWrapper<ControlFlowInFunction, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ControlFlowInFunction)

  StringRef getArgument() const final { return "hpvm-cf-to-llvm-in-function"; }
  StringRef getDescription() const final {
    return "cf-to-llvm on one function (no cf.assert)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

  // The type converter and the patterns are built once per pass instance,
  // not per function (the patterns hold the converter by reference).
  LogicalResult initialize(MLIRContext *context) override {
    converter = std::make_shared<LLVMTypeConverter>(context);
    RewritePatternSet set(context);
    cf::populateControlFlowToLLVMConversionPatterns(*converter, set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    LLVMConversionTarget target(getContext());
    if (failed(applyPartialConversion(getOperation(), target, patterns)))
      signalPassFailure();
  }

  std::shared_ptr<LLVMTypeConverter> converter;
  FrozenRewritePatternSet patterns;
};

/// cf.assert to the llvm dialect (it declares abort and the message's
/// printing in the module): only the asserts are converted, so a module
/// without any costs one walk.
struct AssertsToLLVM
    : public PassWrapper<AssertsToLLVM, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AssertsToLLVM)

  StringRef getArgument() const final { return "hpvm-asserts-to-llvm"; }
  StringRef getDescription() const final {
    return "cf.assert to the llvm dialect, the rest of the IR untouched";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    SmallVector<Operation *> asserts;
    getOperation().walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return markAllAnalysesPreserved();
    LLVMTypeConverter converter(&getContext());
    RewritePatternSet patterns(&getContext());
    cf::populateAssertToLLVMConversionPattern(converter, patterns);
    LLVMConversionTarget target(getContext());
    target.addIllegalOp<cf::AssertOp>();
    if (failed(applyPartialConversion(asserts, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::hpvm::createAssertsToLLVM() {
  return std::make_unique<AssertsToLLVM>();
}

std::unique_ptr<Pass> mlir::hpvm::createControlFlowToLLVMInFunction() {
  return std::make_unique<ControlFlowInFunction>();
}
