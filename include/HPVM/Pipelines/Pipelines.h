//===- Pipelines.h - hpvm-lower-to-<target>-pipeline ------------*- C++ -*-===//
// Pass pipelines from the hpvm dialect to a target, built like upstream's
// GPUToNVVMPipeline: an options struct, a build function and a registration.
#ifndef HPVM_PIPELINES_PIPELINES_H
#define HPVM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::hpvm {

/// The pipelines' options, one per entry of the option table (Options.def).
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
#define HPVM_OPTION(TYPE, FIELD, KEY, DEFAULT, PASS, PASS_FIELD, HELP)                 \
  PassOptions::Option<TYPE> FIELD{*this, KEY, llvm::cl::desc(HELP),                    \
                                  llvm::cl::init(DEFAULT)};
#define HPVM_LIST(FIELD, KEY, PASS, PASS_FIELD, HELP)                                   \
  PassOptions::ListOption<std::string> FIELD{*this, KEY, llvm::cl::desc(HELP)};
#include "HPVM/Pipelines/Options.def"
};

/// hpvm-apply-knobs with `options.knobs`, when it names a configuration: the
/// pipelines' first pass, and all the compiler library runs when it emits the
/// hpvm dialect.
void addHPVMApplyKnobs(OpPassManager &pm, const CPUPipelineOptions &options);

/// hpvm-lower-to-cpu-pipeline: the graphs and host ops to runtime calls
/// (func, scf, arith, memref and llvm dialects remain).
void buildHPVMLowerToCPUPipeline(OpPassManager &pm,
                                 const CPUPipelineOptions &options);

/// hpvm-lower-to-llvm-pipeline: the CPU lowering, then everything to the llvm
/// dialect, ready for translation to LLVM IR.
void buildHPVMLowerToLLVMPipeline(OpPassManager &pm,
                                  const CPUPipelineOptions &options);

/// Registers both pipelines and the passes they add around the conversions
/// (HPVM/Pipelines/Passes.h) with the pass registry.
void registerHPVMPipelines();

} // namespace mlir::hpvm

#endif // HPVM_PIPELINES_PIPELINES_H
