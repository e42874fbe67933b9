//===- ControlFlowPerFunction.cpp - cf-to-llvm function by function -------===//
// hpvm-asserts-to-llvm and hpvm-cf-to-llvm-in-function (Passes.td): upstream's
// convert-cf-to-llvm is a module pass for the one pattern that declares
// functions in the module (cf.assert's call of abort). Lowered HPVM programs
// have no cf.assert, and on a graph of 10,000 leaves the module-wide conversion
// cost 0.45 s of 4.05 s on one thread. (A module pass choosing between the two
// at run time cost as much: the dynamic pipeline verifies the whole module
// after it.)
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMASSERTSTOLLVM
#define GEN_PASS_DEF_HPVMCONTROLFLOWTOLLVMINFUNCTION
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// The patterns of convert-cf-to-llvm but cf.assert's, on one function (or
/// any op).
struct ControlFlowInFunction
    : public hpvm::impl::HPVMControlFlowToLLVMInFunctionBase<ControlFlowInFunction> {

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
struct AssertsToLLVM : public hpvm::impl::HPVMAssertsToLLVMBase<AssertsToLLVM> {

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
