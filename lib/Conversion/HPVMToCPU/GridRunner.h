//===- GridRunner.h - A node over its grid, one parallel-for ----*- C++ -*-===//
// How a grid of a node runs on the CPU: range functions (the parallel-for
// bodies that run a box of instances, in lanes or lock-step tiles where the
// leaf has such variants, GridVariants.cpp), a leaf split at its barriers run
// phase by phase (GridPhases.cpp), a lock-step tile on the thread that runs
// it, a contraction through its plan. The layer the other runners build on:
// it sees only the shared state.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_GRIDRUNNER_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_GRIDRUNNER_H

#include "LoweringState.h"

namespace mlir::hpvm::cpu {

class GridRunner : LoweringPart {
public:
  explicit GridRunner(LoweringState &state) : LoweringPart(state) {}

  /// Runs `node` over the grid `dims` (not empty) with `inputs` below
  /// `parentFrame`: its phases, a lock-step tile, a contraction or one
  /// parallel-for. `givenArrays`: the arrays of the outputs in
  /// `perInstance.outputs` when the caller allocated them (by port), else
  /// allocated here. Returns the outputs.
  SmallVector<Value> runGrid(OpBuilder &b, Location loc, NodeOpInterface node,
                             ValueRange dims, ValueRange inputs, Value parentFrame,
                             PerInstancePorts perInstance,
                             ArrayRef<Value> givenArrays);
  /// The parallel-for body running instances of `node` in a grid of `rank`;
  /// with `phase`, the body runs that phase of a leaf split at barriers.
  LLVM::LLVMFuncOp getRangeFunction(NodeOpInterface node, unsigned rank,
                                    std::optional<unsigned> phase = {},
                                    PerInstancePorts perInstance = {});
  /// { inputs... (arrays for per-instance ones), ptr parent frame,
  ///   ptr outputs, ptr spill, ptr per-instance output arrays }.
  LLVM::LLVMStructType getRangeContextType(NodeOpInterface node,
                                           uint64_t perInstanceInputs = 0);
  /// A range context of `node` (getRangeContextType) on the stack, holding
  /// `inputs` (in storage form, except the per-instance arrays), the parent
  /// frame and `outputs`, without spill or per-instance output arrays.
  Value allocateRangeContext(OpBuilder &b, Location loc, NodeOpInterface node,
                             ValueRange inputs, Value parentFrame, Value outputs,
                             uint64_t perInstanceInputs = 0);
  /// malloc'ed arrays (by port; null where not per instance) for the outputs
  /// of `node` in `perInstance.outputs`, one element per instance.
  SmallVector<Value> allocateOutputArrays(OpBuilder &b, Location loc,
                                          NodeOpInterface node, ValueRange dims,
                                          PerInstancePorts perInstance);
  /// The bytes of the array of values per instance of `type` over `dims`.
  Value instanceArrayBytes(OpBuilder &b, Location loc, ValueRange dims, Type type);
  /// The number of instances of the grid `dims`, as i64.
  Value instanceCount(OpBuilder &b, Location loc, ValueRange dims);
  /// An empty internal `void (ptr context, ptr range)` function, the body
  /// type hpvm_rt_parallel_for runs, named uniquely after `name`.
  LLVM::LLVMFuncOp createParallelForBody(Location loc, const Twine &name);
  /// A contraction's launch: `buffer` (the plan's result) null runs the leaf
  /// (`runLeaf`), else the sums variant (`runSums`, given the buffer), then
  /// frees the buffer.
  void runContracted(OpBuilder &b, Location loc, Value buffer,
                     function_ref<void(OpBuilder &)> runLeaf,
                     function_ref<void(OpBuilder &, Value)> runSums);

  //===--------------------------------------------------------------------===//
  // Instances and lanes (for the grids CollapsedGridRunner walks)
  //===--------------------------------------------------------------------===//

  /// Stores the index `id` as the id of dimension `d` in `frame`.
  void storeFrameId(OpBuilder &b, Location loc, Value frame, int32_t d,
                    Value id);
  /// Field `field` (InstanceRange::Begin, End or Extent) of dimension `d` of
  /// the instance range at `instances`, as an index.
  Value loadRangeBound(OpBuilder &b, Location loc, Value instances,
                       InstanceRange::Field field, int32_t d);
  /// Runs the instances [from, to) along x of `leaf`: whole groups through
  /// its lane variant (hpvm-vectorize), each group instance by
  /// instance where the variant declines, the rest through its remainder
  /// variant when it has one (else instance by instance).
  /// `argsFor(b, x)` gives the node function's arguments for instance x.
  /// `useResults(b, x, outputs)` sees the outputs of instance x (of the
  /// group starting at x when the variant ran it). Returns false (and emits
  /// nothing) when the leaf has no lane variant.
  bool runInstanceRowInLanes(
      OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to,
      function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
      function_ref<void(OpBuilder &, Value, ValueRange)> useResults);
  /// Runs the instances [from, to) along x of rows y .. y + U - 1 of `leaf`
  /// (U: the rows of its block variant): whole groups through the block
  /// variant, a group it declines instance by instance, the rest of each
  /// row through the remainder variant (else instance by instance).
  /// `argsFor(b, x, y)` gives the node function's arguments for instance
  /// (x, y).
  void runInstanceBlockInLanes(
      OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to, Value y,
      function_ref<SmallVector<Value>(OpBuilder &, Value, Value)> argsFor);
  /// The rows of the block variant of `leaf`, 0 without one.
  unsigned getBlockRows(LeafOp leaf);
  /// Stores `results` into the storage struct of `types` at `outputs` when
  /// `isFirst` holds: outputs that leave a replicated node are equal in
  /// every instance (docs/Rationale.md §3.2), and the first instance
  /// publishes them.
  void publishOutputs(OpBuilder &b, Location loc, Value isFirst,
                      Value outputs, TypeRange types, ValueRange results);
  /// Whether all of `ids` are zero (true when there are none).
  Value allZero(OpBuilder &b, Location loc, ValueRange ids);

  //===--------------------------------------------------------------------===//
  // Barriers (GridPhases.cpp)
  //===--------------------------------------------------------------------===//

  /// Splits a leaf with barriers into phase functions.
  LogicalResult splitAtBarriers(LeafOp leaf);
  /// Whether `leaf` was split at barriers (its grids run phase by phase).
  bool hasPhases(Operation *leaf) const { return phaseFunctions.count(leaf); }

  //===--------------------------------------------------------------------===//
  // Variants (GridVariants.cpp)
  //===--------------------------------------------------------------------===//

  /// Checks the variants `leaf` names (hpvm.tile_variant, vector_variant,
  /// remainder_variant, block_variant, contraction_variant) and records their
  /// node functions (after splitAtBarriers).
  LogicalResult collectVariants(LeafOp leaf);
  /// Whether the tile rows of `leaf` run in lock-step (a tile variant).
  bool hasLockStepTiles(Operation *leaf) const { return laneFunctions.count(leaf); }
  /// The sums variant and plan of `leaf`, whose instances sum products
  /// (nulls when it has none).
  std::pair<LeafOp, LLVM::LLVMFuncOp> getContraction(Operation *leaf) const {
    return contractions.lookup(leaf);
  }
  /// Whether a grid of `rank` of `leaf` is one parallel-for of its range
  /// function and nothing around it: a CPU version, no barrier phases, no
  /// lock-step tiles, no contraction's plan.
  bool isPlainGrid(LeafOp leaf, unsigned rank);

private:
  /// What a range function reads on entry (GridRunner.cpp).
  struct RangeBody;
  /// Loads the context fields and the box of instances of a range function
  /// of `node` over a grid of `rank`, and allocates an internal node's frame.
  RangeBody loadRangeBody(OpBuilder &b, Location loc, NodeOpInterface node,
                          unsigned rank, Value context, Value instances,
                          PerInstancePorts perInstance);
  /// Calls the lock-step function `lanes` (tile width `width`) for each whole
  /// tile row of the box; leaves `b` where any other box runs.
  void runLockStepRows(OpBuilder &b, Location loc, const RangeBody &body,
                       unsigned rank, func::FuncOp lanes, unsigned width);
  /// Runs the box of `leaf` (a leaf with a lane variant) row by row in lanes.
  void runRangeInLanes(OpBuilder &b, Location loc, LeafOp leaf,
                       const RangeBody &body, unsigned rank);
  /// Runs the box of `node` instance by instance (phase `phase` of a split
  /// leaf when given), with per-instance inputs and outputs in arrays.
  void runRangeByInstance(OpBuilder &b, Location loc, NodeOpInterface node,
                          const RangeBody &body, unsigned rank,
                          std::optional<unsigned> phase,
                          PerInstancePorts perInstance);
  /// Runs the `count` (0 .. W - 1) instances from x along a row of `leaf`
  /// (a leaf with a remainder variant) as one group under a mask, or
  /// instance by instance when the variant declines; `argsFor` and
  /// `useResults` as for runInstanceRowInLanes.
  void runRemainderInLanes(
      OpBuilder &b, Location loc, LeafOp leaf, Value x, Value count,
      function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
      function_ref<void(OpBuilder &, Value, ValueRange)> useResults);
  /// Calls `variant` (a lane variant of `leaf`) with `args` for the group of
  /// `count` instances from x, and runs them one by one where it declines;
  /// `useResults` sees the outputs.
  void runGroup(OpBuilder &b, Location loc, LeafOp leaf, func::FuncOp variant,
                ValueRange args, Value x, Value count,
                function_ref<SmallVector<Value>(OpBuilder &, Value)> argsFor,
                function_ref<void(OpBuilder &, Value, ValueRange)> useResults);
  /// { ptr array per output of `node` } (at least one field).
  LLVM::LLVMStructType getOutputArraysType(NodeOpInterface node);
  /// The arrays of the per-instance outputs of `node` (`givenArrays`, made
  /// writable on the host, or allocated here), stored in the range context.
  SmallVector<Value> storeOutputArrays(OpBuilder &b, Location loc,
                                       NodeOpInterface node, ValueRange dims,
                                       PerInstancePorts perInstance,
                                       ArrayRef<Value> givenArrays,
                                       Value context);
  /// Runs the grid `dims` of a lock-step tile by calling its range function
  /// once, on this thread, over the whole grid.
  void runTileInLockStep(OpBuilder &b, Location loc, NodeOpInterface node,
                         ValueRange dims, Value context);
  /// One parallel-for over the grid `extents` of `rank`, running `runs` with
  /// `runContext`.
  void launchRange(OpBuilder &b, Location loc, NodeOpInterface runs,
                   unsigned rank, PerInstancePorts perInstance, Value extents,
                   Value runContext);
  /// Runs the 2-D grid of `leaf`, whose instances sum products: its plan
  /// and sums variant below a parent of one instance, else the leaf.
  void runContractionGrid(OpBuilder &b, Location loc, LeafOp leaf,
                          ValueRange dims, ValueRange inputs, Value parentFrame,
                          Value outputs, Value extents, Value context);
  /// The function of phase `phase` of `leaf`, split at `barriers`: the body
  /// from barrier phase - 1 to barrier `phase`, the values of `spilled`
  /// defined in earlier phases (by `valuePhase`) read from the spill slot,
  /// those defined in this one stored there.
  func::FuncOp createPhaseFunction(LeafOp leaf, unsigned phase,
                                   ArrayRef<Operation *> barriers,
                                   ArrayRef<Value> spilled,
                                   const DenseMap<Value, unsigned> &valuePhase);
  /// Runs the phases of a split leaf over the grid `dims`, one parallel-for
  /// each: every instance ends a phase before any starts the next.
  void runPhases(OpBuilder &b, Location loc, LeafOp leaf, ValueRange dims,
                 Value extents, Value context);

  /// The range functions generated so far.
  GeneratedFunctions<RangeFunctionKey> rangeFunctions;
  /// Leaves split at barriers: their phase functions and spill layout.
  DenseMap<Operation *, SmallVector<func::FuncOp>> phaseFunctions;
  DenseMap<Operation *, LLVM::LLVMStructType> spillTypes;
  /// Leaves with a lane variant (hpvm.vector_variant): the variant's node
  /// function and its lane count.
  DenseMap<Operation *, std::pair<func::FuncOp, unsigned>> laneVariants;
  /// Leaves with a remainder variant (hpvm.remainder_variant): its node
  /// function, which runs the first n lanes of a group (n its last input).
  DenseMap<Operation *, func::FuncOp> remainderVariants;
  /// Leaves with a block variant (hpvm.block_variant): its node function
  /// and its row count (the lanes are those of the lane variant).
  DenseMap<Operation *, std::pair<func::FuncOp, unsigned>> blockVariants;
  /// Leaves whose tile rows run in lock-step (hpvm.tile_variant): the
  /// variant's node function and the tile width.
  DenseMap<Operation *, std::pair<func::FuncOp, unsigned>> laneFunctions;
  /// Leaves whose instances each sum products (hpvm.contraction_variant,
  /// hpvm.contraction_plan): the sums variant and the plan, which fills the
  /// sums or declines (a collapsed grid runs the plan first).
  DenseMap<Operation *, std::pair<LeafOp, LLVM::LLVMFuncOp>> contractions;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_GRIDRUNNER_H
