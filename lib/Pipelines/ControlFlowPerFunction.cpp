//===- ControlFlowPerFunction.cpp - cf-to-llvm function by function -------===//
// hpvm-asserts-to-llvm and hpvm-cf-to-llvm-in-function (Passes.td): upstream's
// convert-cf-to-llvm is a module pass for the one pattern that declares
// functions in the module (cf.assert's call of abort). Lowered HPVM programs
// have no cf.assert, and on a graph of 10,000 leaves the module-wide conversion
// cost 0.45 s of 4.05 s on one thread. (A module pass choosing between the two
// at run time cost as much: the dynamic pipeline verifies the whole module
// after it.)
#include "HPVM/Pipelines/Passes.h"

#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
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
      return signalPassFailure();
    // A loop's annotation, which the latch branch carries as a discardable
    // attribute, as the branch's loop metadata.
    getOperation()->walk([](LLVM::BrOp branch) {
      if (auto annotation = dyn_cast_or_null<LLVM::LoopAnnotationAttr>(
              branch->getDiscardableAttr(hpvm::kLoopAnnotationAttrName))) {
        branch.setLoopAnnotationAttr(annotation);
        branch->removeDiscardableAttr(hpvm::kLoopAnnotationAttrName);
      }
    });
  }

  std::shared_ptr<LLVMTypeConverter> converter;
  FrozenRewritePatternSet patterns;
};

/// cf.assert to the llvm dialect (it declares abort and the message's
/// printing in the module): only the asserts are converted, so a module
/// without any costs one walk.
struct AssertsToLLVM : public hpvm::impl::HPVMAssertsToLLVMBase<AssertsToLLVM> {

  void runOnOperation() override {
    SmallVector<cf::AssertOp> asserts;
    getOperation().walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return markAllAnalysesPreserved();
    SymbolTable symbols(getOperation());
    for (cf::AssertOp op : asserts)
      lowerAssert(symbols, op);
  }

  /// A unique name for a string of the asserts.
  std::string stringName(SymbolTable &symbols) {
    std::string name;
    do
      name = "__hpvm_assert_" + std::to_string(strings++);
    while (symbols.lookup(name));
    return name;
  }

  /// `cf.assert %ok, "message"` as a branch to a block that reports the message
  /// and the assert's location through the runtime (hpvm_rt_assert_failed: an
  /// error of the program, which ends it with status 1 or returns to
  /// hpvm_rt_call_guarded), then `llvm.unreachable`.
  void lowerAssert(SymbolTable &symbols, cf::AssertOp op) {
    Location loc = op.getLoc();
    std::string where = "compiled code";
    if (auto line = loc->findInstanceOf<FileLineColLoc>())
      where = (line.getFilename().getValue() + ":" + Twine(line.getLine()) + ":" +
               Twine(line.getColumn()))
                  .str();
    Block *before = op->getBlock();
    Block *after = before->splitBlock(op->getNextNode());
    OpBuilder b(op->getContext());
    Block *failure = b.createBlock(after);
    b.setInsertionPointToEnd(failure);
    auto text = [&](StringRef value) {
      std::string name = stringName(symbols);
      Value address = LLVM::createGlobalString(loc, b, name, (value + Twine('\0')).str(),
                                               LLVM::Linkage::Private);
      symbols.insert(SymbolTable::lookupSymbolIn(getOperation(), name));
      return address;
    };
    Value message = text(op.getMsg());
    Value at = text(where);
    hpvm::abi::call(b, loc, getOperation(), hpvm::abi::RuntimeFn::AssertFailed,
                    ValueRange{message, at});
    LLVM::UnreachableOp::create(b, loc);
    b.setInsertionPoint(op);
    LLVM::CondBrOp::create(b, loc, op.getArg(), after, ValueRange{}, failure, ValueRange{});
    op.erase();
  }

  unsigned strings = 0;
};

} // namespace
