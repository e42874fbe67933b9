//===- KernelSiteRunner.h - Nodes with a kernel version ---------*- C++ -*-===//
// The host side of a node that hpvm-embed-kernels gave a kernel site:
// hpvm_rt_kernel_run (split with the GridRunner's range function where the
// runtime may share a grid with the CPU), tensor kernels, the kernel's outputs
// decoded, and the host copies a CPU run needs once any node has a kernel.
#ifndef HPVM_LIB_CONVERSION_HPVMTOCPU_KERNELSITERUNNER_H
#define HPVM_LIB_CONVERSION_HPVMTOCPU_KERNELSITERUNNER_H

#include "GridRunner.h"

#include "HPVM/Dialect/HPVM/Analysis/TileShape.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::hpvm::cpu {

class KernelSiteRunner : LoweringPart {
public:
  KernelSiteRunner(LoweringState &state, GridRunner &gridRunner)
      : LoweringPart(state), gridRunner(gridRunner) {}

  /// Reads what the host needs of the nodes with a kernel site (tile shapes,
  /// the sizes of tile memory, ancestor grid queries) before the leaves'
  /// bodies move into node functions.
  LogicalResult prepareKernelSites();
  /// Whether `leaf` is the replicated child of a tile kernel.
  bool isTileKernelLeaf(Operation *leaf) const {
    return tileKernelLeaves.contains(leaf);
  }
  /// Whether `node` has a kernel version (an `hpvm.kernel` site from
  /// hpvm-embed-kernels) usable with `perInstance` ports.
  bool hasKernelSite(NodeOpInterface node, PerInstancePorts perInstance = {});
  /// Whether any node of the module has a kernel site (then CPU runs make
  /// host copies valid first).
  bool hasKernelSites();
  /// Calls hpvm_rt_kernel_run for the kernel site of `node`; returns an i1
  /// that is true when a device ran it. `outputs` (storage struct of the
  /// outputs, or null) receives the kernel's outputs. Inputs in
  /// `perInstance.inputs` are arrays (one value per instance), and
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
  /// allocated first.
  TensorKernelRun launchTensorKernel(OpBuilder &b, Location loc,
                                     NodeOpInterface node, ValueRange inputs);
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
  /// An scf.if of `resultTypes`: `onCPU()` where `ran` (i1, a kernel ran)
  /// is false, `fromKernel()` where it is true; returns its results.
  SmallVector<Value> unlessKernelRan(OpBuilder &b, Location loc, Value ran,
                                     TypeRange resultTypes,
                                     function_ref<SmallVector<Value>()> onCPU,
                                     function_ref<SmallVector<Value>()> fromKernel);
  /// Makes the host copies of the buffers among `inputs` valid before a CPU
  /// run of `node` (a kernel may have left them on a device).
  void requestHostCopies(OpBuilder &b, Location loc, NodeOpInterface node,
                         ValueRange inputs, ValueRange dims = {},
                         PerInstancePorts perInstance = {});

private:
  /// One parameter of hpvm_rt_kernel_run.
  struct KernelArg {
    int32_t kind;
    int32_t access;
    Value size;  // i64
    Value value; // VALUE: the value itself; BUFFER: the host pointer
  };
  /// Calls tracker function `function` (pointer first, then `extra`),
  /// ignoring memory the tracker does not know; other failures stop the
  /// program with `what`.
  void callTrackerIfTracked(OpBuilder &b, Location loc, RuntimeFn function,
                            Value pointer, ValueRange extra, StringRef what);
  /// The bytes a memref view reaches from its aligned pointer (i64).
  Value viewBytes(OpBuilder &b, Location loc, MemRefType type, Value descriptor);
  /// The size paired with pointer input `index` by HPVM-C (the next input,
  /// when it is an i64), else 0.
  Value pairedBytes(OpBuilder &b, Location loc, NodeOpInterface node,
                    ValueRange inputs, unsigned index);
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

  GridRunner &gridRunner;
  /// What the host needs of a tile kernel.
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
  /// Per node with a kernel site: the grid queries above the kernel's own
  /// levels, whose values the host passes (read before leaves move).
  DenseMap<Operation *, SmallVector<AncestorQuery>> ancestorQueries;
  /// Whether some node has a kernel version: CPU runs then bring their
  /// buffers back to the host first.
  bool anyKernelSites = false;
  bool kernelSitesScanned = false;
};

} // namespace mlir::hpvm::cpu

#endif // HPVM_LIB_CONVERSION_HPVMTOCPU_KERNELSITERUNNER_H
