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
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

// The options of the pipeline hpvm-to-llvmir runs: the options string of the
// compiler library (hpvmCompileBuffer, hpvm-cc), read by the pipeline's own
// parser from the option table (HPVM/Pipelines/Options.def).
static llvm::cl::opt<std::string> clOptions(
    "hpvm-options", llvm::cl::init(""),
    llvm::cl::desc("hpvm-to-llvmir: options of hpvm-lower-to-llvm-pipeline, as "
                   "the compiler library takes them (\"devices=opencl "
                   "inline-leaves=false\")"));

LogicalResult mlir::hpvm::lowerToLLVMIR(Operation *op,
                                        const CPUPipelineOptions &options,
                                        llvm::raw_ostream &output,
                                        bool bitcode) {
  PassManager pm(op->getContext());
  buildHPVMLowerToLLVMPipeline(pm, options);
  if (failed(pm.run(op)))
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module = translateModuleToLLVMIR(op, llvmContext);
  // Not op->emitError: that would print the whole lowered module.
  if (!module)
    return emitError(op->getLoc(), "failed to translate the lowered program "
                                   "to LLVM IR (see the errors above)");
  if (bitcode)
    llvm::WriteBitcodeToFile(*module, output);
  else
    module->print(output, nullptr);
  return success();
}

void mlir::hpvm::registerToLLVMIRTranslation() {
  TranslateFromMLIRRegistration registration(
      "hpvm-to-llvmir",
      "lower an HPVM program for the CPU and write it as LLVM IR",
      [](Operation *op, llvm::raw_ostream &output) -> LogicalResult {
        // Diagnostics point at the source (C or MLIR); dumping the op being
        // lowered would bury them.
        op->getContext()->printOpOnDiagnostic(false);
        CPUPipelineOptions options;
        std::string errors;
        llvm::raw_string_ostream stream(errors);
        if (failed(options.parseFromString(clOptions, stream)))
          return emitError(op->getLoc())
                 << "hpvm-to-llvmir: invalid --hpvm-options '" << clOptions
                 << "': " << StringRef(errors).trim();
        return lowerToLLVMIR(op, options, output);
      },
      [](DialectRegistry &registry) {
        registerHPVMToolDialects(registry);
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
      });
}
