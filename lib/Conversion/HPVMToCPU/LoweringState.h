//===- LoweringState.h - What the parts of the node lowering share -*- C++ -*-===//
// The state NodeLowering shares with the runners (one class per way of running
// a node), as the patterns of an upstream conversion share a small state
// struct: the node functions and what the leaves' bodies said before they
// moved into them; and the registry type each runner keeps its generated
// functions in.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_LOWERINGSTATE_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_LOWERINGSTATE_H

#include "HPVM/Conversion/CPUCodeGen.h"
#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::hpvm::cpu {

/// Emits a run of `node` over the grid `dims` with `inputs` below
/// `parentFrame` and returns its outputs: how the task functions of
/// ConcurrentRunner run a child without seeing NodeLowering (StreamingRunner
/// keeps such a callback as its RunNode).
using RunNodeFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, NodeOpInterface node, ValueRange dims,
    ValueRange inputs, Value parentFrame)>;

// The runtime's structs, functions and constants (hpvm_rt_instance_range_t is
// InstanceRange, its fields InstanceRange::Begin, ...).
using namespace mlir::hpvm::abi;

//===----------------------------------------------------------------------===//
// The registry of generated functions
//===----------------------------------------------------------------------===//

/// What the parallel-for body of a node's range is generated for: the node,
/// the grid's rank, the barrier phase (-1: none) and its per-instance ports.
struct RangeFunctionKey {
  Operation *node;
  unsigned rank;
  int phase;
  uint64_t perInstanceInputs;
  uint64_t perInstanceOutputs;
  auto tie() const {
    return std::make_tuple(node, rank, phase, perInstanceInputs, perInstanceOutputs);
  }
};
/// What the parallel-for body of a collapsed grid is generated for: the
/// internal node, its leaf and the rank of the combined space.
struct CollapsedFunctionKey {
  Operation *internal;
  Operation *leaf;
  unsigned rank;
  auto tie() const { return std::make_tuple(internal, leaf, rank); }
};
/// What a task of a task graph is generated for: the node and its grid's
/// rank.
struct TaskFunctionKey {
  Operation *node;
  unsigned rank;
  auto tie() const { return std::make_pair(node, rank); }
};
/// What hpvm_rt_launch's entry function is generated for: a root.
struct EntryFunctionKey {
  Operation *root;
  Operation *tie() const { return root; }
};

/// The functions of one kind the lowering generates, one per key (one of
/// the key structs above). A function is added as soon as it exists, before
/// its body is built: a body that needs the function again finds it.
template <typename Key>
class GeneratedFunctions {
public:
  LLVM::LLVMFuncOp lookup(const Key &key) const { return functions.lookup(key.tie()); }
  void add(const Key &key, LLVM::LLVMFuncOp function) {
    [[maybe_unused]] bool added = functions.try_emplace(key.tie(), function).second;
    assert(added && "a generated function added twice");
  }

private:
  DenseMap<decltype(std::declval<Key>().tie()), LLVM::LLVMFuncOp> functions;
};


/// What the parts of one module's node lowering share. NodeLowering fills it
/// (node functions, variants) before any node runs; the runners read it.
struct LoweringState {
  explicit LoweringState(CPUCodeGen &cg)
      : cg(cg), module(cg.getModule()), context(cg.getContext()) {}

  /// The code-generation helper every part emits with.
  CPUCodeGen &cg;
  SymbolTableCollection symbolTables;
  /// The function of each node definition (instance or run function).
  DenseMap<Operation *, func::FuncOp> nodeFunctions;
  /// Per hpvm.create_node: its ports whose values are arrays indexed by the
  /// linear instance id.
  DenseMap<Operation *, PerInstancePorts> perInstancePorts;
  /// For each leaf, the output ports that return memory of an hpvm.alloc.
  DenseMap<Operation *, SmallVector<unsigned>> allocatedOutputs;
  /// Leaves of tile kernels that have no CPU version, and why.
  DenseMap<Operation *, std::string> noCPUVersion;
  /// Leaves whose outputs are inputs passed on (LeafOp::getPassedOnInputs,
  /// taken before their bodies move): for each output, its input. A leaf's
  /// variants need not give such outputs; a CPU run takes them from the
  /// node's inputs.
  DenseMap<Operation *, SmallVector<unsigned>> passedOnInputs;

  /// The input `node` passes on as its output `port`, if it is a leaf that
  /// does (passedOnInputs). Whoever reads a grid's outputs takes that input
  /// instead of what the first instance published: the block, tile and
  /// contraction variants publish nothing.
  std::optional<unsigned> getPassedOnInput(Operation *node, unsigned port) {
    auto found = passedOnInputs.find(node);
    if (found == passedOnInputs.end())
      return std::nullopt;
    return found->second[port];
  }
  /// Output `port` of a grid of `node` run with `inputs`, whose first
  /// instance published its outputs into `slots` (a storage struct of the
  /// outputs): the input it passes on (getPassedOnInput), else the slot's.
  Value readGridOutput(OpBuilder &b, Location loc, Operation *node,
                       unsigned port, ValueRange inputs, Value slots,
                       TypeRange outputTypes);
  /// Fills gridAccesses from every leaf's body (before the bodies move into
  /// the node functions).
  void findGridAccesses();
  /// Before a grid of `leaf` runs: for every input array the leaf indexes,
  /// unconditionally (in its entry block), by an instance id of its own grid,
  /// a check that the grid's extent fits that dimension of the array; an
  /// error (OUT_OF_RANGE) instead of writes past it.
  void checkGridFitsInputs(OpBuilder &b, Location loc, LeafOp leaf, ValueRange dims,
                           ValueRange inputs, uint64_t perInstanceInputs);
  /// Calls hpvm_rt_trace_node for a CPU run of `node` (the run starts).
  void traceNode(OpBuilder &b, Location loc, NodeOpInterface node);
  /// Calls hpvm_rt_trace_node_done after a CPU run of `node` (it ended).
  void traceNodeDone(OpBuilder &b, Location loc, NodeOpInterface node);

  //===--------------------------------------------------------------------===//
  // Generated functions (LoweringState.cpp)
  //===--------------------------------------------------------------------===//

  /// Makes a generated function private, with internal linkage in LLVM.
  void markInternal(func::FuncOp function);
  /// Asks LLVM to inline an instance function into its range loops.
  void markAlwaysInline(func::FuncOp function);
  /// Asks LLVM to keep `function` a call (code run once per row at most).
  void markNoInline(func::FuncOp function);
  /// Replaces the grid queries of a leaf function whose grid arguments
  /// (x, y, z, extents, parent frame) start at argument `firstGridArg`.
  void lowerGridQueries(func::FuncOp function, unsigned firstGridArg);
  /// hpvm.alloc -> memref.alloc (the parent frees returned memory).
  void lowerAllocs(func::FuncOp function);

private:
  ModuleOp module;
  MLIRContext *context;
  /// (input, axis of the array, grid dimension) of each leaf: what
  /// checkGridFitsInputs checks.
  DenseMap<Operation *, SmallVector<std::tuple<unsigned, unsigned, unsigned>>> gridAccesses;
};

/// What a runner starts from: the state it shares, the helper, and the
/// helper's module, context and types by their short names.
class LoweringPart {
protected:
  explicit LoweringPart(LoweringState &state)
      : state(state), cg(state.cg), module(cg.getModule()), context(cg.getContext()),
        pointerType(cg.getPointerType()), frameType(cg.getFrameType()),
        rangeType(InstanceRange::get(context)) {}

  LoweringState &state;
  CPUCodeGen &cg;
  ModuleOp module;
  MLIRContext *context;
  LLVM::LLVMPointerType pointerType;
  LLVM::LLVMStructType frameType;
  LLVM::LLVMStructType rangeType;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_LOWERINGSTATE_H
