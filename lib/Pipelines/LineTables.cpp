//===- LineTables.cpp - Line tables for generated functions --------------===//
// hpvm-line-tables (Passes.td).
#include "HPVM/Pipelines/Passes.h"

#include "HPVM/Conversion/DebugScopes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Path.h"

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
    ModuleOp module = getOperation();
    std::optional<Location> fallback;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (!function.isExternal() && !hpvm::hasSubprogram(function))
        locateCalls(function, fallback);
    // A nested pipeline: --mlir-print-ir-after-all and --mlir-timing show it.
    if (failed(runPipeline(lines, module)))
      signalPassFailure();
  }

  /// Gives the calls of `function`, which is about to get a subprogram, a
  /// source line where they have none, and the function too: LLVM refuses a
  /// call of an inlinable function without a location in a function with a
  /// subprogram. Such calls are the lowering's, in functions whose source had
  /// no lines (a Hetero-C++ graph function, which its frontend writes without
  /// debug information). The line is the function's, else its first op's,
  /// else line 0 of the program's first source file (`fallback`, found once).
  void locateCalls(LLVM::LLVMFuncOp function, std::optional<Location> &fallback) {
    auto hasLine = [](Location loc) {
      return static_cast<bool>(loc->findInstanceOf<FileLineColLoc>());
    };
    std::optional<Location> line;
    if (hasLine(function.getLoc()))
      line = function.getLoc();
    function.walk([&](Operation *op) {
      if (line)
        return WalkResult::interrupt();
      if (hasLine(op->getLoc()))
        line = FusedLoc::get(op->getContext(), {op->getLoc()->findInstanceOf<FileLineColLoc>()});
      return WalkResult::advance();
    });
    if (!line) {
      if (!fallback)
        fallback = programFile(getOperation());
      line = *fallback;
    }
    if (!hasLine(function.getLoc()))
      function->setLoc(*line);
    function.walk([&](LLVM::CallOp call) {
      if (!hasLine(call.getLoc()))
        call->setLoc(*line);
    });
  }

  /// Line 0 of the file of the module's first subprogram (the program's
  /// source), else of the module's own file, else of "<hpvm>".
  static Location programFile(ModuleOp module) {
    MLIRContext *context = module.getContext();
    std::optional<Location> found;
    module.walk([&](LLVM::LLVMFuncOp function) {
      auto scoped = function.getLoc()
                        ->findInstanceOf<FusedLocWith<LLVM::DISubprogramAttr>>();
      if (!scoped || !scoped.getMetadata().getFile())
        return WalkResult::advance();
      LLVM::DIFileAttr file = scoped.getMetadata().getFile();
      SmallString<256> path(file.getDirectory().getValue());
      llvm::sys::path::append(path, file.getName().getValue());
      found = FileLineColLoc::get(context, path, 0, 0);
      return WalkResult::interrupt();
    });
    if (found)
      return *found;
    if (auto own = module.getLoc()->findInstanceOf<FileLineColLoc>())
      return FileLineColLoc::get(context, own.getFilename(), 0, 0);
    return FileLineColLoc::get(context, "<hpvm>", 0, 0);
  }

  /// ensure-debug-info-scope-on-llvm-func, of line tables only.
  OpPassManager lines{ModuleOp::getOperationName()};
};
} // namespace
