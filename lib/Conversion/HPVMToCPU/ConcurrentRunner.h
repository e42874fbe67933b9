//===- ConcurrentRunner.h - Independent siblings as task graphs -*- C++ -*-===//
// Children of an internal node at the same DFG level run as the nodes of one
// runtime task graph: a grid node where the GridRunner's range function is all
// a child needs, else a task function that runs the child through the RunNodeFn
// it is given.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_CONCURRENTRUNNER_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_CONCURRENTRUNNER_H

#include "GridRunner.h"

namespace mlir::hpvm::cpu {

class ConcurrentRunner : LoweringPart {
public:
  ConcurrentRunner(LoweringState &state, GridRunner &gridRunner)
      : LoweringPart(state), gridRunner(gridRunner) {}

  /// Runs independent children concurrently through a runtime task graph.
  /// `gridBodies` (empty, or one per node, null where a task function is
  /// needed) names the children that run as grid nodes.
  void runConcurrently(OpBuilder &b, Location loc,
                       ArrayRef<NodeOpInterface> nodes,
                       ArrayRef<LLVM::LLVMFuncOp> gridBodies,
                       ArrayRef<SmallVector<Value>> dims,
                       ArrayRef<SmallVector<Value>> inputs, Value parentFrame,
                       SmallVectorImpl<SmallVector<Value>> &outputs,
                       RunNodeFn runChild);

private:
  /// A task-graph node running `node` over a grid of `rank` dimensions: the
  /// context is getTaskContextType(node, rank).
  LLVM::LLVMFuncOp getTaskFunction(NodeOpInterface node, unsigned rank,
                                   RunNodeFn runChild);
  /// { inputs..., i64 extents[rank]..., ptr parent frame, ptr outputs }.
  LLVM::LLVMStructType getTaskContextType(NodeOpInterface node, unsigned rank);

  GridRunner &gridRunner;
  /// The task functions generated so far.
  GeneratedFunctions<TaskFunctionKey> taskFunctions;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_CONCURRENTRUNNER_H
