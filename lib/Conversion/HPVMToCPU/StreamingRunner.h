//===- StreamingRunner.h - Streaming roots as runtime pipelines -*- C++ -*-===//
// How the CPU backend runs a streaming root: one runtime pipeline stage per
// child, built once per root. Sees the code-generation helper and runs the
// stages' nodes through a callback, not the node lowering itself.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_STREAMINGRUNNER_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_STREAMINGRUNNER_H

#include "HPVM/Conversion/CPUCodeGen.h"

#include "mlir/IR/SymbolTable.h"

#include <functional>

namespace mlir::hpvm::cpu {

/// The pipeline functions of a module's streaming roots. A root's pipeline
/// function creates the pipeline, adds a stage per child (the root itself
/// when it is a leaf), connects the streaming edges and starts it; it
/// returns the stream the host pushes into and pops from.
class StreamingRunner {
public:
  /// Emits a run of `node` over the grid `dims` with `inputs` below
  /// `parentFrame` and returns its outputs (the node lowering's runNode).
  using RunNode = std::function<SmallVector<Value>(
      OpBuilder &, Location, NodeOpInterface node, ValueRange dims,
      ValueRange inputs, Value parentFrame)>;

  StreamingRunner(CPUCodeGen &codegen, RunNode runNode)
      : cg(codegen), runNode(std::move(runNode)) {}

  /// The function that builds `root`'s pipeline and starts it (built on the
  /// first call for the root).
  LLVM::LLVMFuncOp getPipelineFunction(NodeOpInterface root);

private:
  /// One stage of a streaming root's pipeline: a child of the root (or the
  /// root itself when it is a leaf).
  struct PipelineStage {
    NodeOpInterface node;
    CreateNodeOp create;         // null when the root is a leaf
    SmallVector<EdgeOp> inputs;  // input port k + 1
    SmallVector<EdgeOp> outputs; // output port k
    bool producesRootOutputs = false;
  };
  /// The stages of a streaming root, in the order of its children.
  SmallVector<PipelineStage> planStages(NodeOpInterface root);
  /// The stage function of `stage` (the `index`th of `root`): runs the stage
  /// on one item, status (*)(ctx, device, item, const void *const *in,
  /// void *const *out).
  LLVM::LLVMFuncOp createStageFunction(NodeOpInterface root,
                                       PipelineStage &stage,
                                       unsigned index);
  /// The inputs of `stage`, a child of `internal`, for one item: the binds
  /// recomputed from `rootArgs`, the streaming edges loaded from `inItems`;
  /// its grid in `dims`.
  SmallVector<Value> getStageInputs(OpBuilder &b, Location loc,
                                    InternalOp internal,
                                    PipelineStage &stage,
                                    ValueRange rootArgs, Value inItems,
                                    SmallVectorImpl<Value> &dims);
  /// Adds `stage` (run by `function`) to `pipeline`; returns its index.
  Value addPipelineStage(OpBuilder &b, Location loc, Value pipeline,
                         PipelineStage &stage, LLVM::LLVMFuncOp function,
                         Value argsSize, Value outputsSize,
                         Value stageIndexSlot, StringRef rootName);
  /// Connects the host and the stages (their indices `stageIndices`) of
  /// `pipeline` along the root's binds and streaming edges.
  void connectStages(OpBuilder &b, Location loc, Value pipeline,
                     ArrayRef<PipelineStage> stages,
                     ArrayRef<Value> stageIndices, StringRef rootName);

  CPUCodeGen &cg;
  RunNode runNode;
  SymbolTableCollection symbolTables;
  DenseMap<Operation *, LLVM::LLVMFuncOp> pipelineFunctions;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_STREAMINGRUNNER_H
