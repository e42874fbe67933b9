//===- TranslateToLLVMIR.cpp - HPVM programs to LLVM IR -------------------===//
// Lowers a module with hpvm-lower-to-llvm-pipeline and writes LLVM IR.
#include "HPVM/Target/LLVMIR.h"

#include "HPVM/Pipelines/Pipelines.h"
#include "HPVM/Tools/Registration.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

using namespace mlir;

void mlir::hpvm::registerToLLVMIRTranslation() {
  TranslateFromMLIRRegistration registration(
      "hpvm-to-llvmir",
      "lower an HPVM program for the CPU and write it as LLVM IR",
      [](Operation *op, llvm::raw_ostream &output) -> LogicalResult {
        // Diagnostics point at the source (C or MLIR); dumping the op being
        // lowered would bury them.
        op->getContext()->printOpOnDiagnostic(false);
        PassManager pm(op->getContext());
        buildHPVMLowerToLLVMPipeline(pm, CPUPipelineOptions());
        if (failed(pm.run(op)))
          return failure();
        llvm::LLVMContext llvmContext;
        std::unique_ptr<llvm::Module> module =
            translateModuleToLLVMIR(op, llvmContext);
        // Not op->emitError: that would print the whole lowered module.
        if (!module)
          return emitError(op->getLoc(), "failed to translate the lowered program "
                                         "to LLVM IR (see the errors above)");
        module->print(output, nullptr);
        return success();
      },
      [](DialectRegistry &registry) {
        registerHPVMToolDialects(registry);
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
      });
}
