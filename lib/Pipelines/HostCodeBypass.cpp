//===- HostCodeBypass.cpp - Host code around the LLVM lowering ------------===//
// hpvm-host-code-bypass (Passes.td): why LLVM-dialect functions skip the
// lowering is in its description.
#include "HPVM/Pipelines/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMHOSTCODEBYPASS
#include "HPVM/Pipelines/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;

namespace {

/// The functions set aside, in the order they had in the module.
struct Stash {
  OwningOpRef<ModuleOp> holder;
  SmallVector<LLVM::LLVMFuncOp> functions;
  /// llvm.mlir.global_ctors / global_dtors: their verifier wants a definition
  /// behind every symbol they name, which a stand-in declaration is not, so
  /// they wait beside the functions (C++ static initializers, destructors of
  /// globals, C's constructor attribute).
  SmallVector<Operation *> structors;
};

/// Marks the declarations that stand in for functions set aside.
constexpr llvm::StringLiteral kStandInAttr = "hpvm_set_aside";

/// Whether every op in the body of the definition `function` is in a dialect
/// for which `accept` holds.
static bool bodyIsIn(LLVM::LLVMFuncOp function,
                     function_ref<bool(Dialect *)> accept) {
  if (function.isExternal())
    return false;
  WalkResult result = function.getBody().walk([&](Operation *op) {
    return accept(op->getDialect()) ? WalkResult::advance()
                                    : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `function` is entirely LLVM: nothing in the lowering applies to it.
static bool isEntirelyLLVM(LLVM::LLVMFuncOp function) {
  return bodyIsIn(function, [](Dialect *d) { return isa<LLVM::LLVMDialect>(d); });
}

/// Whether `function` is LLVM code plus the glue the CPU lowering writes into
/// host code (arith, scf, cf and index ops around runtime calls).
static bool isHostCode(LLVM::LLVMFuncOp function) {
  return bodyIsIn(function, [](Dialect *d) {
    return isa<LLVM::LLVMDialect, arith::ArithDialect, scf::SCFDialect,
               cf::ControlFlowDialect, index::IndexDialect>(d);
  });
}

/// Lowers the glue in host code to the LLVM dialect with a dialect
/// conversion, which leaves the blocks C wrote as they are.
static LogicalResult lowerHostGlue(LLVM::LLVMFuncOp function) {
  MLIRContext *context = function->getContext();
  LLVMTypeConverter converter(context);
  RewritePatternSet patterns(context);
  populateSCFToControlFlowConversionPatterns(patterns);
  arith::populateArithToLLVMConversionPatterns(converter, patterns);
  cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  index::populateIndexToLLVMConversionPatterns(converter, patterns);
  LLVMConversionTarget target(*context);
  target.addIllegalDialect<arith::ArithDialect, scf::SCFDialect,
                           cf::ControlFlowDialect, index::IndexDialect>();
  return applyPartialConversion(function, target, std::move(patterns));
}

/// hpvm-host-code-bypass: sets aside the functions entirely in the LLVM
/// dialect, runs the lowering, and restores them.
struct HostCodeBypassPass
    : public hpvm::impl::HPVMHostCodeBypassBase<HostCodeBypassPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    for (const OpPassManager &pipeline : lowering)
      pipeline.getDependentDialects(registry);
  }

  void runOnOperation() override {
    Stash stash;
    bool changed = setAside(stash);
    // The lowering is a nested pipeline: --mlir-print-ir-after-all and
    // --mlir-timing show its passes.
    LogicalResult lowered = success();
    for (OpPassManager &pipeline : lowering)
      if (failed(lowered = runPipeline(pipeline, getOperation())))
        break;
    // Back even after a failure, so that the module printed is whole.
    changed |= restore(stash);
    if (failed(lowered))
      return signalPassFailure();
    // Without a function set aside, glue lowered or a lowering, the module is
    // unchanged (and the pass manager need not verify it again).
    if (!changed && lowering.empty())
      markAllAnalysesPreserved();
  }

  /// Moves the functions entirely in the LLVM dialect (after lowering the
  /// glue of host code) and the structors into `stash`; whether anything
  /// changed.
  bool setAside(Stash &stash) {
    ModuleOp module = getOperation();
    stash.holder = ModuleOp::create(UnknownLoc::get(&getContext()));
    OpBuilder holderBuilder = OpBuilder::atBlockEnd(stash.holder->getBody());
    bool changed = false;
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (!isa<LLVM::GlobalCtorsOp, LLVM::GlobalDtorsOp>(op))
        continue;
      op.remove();
      holderBuilder.insert(&op);
      stash.structors.push_back(&op);
      changed = true;
    }
    for (auto function :
         llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>())) {
      if (!isHostCode(function))
        continue;
      // Host code whose glue does not lower here stays for the pipeline. After
      // a successful conversion only LLVM ops are left (isHostCode).
      if (!isEntirelyLLVM(function)) {
        changed = true;
        if (failed(lowerHostGlue(function)))
          continue;
      }
      // A declaration keeps the symbol for calls and addressof; only
      // external linkage is valid on a declaration.
      OpBuilder b(function);
      auto standIn = cast<LLVM::LLVMFuncOp>(b.insert(function.cloneWithoutRegions()));
      standIn.setLinkage(LLVM::Linkage::External);
      standIn.removePersonalityAttr();
      standIn->setAttr(kStandInAttr, b.getUnitAttr());
      function->remove();
      holderBuilder.insert(function);
      stash.functions.push_back(function);
      changed = true;
    }
    return changed;
  }

  /// Puts the functions and structors of `stash` back; whether there were any.
  bool restore(Stash &stash) {
    ModuleOp module = getOperation();
    if (stash.functions.empty() && stash.structors.empty())
      return false;
    SymbolTable symbols(module);
    for (LLVM::LLVMFuncOp function : stash.functions) {
      function->remove();
      auto standIn = symbols.lookup<LLVM::LLVMFuncOp>(function.getSymName());
      if (standIn && standIn->hasAttr(kStandInAttr)) {
        // Back in its place, with its own attributes and body.
        module.getBody()->getOperations().insert(standIn->getIterator(),
                                                 function);
        standIn.erase();
      } else {
        // The lowering dropped or replaced the declaration: nothing calls
        // the function through it any more, but it stays, as C wrote it.
        module.getBody()->push_back(function);
        symbols.insert(function);
      }
    }
    // After the functions they name, so that the module verifies.
    for (Operation *op : stash.structors) {
      op->remove();
      module.getBody()->push_back(op);
    }
    return true;
  }
};

} // namespace
