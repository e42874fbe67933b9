//===- NodeLowering.h - The node lowering of convert-hpvm-to-cpu -*- C++ -*-===//
// Node definitions become functions; a run of a node goes to the runner of
// its way of running (kernel site, single instance, collapsed grid, grid,
// concurrent siblings). NodeLowering owns the code-generation helper, the
// shared state and the runners, and hands each runner only the state and the
// runners below it: the runners call each other through what they are given.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_NODELOWERING_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_NODELOWERING_H

#include "CollapsedGridRunner.h"
#include "ConcurrentRunner.h"
#include "GridRunner.h"
#include "KernelSiteRunner.h"
#include "LoweringState.h"

namespace mlir::hpvm::cpu {

/// The lowering of one module's nodes, emitted with the code-generation
/// helper it holds (`cg`), which the host-op and streaming patterns share.
class NodeLowering {
public:
  explicit NodeLowering(ModuleOp module);

  /// The code-generation helper every part of the lowering emits with.
  CPUCodeGen &getCodeGen() { return cg; }
  /// Whether nested grids may run as one parallel-for (collapse-grids).
  void setCollapseGrids(bool enable) { collapsedRunner.setCollapseGrids(enable); }

  /// Records the ports of the children that exchange one value per instance
  /// (collectPerInstancePorts), while the leaves still have their bodies.
  void findPerInstancePorts();
  /// Records the arrays each leaf indexes by its instance ids (the checks
  /// that a grid fits them), while the leaves still have their bodies.
  void findGridAccesses() { state.findGridAccesses(); }
  /// Reads what the host needs of the nodes with a kernel site before the
  /// leaves' bodies move into node functions.
  LogicalResult prepareKernelSites() { return kernelSites.prepareKernelSites(); }
  /// Creates the function shells of every node definition (moves leaf bodies).
  LogicalResult createNodeFunctions();
  /// Fills the run functions of internal nodes.
  LogicalResult lowerInternalNodes();
  /// The function hpvm_rt_launch runs for a launched root.
  LLVM::LLVMFuncOp getEntryFunction(NodeOpInterface root);
  /// The module's top-level ops with regions that are not node definitions.
  ArrayRef<Operation *> getHostCode() { return hostCode; }
  /// Inlines each leaf function called from one place only (most of them:
  /// the range function of its grid) into that call, when inlining keeps its
  /// meaning and what later passes lower (isInlinableLeafFunction); LLVM
  /// would inline it there anyway (it is alwaysinline), and the lowered
  /// module is one function per leaf smaller.
  void inlineSingleCallLeaves();

  /// Runs `node` over the grid `dims` (empty: one instance) with `inputs`,
  /// below the ancestor frame `parentFrame`, and returns its outputs.
  SmallVector<Value> runNode(OpBuilder &b, Location loc, NodeOpInterface node,
                             ValueRange dims, ValueRange inputs,
                             Value parentFrame, PerInstancePorts perInstance = {});

private:
  LogicalResult lowerInternalNode(InternalOp internal);
  /// runNode without the kernel version. `outputArrays`: the arrays of the
  /// outputs in `perInstance.outputs` when the caller allocated them (by
  /// port), else allocated here.
  SmallVector<Value> runNodeOnCPU(OpBuilder &b, Location loc,
                                  NodeOpInterface node, ValueRange dims,
                                  ValueRange inputs, Value parentFrame,
                                  PerInstancePorts perInstance,
                                  ArrayRef<Value> outputArrays = {});
  /// Runs the tensor kernel of `node`, or its CPU version where no device
  /// ran it (after freeing the buffers); returns the outputs.
  SmallVector<Value> runTensorNode(OpBuilder &b, Location loc,
                                   NodeOpInterface node, ValueRange inputs,
                                   Value parentFrame);
  /// Stops the program: no device ran `node`, which has no CPU version
  /// (`why`). Returns poison for its outputs.
  SmallVector<Value> failWithoutCPUVersion(OpBuilder &b, Location loc,
                                           NodeOpInterface node, StringRef why);
  /// The range function that runs `node` over a grid of `rank` as a sibling
  /// in a task graph (hpvm_rt_graph_add_grid), when nothing else is needed
  /// around its parallel-for: a leaf without kernel versions, barriers or
  /// lock-step tiles. Null otherwise (a task function runs it).
  LLVM::LLVMFuncOp getSiblingGridBody(NodeOpInterface node, unsigned rank);

  CPUCodeGen cg;
  /// The helper's module, context and types, by their short names.
  ModuleOp module;
  MLIRContext *context;
  LLVM::LLVMPointerType pointerType;
  LoweringState state;
  GridRunner gridRunner;
  CollapsedGridRunner collapsedRunner;
  ConcurrentRunner concurrentRunner;
  KernelSiteRunner kernelSites;
  /// The module's top-level ops with regions that are not node definitions,
  /// as they were before the lowering added functions (which never hold host
  /// ops): where host ops are looked for, instead of the whole module.
  SmallVector<Operation *> hostCode;
  /// The entry functions generated so far.
  GeneratedFunctions<EntryFunctionKey> entryFunctions;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_NODELOWERING_H
