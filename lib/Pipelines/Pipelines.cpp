//===- Pipelines.cpp - hpvm-lower-to-<target>-pipeline --------------------===//
// The CPU pipeline and the full pipeline to the llvm dialect; functions
// already in the LLVM dialect bypass the lowering (HostCodeBypass.h).
#include "HPVM/Pipelines/Pipelines.h"

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Transforms/Passes.h"
#include "HostCodeBypass.h"
#include "LinalgToLoopsWhereUsed.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::hpvm;

/// The graphs and host ops to runtime calls: afterwards, host code imported
/// from C is entirely in the LLVM dialect again and bypasses what follows.
static void addGraphLowering(OpPassManager &pm, const CPUPipelineOptions &options) {
  // Warnings about the program as written come before anything changes it.
  pm.addPass(createHPVMCheckReplication());
  // Kernel versions of the GPU-hinted nodes, compiled and embedded before the
  // host lowering, which calls them.
  if (!options.devices.empty()) {
    pm.addPass(createConvertHPVMToGPU());
    HPVMEmbedKernelsOptions embed;
    embed.devices.assign(options.devices.begin(), options.devices.end());
    embed.chip = options.cudaChip;
    embed.dumpDir = options.dumpKernels;
    pm.addPass(createHPVMEmbedKernels(embed));
  }
  // Tensor ops become linalg on buffers; programs without them are unchanged.
  pm.addPass(createConvertHPVMTensorToLinalg());
  // Lane variants of the replicated imported-C leaves and tile variants of
  // structured ones, which the CPU lowering runs groups of instances through
  // (after the kernels: devices run the scalar leaves).
  if (options.vectorize || options.vectorizeTiles) {
    ConvertHPVMToVectorOptions vectorOptions;
    vectorOptions.importedC = options.vectorize;
    vectorOptions.tiles = options.vectorizeTiles;
    vectorOptions.remarks = options.vectorizeRemarks;
    vectorOptions.vectorBits = options.vectorBits;
    vectorOptions.lanes = options.lanes;
    vectorOptions.rows = options.rows;
    pm.addPass(createConvertHPVMToVector(vectorOptions));
  }
  ConvertHPVMToCPUOptions cpuOptions;
  cpuOptions.collapseGrids = options.collapseGrids;
  pm.addPass(createConvertHPVMToCPU(cpuOptions));
}

static void addCleanup(OpPassManager &pm, const CPUPipelineOptions &options) {
  if (options.cleanup) {
    // Per function: functions are isolated from above, so the pass manager
    // cleans them in parallel, and each greedy worklist stays small.
    for (OpPassManager *nested : {&pm.nest<func::FuncOp>(), &pm.nest<LLVM::LLVMFuncOp>()}) {
      nested->addPass(createCanonicalizerPass());
      nested->addPass(createCSEPass());
    }
  }
}

void mlir::hpvm::buildHPVMLowerToCPUPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  addGraphLowering(pm, options);
  addHostCodeBypass(pm, [&](OpPassManager &lowering) {
    lowering.addPass(createLinalgToLoopsWhereUsed());
    addCleanup(lowering, options);
  });
}

void mlir::hpvm::buildHPVMLowerToLLVMPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  addGraphLowering(pm, options);
  addHostCodeBypass(pm, [&](OpPassManager &lowering) {
    lowering.addPass(createLinalgToLoopsWhereUsed());
    addCleanup(lowering, options);
    lowering.addPass(createLowerAffinePass());
    lowering.addPass(createSCFToControlFlowPass());
    lowering.addPass(memref::createExpandStridedMetadataPass());
    // Buffers come from the runtime's _mlir_memref_to_llvm_alloc / _free, which
    // keep large blocks for reuse (runtime/src/mem/buffer_cache.c).
    FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
    memrefOptions.useGenericFunctions = true;
    lowering.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
    lowering.addPass(createConvertVectorToLLVMPass());
    lowering.addPass(createConvertMathToLLVMPass());
    lowering.addPass(createArithToLLVMConversionPass());
    lowering.addPass(createConvertIndexToLLVMPass());
    lowering.addPass(createConvertControlFlowToLLVMPass());
    lowering.addPass(createConvertFuncToLLVMPass());
    lowering.addPass(createReconcileUnrealizedCastsPass());
    addCleanup(lowering, options);
  });
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
