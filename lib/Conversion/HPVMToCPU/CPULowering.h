//===- CPULowering.h - Shared state of convert-hpvm-to-cpu ------*- C++ -*-===//
// Storage types, context packing, runtime declarations and the node functions.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_CPULOWERING_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_CPULOWERING_H

#include "HPVM/Conversion/CPUCodeGen.h"
#include "HPVM/Conversion/RuntimeABI.h"
#include "HPVM/Dialect/HPVM/Analysis/DataflowGraph.h"
#include "HPVM/Dialect/HPVM/Analysis/TileShape.h"
#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::hpvm::cpu {

/// Emits a run of `node` over the grid `dims` with `inputs` below
/// `parentFrame` and returns its outputs: how LowerConcurrency's task
/// functions run a child without calling back into LowerNodes.
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

/// The lowering of one module's nodes, emitted with the code-generation
/// helper it holds (`cg`: values in storage form, runtime calls), which the
/// host-op and streaming patterns share.
class CPULowering {
public:
  explicit CPULowering(ModuleOp module);

  /// The code-generation helper every part of the lowering emits with.
  CPUCodeGen &getCodeGen() { return cg; }

  //===--------------------------------------------------------------------===//
  // Node functions
  //===--------------------------------------------------------------------===//

  /// Creates the function shells of every node definition (moves leaf bodies).
  /// Reads what the host needs of the nodes with a kernel site (tile shapes,
  /// the sizes of tile memory, ancestor grid queries) before the leaves'
  /// bodies move into node functions.
  LogicalResult prepareKernelSites();
  /// Fills gridAccesses from every leaf's body (before the bodies move into
  /// the node functions).
  void findGridAccesses();
  /// Records the ports of the children that exchange one value per instance
  /// (collectPerInstancePorts), while the leaves still have their bodies
  /// (LowerNodes.cpp).
  void findPerInstancePorts();
  LogicalResult createNodeFunctions();
  /// Fills the run functions of internal nodes.
  LogicalResult lowerInternalNodes();
  /// The function hpvm_rt_launch runs for a launched root (LowerNodes.cpp).
  LLVM::LLVMFuncOp getEntryFunction(NodeOpInterface root);
  /// The module's top-level ops with regions that are not node definitions.
  ArrayRef<Operation *> getHostCode() { return hostCode; }
  /// Inlines each leaf function called from one place only (most of them:
  /// the range function of its grid) into that call, when inlining keeps its
  /// meaning and what later passes lower (isInlinableLeafFunction in
  /// InstanceFunctions.cpp); LLVM would inline it there anyway (it is
  /// alwaysinline), and the lowered module is one function per leaf smaller.
  void inlineSingleCallLeaves();

  /// Runs `node` over the grid `dims` (empty: one instance) with `inputs`,
  /// below the ancestor frame `parentFrame`, and returns its outputs.
  SmallVector<Value> runNode(OpBuilder &b, Location loc, NodeOpInterface node,
                             ValueRange dims, ValueRange inputs,
                             Value parentFrame, PerInstancePorts perInstance = {});

  /// The struct a kernel stores its outputs in: storage types, but a memref
  /// is the i64 index of the input it is (convert-hpvm-to-gpu).
  LLVM::LLVMStructType getKernelOutputStruct(TypeRange types);
  /// The memref (of `type`) a kernel's memref output stands for: `code` is
  /// the index of the input it is.
  Value decodeMemRefOutput(OpBuilder &b, Location loc, NodeOpInterface node,
                           ValueRange inputs, Value code, Type type);
  /// The host pointer a kernel's pointer output stands for: the output holds
  /// the index of the input it is, or -1 for null (PointerOutputs.h).
  Value decodePointerOutput(OpBuilder &b, Location loc, NodeOpInterface node,
                            ValueRange inputs, Value stored);

  /// Whether `node` has a kernel version (an `hpvm.kernel` site from
  /// hpvm-embed-kernels) usable with `perInstance` ports.
  bool hasKernelSite(NodeOpInterface node, PerInstancePorts perInstance = {});
  /// Calls hpvm_rt_kernel_run for the kernel site of `node`; returns an i1
  /// that is true when a device ran it (LowerKernelSites.cpp). `outputs`
  /// (storage struct of the outputs, or null) receives the kernel's outputs.
  /// Inputs in `perInstance.inputs` are arrays (one value per instance), and
  /// `outputArrays` (by port, null where not per instance) receive the
  /// outputs in `perInstance.outputs`.
  Value runKernel(OpBuilder &b, Location loc, NodeOpInterface node,
                  ValueRange dims, ValueRange inputs, Value parentFrame,
                  Value outputs, PerInstancePorts perInstance = {},
                  ArrayRef<Value> outputArrays = {});
  /// A launch of a tensor kernel: whether a device ran it (i1), the tensor
  /// outputs' buffers it was given (by output, scalars skipped), and the
  /// struct its first thread stored the scalar outputs into (or null).
  struct TensorKernelRun {
    Value ran;
    SmallVector<Value> buffers;
    Value scalars;
    LLVM::LLVMStructType scalarStruct;
  };
  /// Launches the tensor kernel of `node` (convert-hpvm-to-gpu's
  /// `hpvm.tensor_kernel`: one thread per output element) on output buffers
  /// allocated first (LowerKernelSites.cpp).
  TensorKernelRun launchTensorKernel(OpBuilder &b, Location loc,
                                     NodeOpInterface node, ValueRange inputs);
  /// An scf.if of `resultTypes`: `onCPU()` where `ran` (i1, a kernel ran)
  /// is false, `fromKernel()` where it is true; returns its results.
  SmallVector<Value> unlessKernelRan(OpBuilder &b, Location loc, Value ran,
                                     TypeRange resultTypes,
                                     function_ref<SmallVector<Value>()> onCPU,
                                     function_ref<SmallVector<Value>()> fromKernel);
  /// Runs the tensor kernel of `node`, or its CPU version where no device
  /// ran it (after freeing the buffers); returns the outputs.
  SmallVector<Value> runTensorNode(OpBuilder &b, Location loc,
                                   NodeOpInterface node, ValueRange inputs,
                                   Value parentFrame);
  /// Makes the host copies of the buffers among `inputs` valid before a CPU
  /// run of `node` (a kernel may have left them on a device).
  void requestHostCopies(OpBuilder &b, Location loc, NodeOpInterface node,
                         ValueRange inputs, ValueRange dims = {},
                         PerInstancePorts perInstance = {});
  /// Calls tracker function `function` (pointer first, then `extra`),
  /// ignoring memory the tracker does not know; other failures stop the
  /// program with `what`.
  void callTrackerIfTracked(OpBuilder &b, Location loc, RuntimeFn function,
                            Value pointer, ValueRange extra, StringRef what);
  /// Whether any node of the module has a kernel site (then CPU runs make
  /// host copies valid first).
  bool hasKernelSites();
  /// The bytes of the array of values per instance of `type` over `dims`.
  Value instanceArrayBytes(OpBuilder &b, Location loc, ValueRange dims, Type type);
  /// The bytes a memref view reaches from its aligned pointer (i64).
  Value viewBytes(OpBuilder &b, Location loc, MemRefType type, Value descriptor);
  /// The size paired with pointer input `index` by HPVM-C (the next input,
  /// when it is an i64), else 0.
  Value pairedBytes(OpBuilder &b, Location loc, NodeOpInterface node,
                    ValueRange inputs, unsigned index);
  /// Calls hpvm_rt_trace_node for a CPU run of `node` (the run starts).
  void traceNode(OpBuilder &b, Location loc, NodeOpInterface node);
  /// Calls hpvm_rt_trace_node_done after a CPU run of `node` (it ended).
  void traceNodeDone(OpBuilder &b, Location loc, NodeOpInterface node);
private:
  /// One parameter of hpvm_rt_kernel_run (LowerKernelSites.cpp).
  struct KernelArg {
    int32_t kind;
    int32_t access;
    Value size;  // i64
    Value value; // VALUE: the value itself; BUFFER: the host pointer
  };
  /// Appends the kernel parameters of `inputs` of `node`: arrays of
  /// `instances` elements for those in `perInstanceInputs`, a memref's
  /// buffer and descriptor fields, a pointer with its paired size, values.
  void addKernelInputParams(OpBuilder &b, Location loc, NodeOpInterface node,
                            ValueRange inputs, uint64_t perInstanceInputs,
                            Value instances, SmallVectorImpl<KernelArg> &params);
  /// A parameter passed by value (its bytes copied), of `value`'s size.
  KernelArg valueParam(OpBuilder &b, Location loc, Value value);
  /// Appends the parameters of a memref: its buffer (the aligned pointer's
  /// data as far as the view reaches, with `access`) and its descriptor's
  /// fields, as the kernel's lowering expands them.
  void addMemRefParams(OpBuilder &b, Location loc, MemRefType type,
                       Value memref, int32_t access,
                       SmallVectorImpl<KernelArg> &params);
  /// The CPU version that hpvm_rt_kernel_run_split may run part of: its
  /// range function over `rank` dimensions and that function's context.
  struct SplitGrid {
    bool hinted; // the leaf lists the CPU and a device among its targets
    unsigned rank;
    Value body, context;
  };
  /// Calls hpvm_rt_kernel_run (hpvm_rt_kernel_run_split with `split`) for
  /// the kernel site of `node` with `params` over `grid` (work-groups of
  /// `block`, zeros: the runtime's choice); returns an i1 that is true when
  /// the node ran (on a device, or split).
  Value launchKernel(OpBuilder &b, Location loc, NodeOpInterface node,
                     ArrayRef<Value> grid, ArrayRef<Value> block,
                     ArrayRef<KernelArg> params,
                     const SplitGrid *split = nullptr);
  /// The parameters of the kernel of `node` in the kernel's order
  /// (RuntimeABI.h): inputs, `grid`, ancestor queries, outputs, per-instance
  /// output arrays and the work-group memory `memoryBytes` computes.
  SmallVector<KernelArg> getKernelParams(
      OpBuilder &b, Location loc, NodeOpInterface node, ValueRange dims,
      ValueRange inputs, Value parentFrame, Value outputs,
      PerInstancePorts perInstance, ArrayRef<Value> outputArrays,
      ArrayRef<Value> grid, bool tiled, func::FuncOp memoryBytes);
  /// The array of hpvm_rt_kernel_param_t holding `params`, on the stack.
  Value storeKernelParams(OpBuilder &b, Location loc, ArrayRef<KernelArg> params);
  /// Before a grid of `leaf` runs: for every input array the leaf indexes,
  /// unconditionally (in its entry block), by an instance id of its own grid,
  /// a check that the grid's extent fits that dimension of the array; an
  /// error (OUT_OF_RANGE) instead of writes past it.
  void checkGridFitsInputs(OpBuilder &b, Location loc, LeafOp leaf, ValueRange dims,
                           ValueRange inputs, uint64_t perInstanceInputs);
  /// (input, axis of the array, grid dimension) of each leaf: what
  /// checkGridFitsInputs checks.
  DenseMap<Operation *, SmallVector<std::tuple<unsigned, unsigned, unsigned>>> gridAccesses;
  /// runNode without the kernel version.
  /// `outputArrays`: the arrays of the outputs in `perInstance.outputs`
  /// when the caller allocated them (by port), else allocated here.
  SmallVector<Value> runNodeOnCPU(OpBuilder &b, Location loc,
                                  NodeOpInterface node, ValueRange dims,
                                  ValueRange inputs, Value parentFrame,
                                  PerInstancePorts perInstance,
                                  ArrayRef<Value> outputArrays = {});
  /// Stops the program: no device ran `node`, which has no CPU version
  /// (`why`). Returns poison for its outputs.
  SmallVector<Value> failWithoutCPUVersion(OpBuilder &b, Location loc,
                                           NodeOpInterface node, StringRef why);
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
  /// malloc'ed arrays (by port; null where not per instance) for the outputs
  /// of `node` in `perInstance.outputs`, one element per instance.
  SmallVector<Value> allocateOutputArrays(OpBuilder &b, Location loc,
                                          NodeOpInterface node, ValueRange dims,
                                          PerInstancePorts perInstance);
  /// The parallel-for body running instances of `node` in a grid of `rank`;
  /// with `phase`, the body runs that phase of a leaf split at barriers.
  LLVM::LLVMFuncOp getRangeFunction(NodeOpInterface node, unsigned rank,
                                    std::optional<unsigned> phase = {},
                                    PerInstancePorts perInstance = {});
  /// What a range function reads on entry (InstanceFunctions.cpp).
  struct RangeBody;
  /// Loads the context fields and the box of instances of a range function
  /// of `node` over a grid of `rank`, and allocates an internal node's frame.
  RangeBody loadRangeBody(OpBuilder &b, Location loc, NodeOpInterface node,
                          unsigned rank, Value context, Value instances,
                          PerInstancePorts perInstance);
  /// Stores the index `id` as the id of dimension `d` in `frame`.
  void storeFrameId(OpBuilder &b, Location loc, Value frame, int32_t d,
                    Value id);
  /// Field `field` (InstanceRange::Begin, End or Extent) of dimension `d` of
  /// the instance range at `instances`, as an index.
  Value loadRangeBound(OpBuilder &b, Location loc, Value instances,
                       InstanceRange::Field field, int32_t d);
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
  /// The range function that runs `node` over a grid of `rank` as a sibling
  /// in a task graph (hpvm_rt_graph_add_grid), when nothing else is needed
  /// around its parallel-for: a leaf without kernel versions, barriers or
  /// lock-step tiles. Null otherwise (a task function runs it).
  LLVM::LLVMFuncOp getSiblingGridBody(NodeOpInterface node, unsigned rank);
  /// Splits a leaf with barriers into phase functions (LowerBarriers.cpp).
  LogicalResult splitAtBarriers(LeafOp leaf);
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
  /// A task-graph node running `node` over a grid of `rank` dimensions: the
  /// context is getTaskContextType(node, rank).
  LLVM::LLVMFuncOp getTaskFunction(NodeOpInterface node, unsigned rank,
                                   RunNodeFn runChild);
  /// { inputs..., i64 extents[rank]..., ptr parent frame, ptr outputs }.
  LLVM::LLVMStructType getTaskContextType(NodeOpInterface node, unsigned rank);
  /// Runs independent children concurrently through a runtime task graph.
  /// `gridBodies` (empty, or one per node, null where a task function is
  /// needed) names the children that run as grid nodes (getSiblingGridBody).
  void runConcurrently(OpBuilder &b, Location loc,
                       ArrayRef<NodeOpInterface> nodes,
                       ArrayRef<LLVM::LLVMFuncOp> gridBodies,
                       ArrayRef<SmallVector<Value>> dims,
                       ArrayRef<SmallVector<Value>> inputs, Value parentFrame,
                       SmallVectorImpl<SmallVector<Value>> &outputs,
                       RunNodeFn runChild);
  /// An empty internal `void (ptr context, ptr range)` function, the body
  /// type hpvm_rt_parallel_for runs, named uniquely after `name`.
  LLVM::LLVMFuncOp createParallelForBody(Location loc, const Twine &name);
  /// The number of instances of the grid `dims`, as i64.
  Value instanceCount(OpBuilder &b, Location loc, ValueRange dims);
  /// { ptr array per output of `node` } (at least one field).
  LLVM::LLVMStructType getOutputArraysType(NodeOpInterface node);
  LogicalResult lowerInternalNode(InternalOp internal);
  /// Replaces the grid queries of a leaf function whose grid arguments
  /// (x, y, z, extents, parent frame) start at argument `firstGridArg`.
  void lowerGridQueries(func::FuncOp function, unsigned firstGridArg);
  /// Makes a generated function private, with internal linkage in LLVM.
  void markInternal(func::FuncOp function);
  /// Asks LLVM to inline an instance function into its range loops.
  void markAlwaysInline(func::FuncOp function);
  /// Asks LLVM to keep `function` a call (code run once per row at most).
  void markNoInline(func::FuncOp function);
  /// Checks the variants `leaf` names (hpvm.tile_variant, vector_variant,
  /// remainder_variant, block_variant) and records their node functions.
  LogicalResult collectVariants(LeafOp leaf);
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
  /// row through the remainder variant (else instance by instance). `argsFor(b, x, y)` gives the node
  /// function's arguments for instance (x, y).
  void runInstanceBlockInLanes(
      OpBuilder &b, Location loc, LeafOp leaf, Value from, Value to, Value y,
      function_ref<SmallVector<Value>(OpBuilder &, Value, Value)> argsFor);
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
  /// The rows of the block variant of `leaf`, 0 without one.
  unsigned getBlockRows(LeafOp leaf);
  /// Stores `results` into the storage struct of `types` at `outputs` when
  /// `isFirst` holds: outputs that leave a replicated node are equal in
  /// every instance (docs/Rationale.md §3.2), and the first instance publishes them.
  void publishOutputs(OpBuilder &b, Location loc, Value isFirst,
                      Value outputs, TypeRange types, ValueRange results);
  /// Whether all of `ids` are zero (true when there are none).
  Value allZero(OpBuilder &b, Location loc, ValueRange ids);
  /// The leaf to run in one parallel-for with the grid of `node` when `node`
  /// is a replicated internal node whose only child is that replicated leaf,
  /// without barriers or per-tile memory (CollapseGrids.cpp); null otherwise.
  LeafOp getCollapsibleLeaf(NodeOpInterface node, PerInstancePorts perInstance);
  /// Runs `leaf` inside the grid `outerDims` of `internal` as one
  /// parallel-for over the combined space; returns the outputs of `internal`.
  SmallVector<Value> runCollapsed(OpBuilder &b, Location loc,
                                  InternalOp internal, LeafOp leaf,
                                  ValueRange outerDims, ValueRange inputs,
                                  Value parentFrame);
  /// A contraction's launch (CollapseGrids.cpp, below LowerNodes in the
  /// call layers): `buffer` (the plan's result) null runs the
  /// leaf (`runLeaf`), else the sums variant (`runSums`, given the buffer),
  /// then frees the buffer.
  void runContracted(OpBuilder &b, Location loc, Value buffer,
                     function_ref<void(OpBuilder &)> runLeaf,
                     function_ref<void(OpBuilder &, Value)> runSums);
  /// { leaf inputs..., ptr parent frame, i64 tiles[3], i64 tile[3],
  ///   ptr outputs }.
  LLVM::LLVMStructType getCollapsedContextType(LeafOp leaf);
  /// The parallel-for body over the combined space of `rank` dimensions.
  LLVM::LLVMFuncOp getCollapsedRangeFunction(InternalOp internal, LeafOp leaf,
                                             unsigned rank);
  /// What the body of a collapsed grid reads on entry (CollapseGrids.cpp).
  struct CollapsedBody;
  /// Loads the collapsed context of `leaf` and the box of the combined space
  /// of `rank` dimensions, and allocates the tile's frame.
  CollapsedBody loadCollapsedBody(OpBuilder &b, Location loc, LeafOp leaf,
                                  unsigned rank, Value contextPtr,
                                  Value instances);
  /// Runs the tiles the box touches along x, each over the part of its row
  /// (or of `rows` rows from the y the loops reached) inside.
  void emitCollapsedRows(OpBuilder &rb, Location loc, LeafOp leaf,
                         CollapsedBody &body, unsigned rows);
  /// Walks y a block of `blockRows` rows at a time where it fits in the tile
  /// and the box, else row by row (a leaf with a block variant).
  void emitCollapsedBlockRows(OpBuilder &b, Location loc, LeafOp leaf,
                              CollapsedBody &body, unsigned blockRows);
  /// hpvm.alloc -> memref.alloc (the parent frees returned memory).
  void lowerAllocs(func::FuncOp function);
  /// The module's top-level ops with regions that are not node definitions,
  /// as they were before the lowering added functions (which never hold host
  /// ops): where host ops are looked for, instead of the whole module.
  SmallVector<Operation *> hostCode;
  SymbolTableCollection symbolTables;
  DenseMap<Operation *, func::FuncOp> nodeFunctions;
  /// What the host needs of a tile kernel (LowerKernelSites.cpp).
  struct TileKernel {
    /// The tile's replicated child: the grid of one work-group.
    CreateNodeOp instances;
    /// (tile inputs) -> (index bytes of each allocation, in the kernel's
    /// order); null without allocation nodes.
    func::FuncOp memoryBytes;
  };
  DenseMap<Operation *, TileKernel> tileKernels;
  /// The leaves that are the replicated child of a tile kernel.
  DenseSet<Operation *> tileKernelLeaves;
  /// Per hpvm.create_node: its ports whose values are arrays indexed by the
  /// linear instance id.
  DenseMap<Operation *, PerInstancePorts> perInstancePorts;
  /// Per node with a kernel site: the grid queries above the kernel's own
  /// levels, whose values the host passes (read before leaves move).
  DenseMap<Operation *, SmallVector<AncestorQuery>> ancestorQueries;
  /// Leaves of tile kernels that have no CPU version, and why.
  DenseMap<Operation *, std::string> noCPUVersion;
  /// The generated functions, by kind (getRangeFunction, getEntryFunction,
  /// getCollapsedRangeFunction, getTaskFunction).
  GeneratedFunctions<RangeFunctionKey> rangeFunctions;
  GeneratedFunctions<EntryFunctionKey> entryFunctions;
  GeneratedFunctions<CollapsedFunctionKey> collapsedFunctions;
  GeneratedFunctions<TaskFunctionKey> taskFunctions;
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
  /// Leaves whose outputs are inputs passed on (LeafOp::getPassedOnInputs,
  /// taken before their bodies move): for each output, its input. The
  /// variants above need not give such outputs; runNodeOnCPU takes them
  /// from the node's inputs.
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
  /// Whether nested grids may run as one parallel-for (collapse-grids).
  bool collapseGrids = true;

public:
  void setCollapseGrids(bool enable) { collapseGrids = enable; }

private:
  CPUCodeGen cg;
  /// The helper's module, context and types, by their short names.
  ModuleOp module;
  MLIRContext *context;
  LLVM::LLVMPointerType pointerType;
  LLVM::LLVMStructType frameType;
  LLVM::LLVMStructType rangeType;
  /// Whether some node has a kernel version: CPU runs then bring their
  /// buffers back to the host first.
  bool anyKernelSites = false;
  bool kernelSitesScanned = false;
  /// For each leaf, the output ports that return memory of an hpvm.alloc.
  DenseMap<Operation *, SmallVector<unsigned>> allocatedOutputs;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_CPULOWERING_H
