//===- Pipelines.h - hpvm-lower-to-<target>-pipeline ------------*- C++ -*-===//
// Pass pipelines from the hpvm dialect to a target, built like upstream's
// GPUToNVVMPipeline: an options struct, a build function and a registration.
#ifndef HPVM_PIPELINES_PIPELINES_H
#define HPVM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::hpvm {

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> cleanup{
      *this, "cleanup",
      llvm::cl::desc("Canonicalize and CSE after the lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeTiles{
      *this, "vectorize-tiles",
      llvm::cl::desc("Run the instances of a tile row of structured leaves "
                     "in lock-step as vector code (hpvm-vectorize)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Run consecutive x instances of imported-C leaves as "
                     "vector lanes (hpvm-vectorize)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeRemarks{
      *this, "vectorize-remarks",
      llvm::cl::desc("Report which leaves hpvm-vectorize vectorized "
                     "and why the others were not"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Bits of the target's vector registers for "
                     "hpvm-vectorize (0: the host CPU's)"),
      llvm::cl::init(0)};
  PassOptions::Option<unsigned> lanes{
      *this, "lanes",
      llvm::cl::desc("Lanes of the lane variants of imported-C leaves "
                     "(hpvm-vectorize; 0: a cache line, or one "
                     "register when wider)"),
      llvm::cl::init(0)};
  PassOptions::Option<unsigned> rows{
      *this, "rows",
      llvm::cl::desc("Rows of their block variants (hpvm-vectorize; "
                     "0: from the register file, 1: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> collapseGrids{
      *this, "collapse-grids",
      llvm::cl::desc("Run a grid of tiles and its tile leaf as one "
                     "parallel-for (convert-hpvm-to-cpu)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelLeaves{
      *this, "parallel-leaves",
      llvm::cl::desc("Run the large parallel loops of leaves instantiated once "
                     "(tensor graphs' elementwise ops, softmax, norms) on the "
                     "runtime's thread pool (hpvm-parallel-leaf-loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> inlineLeaves{
      *this, "inline-leaves",
      llvm::cl::desc("Inline each leaf function with one caller into it "
                     "(convert-hpvm-to-cpu)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> knobs{
      *this, "knobs",
      llvm::cl::desc("A configuration of approximation knobs (JSON) applied "
                     "to the tensor ops first (hpvm-apply-knobs; hpvm-cc "
                     "--knobs; empty: none)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> fuseNodes{
      *this, "fuse-nodes",
      llvm::cl::desc("Fuse every legal pair of sibling leaves first "
                     "(hpvm-fuse-nodes{greedy=true})"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> fuseTensorNodes{
      *this, "fuse-tensor-nodes",
      llvm::cl::desc("Fuse chains of single-tensor-op leaves first "
                     "(hpvm-fuse-tensor-nodes)"),
      llvm::cl::init(false)};
  PassOptions::ListOption<std::string> devices{
      *this, "devices",
      llvm::cl::desc("Devices the GPU-hinted nodes get kernel versions for "
                     "(cuda, opencl): convert-hpvm-to-gpu and "
                     "hpvm-embed-kernels run first; CPU versions are kept")};
  PassOptions::Option<std::string> tensorTiles{
      *this, "tensor-tiles",
      llvm::cl::desc("Which convolutions and products of tensor kernels run "
                     "in work-group tiles: auto, always, never "
                     "(convert-hpvm-to-gpu)"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> cudaChip{
      *this, "cuda-chip",
      llvm::cl::desc("The GPU architecture of the PTX (hpvm-embed-kernels)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<bool> lineTables{
      *this, "line-tables",
      llvm::cl::desc("Give the functions the lowering generates subprograms "
                     "and line tables from their source locations (hpvm-cc "
                     "-g; hpvm-lower-to-llvm-pipeline)"),
      llvm::cl::init(false)};
  PassOptions::ListOption<std::string> sanitize{
      *this, "sanitize",
      llvm::cl::desc("Sanitizers whose instrumentation every function of "
                     "the program gets from clang's final compile (address, "
                     "thread: hpvm-sanitize-functions; hpvm-cc -fsanitize)")};
  PassOptions::Option<std::string> dumpKernels{
      *this, "dump-kernels",
      llvm::cl::desc("A directory receiving every device image"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> constantsAsm{
      *this, "constants-asm",
      llvm::cl::desc("An assembly file receiving the large constants "
                     "(hpvm-externalize-constants; empty: they stay in the "
                     "module, archive keys resolved)"),
      llvm::cl::init("")};
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
