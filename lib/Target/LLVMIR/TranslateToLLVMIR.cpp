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

// Options of the pipeline that hpvm-to-llvmir runs (hpvm-cc passes them).
static llvm::cl::list<std::string> clDevices(
    "hpvm-devices", llvm::cl::CommaSeparated,
    llvm::cl::desc("hpvm-to-llvmir: devices the GPU-hinted nodes get kernel "
                   "versions for (cuda, opencl)"));
static llvm::cl::opt<std::string>
    clCudaChip("hpvm-cuda-chip", llvm::cl::init("sm_80"),
               llvm::cl::desc("hpvm-to-llvmir: the architecture of the PTX"));
static llvm::cl::opt<std::string> clDumpKernels(
    "hpvm-dump-kernels", llvm::cl::init(""),
    llvm::cl::desc("hpvm-to-llvmir: a directory receiving the device images"));

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
        for (const std::string &device : clDevices)
          options.devices.push_back(device);
        options.cudaChip = clCudaChip;
        options.dumpKernels = clDumpKernels;
        return lowerToLLVMIR(op, options, output);
      },
      [](DialectRegistry &registry) {
        registerHPVMToolDialects(registry);
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
      });
}
