//===- Pipelines.cpp - hpvm-lower-to-<target>-pipeline --------------------===//
// The CPU pipeline and the full pipeline to the llvm dialect; functions
// already in the LLVM dialect bypass the lowering (hpvm-host-code-bypass).
#include "HPVM/Pipelines/Pipelines.h"

#include "HPVM/Conversion/Passes.h"
#include "HPVM/Pipelines/Passes.h"
#include "HPVM/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
/// The PASS of the table's options that only shape the pipeline.
struct NoneOptions {
  int none;
};

template <typename To, typename From>
void assignOption(To &to, const From &from) {
  to = from;
}
template <typename To>
void assignOption(To &to, const CPUPipelineOptions::ListOption<std::string> &from) {
  to.assign(from.begin(), from.end());
}
} // namespace

/// The options of the pass whose options struct is `PassOptionsT`: its
/// defaults, and each entry of the option table (Options.def) that names the
/// pass with the pipeline's value.
template <typename PassOptionsT>
static PassOptionsT passOptions(const CPUPipelineOptions &options) {
  PassOptionsT pass;
#define HPVM_OPTION(TYPE, FIELD, KEY, DEFAULT, PASS, PASS_FIELD, HELP)                 \
  if constexpr (std::is_same_v<PassOptionsT, PASS##Options>)                            \
    assignOption(pass.PASS_FIELD, options.FIELD);
#define HPVM_LIST(FIELD, KEY, PASS, PASS_FIELD, HELP)                                   \
  HPVM_OPTION(void, FIELD, KEY, , PASS, PASS_FIELD, HELP)
#include "HPVM/Pipelines/Options.def"
  return pass;
}

void mlir::hpvm::addHPVMApplyKnobs(OpPassManager &pm,
                                   const CPUPipelineOptions &options) {
  if (options.knobs.empty())
    return;
  pm.addPass(createHPVMApplyKnobs(passOptions<HPVMApplyKnobsOptions>(options)));
}

/// The graphs and host ops to runtime calls: afterwards, host code imported
/// from C is entirely in the LLVM dialect again and bypasses what follows.
static void addGraphLowering(OpPassManager &pm, const CPUPipelineOptions &options) {
  // The knobs name the leaves as written: before any fusion renames them.
  addHPVMApplyKnobs(pm, options);
  // Warnings about the program as written come before anything changes it.
  pm.addPass(createHPVMCheckReplication());
  // --distribute=mpi: the layouts of the streaming items for the runtime's MPI layer.
  if (options.distribute == "mpi")
    pm.addPass(createHPVMDescribeStreamItems());
  if (options.fuseNodes) {
    HPVMFuseNodesOptions fuse;
    fuse.greedy = true;
    pm.addPass(createHPVMFuseNodes(fuse));
  }
  // Before the fusion, which then finds each blocked convolution a leaf of
  // its own as it was.
  // The tensor leaves only where no device takes them (its kernels read NCHW).
  if (options.blockTensorLayout) {
    HPVMBlockTensorLayoutOptions block;
    block.tensorLeaves = options.devices.empty();
    pm.addPass(createHPVMBlockTensorLayout(block));
  }
  if (options.fuseTensorNodes) {
    HPVMFuseTensorNodesOptions fuse;
    fuse.remarks = false;
    pm.addPass(createHPVMFuseTensorNodes(fuse));
  }
  // After the fusion, which makes the chains; the tensor leaves only where
  // no device takes them (their kernels take the whole batch).
  if (options.tileTensorBatch) {
    HPVMTileTensorBatchOptions tile;
    tile.tensorLeaves = options.devices.empty();
    pm.addPass(createHPVMTileTensorBatch(tile));
  }
  // Kernel versions of the GPU-hinted nodes, compiled and embedded before the
  // host lowering, which calls them.
  if (!options.devices.empty()) {
    pm.addPass(createConvertHPVMToGPU(passOptions<ConvertHPVMToGPUOptions>(options)));
    pm.addPass(createHPVMEmbedKernels(passOptions<HPVMEmbedKernelsOptions>(options)));
  }
  // Tensor ops become linalg on buffers; programs without them are unchanged.
  pm.addPass(createConvertHPVMTensorToLinalg());
  // Lane variants of the replicated imported-C leaves and tile variants of
  // structured ones, which the CPU lowering runs groups of instances through
  // (after the kernels: devices run the scalar leaves).
  if (options.vectorize || options.vectorizeTiles)
    pm.addPass(createHPVMVectorize(passOptions<HPVMVectorizeOptions>(options)));
  // The loops of leaves instantiated once on the pool (after the tiles and
  // lane variants, which take the grids).
  if (options.parallelLeaves)
    pm.addPass(createHPVMParallelLeafLoops());
  pm.addPass(createConvertHPVMToCPU(passOptions<ConvertHPVMToCPUOptions>(options)));
}

/// Passes that work inside one function at a time, run per function:
/// functions are isolated from above, so the pass manager runs them on every
/// core, and each pass's worklist stays the size of one function. Both kinds
/// of function are there until func-to-llvm (leaves are func.func, the
/// lowering's range and task functions llvm.func).
static void addPerFunction(OpPassManager &pm,
                           function_ref<void(OpPassManager &)> addPasses) {
  addPasses(pm.nest<func::FuncOp>());
  addPasses(pm.nest<LLVM::LLVMFuncOp>());
}

/// hpvm-host-code-bypass around the passes `addLowering` adds: functions
/// already in the LLVM dialect are out of the module while they run.
static void addHostCodeBypass(OpPassManager &pm,
                              function_ref<void(OpPassManager &)> addLowering) {
  HPVMHostCodeBypassOptions bypass;
  addLowering(bypass.lowering.emplace_back(ModuleOp::getOperationName()));
  pm.addPass(createHPVMHostCodeBypass(std::move(bypass)));
}

static void addCleanup(OpPassManager &pm, const CPUPipelineOptions &options) {
  if (options.cleanup)
    addPerFunction(pm, [](OpPassManager &nested) {
      nested.addPass(createCanonicalizerPass());
      nested.addPass(createCSEPass());
    });
}

void mlir::hpvm::buildHPVMLowerToCPUPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  addGraphLowering(pm, options);
  addHostCodeBypass(pm, [&](OpPassManager &lowering) {
    addPerFunction(lowering, [](OpPassManager &nested) {
      nested.addPass(createHPVMExpandStridedCopies());
    });
    lowering.addPass(createHPVMLinalgToLoopsWhereUsed());
    addCleanup(lowering, options);
  });
}

void mlir::hpvm::buildHPVMLowerToLLVMPipeline(
    OpPassManager &pm, const CPUPipelineOptions &options) {
  addGraphLowering(pm, options);
  addHostCodeBypass(pm, [&](OpPassManager &lowering) {
    addPerFunction(lowering, [](OpPassManager &nested) {
      nested.addPass(createHPVMExpandStridedCopies());
    });
    lowering.addPass(createHPVMLinalgToLoopsWhereUsed());
    addCleanup(lowering, options);
    addPerFunction(lowering, [](OpPassManager &nested) {
      // Loops over the lanes of a block marked for LLVM's loop vectorizer
      // (after the cleanup, which may rebuild loops without the mark).
      nested.addPass(createHPVMVectorizeLaneLoops());
      // Views (memref.subview) first: their offsets and strides come out as
      // affine.apply, which lower-affine then lowers.
      nested.addPass(memref::createExpandStridedMetadataPass());
      nested.addPass(createLowerAffinePass());
      nested.addPass(createSCFToControlFlowPass());
    });
    // Buffers come from the runtime's _mlir_memref_to_llvm_alloc / _free, which
    // keep large blocks for reuse (runtime/src/mem/buffer_cache.c).
    FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
    memrefOptions.useGenericFunctions = true;
    lowering.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
    // Module-wide: some vector ops lower to calls it declares in the module;
    // and only when there are vector ops (most graphs have none).
    lowering.addPass(createHPVMVectorToLLVMWhereUsed());
    addPerFunction(lowering, [](OpPassManager &nested) {
      nested.addPass(createConvertMathToLLVMPass());
      nested.addPass(createArithToLLVMConversionPass());
      nested.addPass(createConvertIndexToLLVMPass());
    });
    lowering.addPass(createHPVMAssertsToLLVM());
    addPerFunction(lowering, [](OpPassManager &nested) {
      nested.addPass(createHPVMControlFlowToLLVMInFunction());
    });
    lowering.addPass(createConvertFuncToLLVMPass());
    lowering.addNestedPass<LLVM::LLVMFuncOp>(createReconcileUnrealizedCastsPass());
    addCleanup(lowering, options);
  });
  // After the bypass: the C interface functions are made by func-to-llvm.
  pm.addPass(createHPVMGuardedEntryPoints());
  if (options.lineTables)
    pm.addPass(createHPVMLineTables());
  if (!options.sanitize.empty()) {
    pm.addPass(
        createHPVMSanitizeFunctions(passOptions<HPVMSanitizeFunctionsOptions>(options)));
  }
  // Last: the weights leave the module (or archive keys are resolved), so
  // that no pass before and no LLVM IR after carries them as text.
  pm.addPass(createHPVMExternalizeConstants(
      passOptions<HPVMExternalizeConstantsOptions>(options)));
}

void mlir::hpvm::registerHPVMPipelines() {
  registerHPVMPipelinesPasses();
  PassPipelineRegistration<CPUPipelineOptions>(
      "hpvm-lower-to-cpu-pipeline",
      "Lower HPVM graphs and host ops to calls of the HPVM runtime on the CPU",
      buildHPVMLowerToCPUPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "hpvm-lower-to-llvm-pipeline",
      "Lower an HPVM program for the CPU all the way to the llvm dialect",
      buildHPVMLowerToLLVMPipeline);
}
