//===- Pipelines.cpp - hpvm-lower-to-<target>-pipeline --------------------===//
// The CPU pipeline and the full pipeline to the llvm dialect.
#include "HPVM/Pipelines/Pipelines.h"

#include "HPVM/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hpvm::buildHPVMLowerToCPUPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  // Tensor ops become linalg on buffers; programs without them are unchanged.
  pm.addPass(createConvertHPVMTensorToLinalg());
  ConvertHPVMToCPUOptions cpuOptions;
  cpuOptions.vectorizeTiles = options.vectorizeTiles;
  pm.addPass(createConvertHPVMToCPU(cpuOptions));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.cleanup) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void mlir::hpvm::buildHPVMLowerToLLVMPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  buildHPVMLowerToCPUPipeline(pm, options);
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.cleanup) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void mlir::hpvm::registerHPVMPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "hpvm-lower-to-cpu-pipeline",
      "Lower HPVM graphs and host ops to calls of the HPVM runtime on the CPU",
      buildHPVMLowerToCPUPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "hpvm-lower-to-llvm-pipeline",
      "Lower an HPVM program for the CPU all the way to the llvm dialect",
      buildHPVMLowerToLLVMPipeline);
}
