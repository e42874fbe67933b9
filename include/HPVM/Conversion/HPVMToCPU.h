//===- HPVMToCPU.h - Host-op patterns of the CPU backend --------*- C++ -*-===//
// The patterns convert-hpvm-to-cpu lowers host code with, each set with the
// small state its patterns share. They emit through the code-generation
// helper (CPUCodeGen) and reach the lowering of nodes only through the
// functions it builds for a root (its entry function, its pipeline function),
// given as callbacks: host code never calls back into the lowering of nodes.
#ifndef HPVM_CONVERSION_HPVMTOCPU_H
#define HPVM_CONVERSION_HPVMTOCPU_H

#include "HPVM/Conversion/CPUCodeGen.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

#include <functional>

namespace mlir::hpvm {

/// The legality of convert-hpvm-to-cpu: reports what the CPU backend cannot
/// compile yet (ports of types it cannot pass, graph handles used elsewhere
/// than where their launch is lowered, streaming graphs that are not
/// pipelines, values per instance it cannot carry, tensor ops, allocation
/// nodes it cannot free, kernels that are not kernel sites) as diagnostics at
/// the ops; fails when anything was refused.
LogicalResult checkCPUSupport(ModuleOp module, CPUCodeGen &codegen);

/// Builds (on first use) the function the runtime runs for a launched root:
/// its entry function (hpvm_rt_launch) or its pipeline function.
using RootFunctionFn = std::function<LLVM::LLVMFuncOp(NodeOpInterface root)>;

//===----------------------------------------------------------------------===//
// launch, wait and the tracker ops
//===----------------------------------------------------------------------===//

/// What the host-op patterns share: the helper they emit with, the entry
/// functions of the roots, and the launch block and root behind each graph
/// handle a wait may read (a launch's block, which replaces its handle, or a
/// handle merged through branches, resolved before the launches are
/// lowered), with the names of the roots a merged handle may come from.
struct CPUHostOps {
  CPUHostOps(CPUCodeGen &codegen, RootFunctionFn getEntryFunction)
      : codegen(codegen), getEntryFunction(std::move(getEntryFunction)) {}

  CPUCodeGen &codegen;
  RootFunctionFn getEntryFunction;
  SymbolTableCollection symbols;
  DenseMap<Value, std::pair<Value, NodeOpInterface>> launched;
  DenseMap<Value, std::string> rootNames; // "@a or @b"
  /// Launches lowered whose handle has uses other than waits and branches
  /// (kept for lowerHPVMHostOps to refuse).
  SmallVector<LaunchOp> kept;
};

/// The root whose launch block `wait` reads: that of the launch of its
/// handle, or of every launch the handle may come from through branches,
/// which must then be non-streaming and have launch blocks of one layout.
/// Reports why not at the wait. `name` is "@root", or "@a or @b" when the
/// handle may come from launches of several roots.
struct WaitedRoot {
  NodeOpInterface root;
  std::string name;
};
FailureOr<WaitedRoot> getWaitedRoot(WaitOp wait, CPUCodeGen &codegen,
                                    SymbolTableCollection &symbols);

/// Adds the patterns that lower host ops to runtime calls: a non-streaming
/// `hpvm.launch` (recording its block in `state`), `hpvm.wait` (on a handle
/// `state` knows) and `hpvm.track` / `untrack` / `request` (of integer, float
/// or index memrefs, or pointers). After them, none of these ops is left
/// (streaming launches and their push, pop and wait are lowered before, by
/// populateHPVMStreamingToRuntimePatterns).
void populateHPVMHostOpsToRuntimePatterns(RewritePatternSet &patterns,
                                          CPUHostOps &state);

/// Lowers launch, wait and the tracker ops in `hostCode`: resolves the
/// launches a wait may read, then applies the patterns of
/// populateHPVMHostOpsToRuntimePatterns to the launches, the waits and the
/// tracker ops, in that order, each once. Fails with a diagnostic at the
/// first op it cannot lower.
LogicalResult lowerHPVMHostOps(ArrayRef<Operation *> hostCode, CPUHostOps &state);

//===----------------------------------------------------------------------===//
// Streaming launches, push, pop and wait
//===----------------------------------------------------------------------===//

/// What the streaming patterns share: the helper they emit with, the
/// pipeline functions of the roots, and the stream behind each streaming
/// launch's handle, until the last push, pop or wait on it is lowered.
struct CPUStreamingOps {
  CPUStreamingOps(CPUCodeGen &codegen, RootFunctionFn getPipelineFunction)
      : codegen(codegen), getPipelineFunction(std::move(getPipelineFunction)) {}

  CPUCodeGen &codegen;
  RootFunctionFn getPipelineFunction;
  SymbolTableCollection symbols;
  struct Stream {
    Value stream; // the runtime stream (a pointer)
    NodeOpInterface root;
    LaunchOp launch;  // erased with the last op on its handle
    std::string what; // "@root", in the status checks
  };
  DenseMap<Value, Stream> started; // by graph handle
};

/// Adds the patterns that lower streaming host ops to runtime pipeline calls:
/// a streaming `hpvm.launch` (calling its root's pipeline function and
/// pushing the launch operands unless `pushed`; recorded in `state`), and
/// `hpvm.push`, `hpvm.pop` and `hpvm.wait` on a handle `state` knows (the
/// last of them erases the launch). After them, no streaming launch is left.
void populateHPVMStreamingToRuntimePatterns(RewritePatternSet &patterns,
                                            CPUStreamingOps &state);

/// Applies the patterns of populateHPVMStreamingToRuntimePatterns to each
/// streaming launch in `hostCode` and then the users of its handle, once each.
LogicalResult lowerHPVMStreamingOps(ArrayRef<Operation *> hostCode,
                                    CPUStreamingOps &state);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTOCPU_H
