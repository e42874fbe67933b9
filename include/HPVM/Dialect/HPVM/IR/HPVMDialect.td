// The hpvm dialect: its definition and the base class every hpvm op derives from.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMDIALECT_TD
#define HPVM_DIALECT_HPVM_IR_HPVMDIALECT_TD

include "mlir/IR/OpBase.td"

def HPVM_Dialect : Dialect {
  let name = "hpvm";
  let cppNamespace = "::mlir::hpvm";
  let summary = "Heterogeneous Parallel Virtual Machine: hierarchical dataflow graphs";
  let description = [{
    The `hpvm` dialect represents a program as host code plus hierarchical
    dataflow graphs (DFGs) with side effects, as defined by the HPVM papers
    (PPoPP'18, Kotsifakou's dissertation, ApproxHPVM OOPSLA'19).

    * A **node definition** is a symbol: `hpvm.leaf` holds computation,
      `hpvm.internal` holds the structure of a child graph.
    * Inside an internal node, `hpvm.create_node` instantiates a child with 0–3
      replication dimensions; `hpvm.edge` connects siblings; `hpvm.bind_in` and
      `hpvm.bind_out` map the parent's inputs and outputs to its children.
    * Inside a leaf, `hpvm.instance_id`, `hpvm.num_instances`, `hpvm.barrier`
      and `hpvm.alloc` give access to the instance grid; `hpvm.tensor.*` ops are
      approximable tensor computations carrying an optional error budget.
    * Host code uses `hpvm.launch`, `hpvm.wait`, `hpvm.push`, `hpvm.pop` and the
      memory-tracker ops `hpvm.track`, `hpvm.untrack`, `hpvm.request`.

    Discardable attributes on node definitions: `hpvm.targets`, a non-empty
    list of distinct `#hpvm.target`s (the node's hints in order of preference
    until `hpvm-assign-targets` resolves them; no list means `[cpu]`), and
    `hpvm.dispatch`, a unit attribute allowed only on a node with at least two
    targets, which `hpvm-assign-targets` sets when a node keeps several: the
    runtime then picks one of them each time the node runs. The device
    backends add `hpvm.kernel`, a symbol reference to the node's kernel
    version (a `gpu.func`, then its kernel site), and, on a leaf kernel whose
    instances exchange one value per instance with siblings,
    `hpvm.kernel_per_instance = array<i64: inputs, outputs>`: bit masks of
    the ports that the kernel takes as arrays indexed by the linear instance
    id; on a tensor leaf whose kernel computes one element of its outputs per
    thread, `hpvm.tensor_kernel = [@g, ...]`: the `memref.global`s of its
    constant tensors, which the host passes to the kernel after the inputs,
    and, when the kernel runs other than one thread per element,
    `hpvm.tensor_launch = array<i64: threads, workgroup, bytes...>` when it
    runs `threads` threads instead of one per output element, in work-groups
    of `workgroup` (0: the runtime picks), taking, last, one work-group
    memory parameter of each `bytes`; and on such a leaf that is one cuDNN /
    cuBLAS call and its epilogue, `hpvm.tensor_library = {op = "conv2d" |
    "matmul", sizes = ..., params = ...}`: the call, which
    `hpvm-embed-kernels` makes the site's `hpvm_rt_tensor_library_call_t`.
    `hpvm-vectorize` adds `hpvm.vector_variant = @v` to a leaf
    whose consecutive x instances also run as vector lanes, and
    `hpvm.lanes = W : i64` (W >= 2) to that variant `@v`: a leaf with the
    same inputs and one i1 output, true when it ran instances x .. x + W - 1
    and false when the caller must run them one by one. A block variant,
    named by `hpvm.block_variant = @b`, is a lane variant with
    `hpvm.rows = U : i64` (U >= 2) that also covers rows y .. y + U - 1.
    A remainder variant, named by `hpvm.remainder_variant = @r`, is a lane
    variant with one more input, a trailing i64 n (1 <= n <= W): it runs
    instances x .. x + n - 1 only, the other lanes masked off. A structured
    leaf whose grids all have one constant x extent W (a tile) may instead
    name a tile variant, `hpvm.tile_variant = @t`: a lane variant of W lanes
    that runs a whole row of the tile in lock-step.
    A leaf whose instances each sum products in a loop (a matrix product)
    may name a sums variant, `hpvm.contraction_variant = @s`, and its plan,
    `hpvm.contraction_plan = @p`: `@p` (an `llvm.func` taking the leaf's
    inputs and the i64 extents x, y, tiles x, tiles y of its grid) has the
    runtime compute every instance's sum into a buffer it returns (null:
    it declined, run the leaf), and `@s` is the leaf with the loop replaced
    by a load of its sum, with two more inputs: the buffer and its row
    length (the x extent of the whole grid).
    Arguments of node definitions may carry `hpvm.access`. A module may
    carry `hpvm.parameters = "file"`, its parameter archive: the weights its
    `dense_resource` constants name, kept out of the text (a relative path is
    taken from the directory of the module's file).
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // Verifies `hpvm.targets` and `hpvm.dispatch` on node definitions and
  // `hpvm.access` on their arguments wherever the attributes appear.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute listing a node's target hints.
    static constexpr ::llvm::StringLiteral getTargetsAttrName() {
      return ::llvm::StringLiteral("hpvm.targets");
    }
    /// Name of the discardable unit attribute marking a node that keeps
    /// several targets after hpvm-assign-targets: the runtime picks one of
    /// them each time the node runs.
    static constexpr ::llvm::StringLiteral getDispatchAttrName() {
      return ::llvm::StringLiteral("hpvm.dispatch");
    }
    /// Name of the discardable attribute naming a node's kernel version:
    /// `@module::@kernel` (a gpu.func) after convert-hpvm-to-gpu, then the
    /// kernel site global (`@site`) after hpvm-embed-kernels.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("hpvm.kernel");
    }
    /// Name of the discardable attribute of a leaf kernel whose instances
    /// exchange one value per instance with siblings (one_to_one edges out of
    /// replicated nodes): `array<i64: inputs, outputs>`, bit masks of the
    /// ports that are arrays indexed by the linear instance id (kernel
    /// parameters pointing to them) instead of values.
    static constexpr ::llvm::StringLiteral getKernelPerInstanceAttrName() {
      return ::llvm::StringLiteral("hpvm.kernel_per_instance");
    }
    /// Name of the discardable attribute of a tensor leaf whose kernel
    /// (convert-hpvm-to-gpu) computes one element of its outputs per thread:
    /// an array of the `memref.global`s of its constant tensors, which the
    /// host passes after the inputs (KernelParamGroup::Constants).
    static constexpr ::llvm::StringLiteral getTensorKernelAttrName() {
      return ::llvm::StringLiteral("hpvm.tensor_kernel");
    }
    /// Name of the discardable attribute of a tensor leaf whose kernel runs
    /// other than one thread per output element (a product in work-group
    /// tiles, a perforated convolution): array<i64: threads, workgroup,
    /// bytes...>, its threads, their work-group size (0: the runtime picks)
    /// and the bytes of each of its work-group memory parameters.
    static constexpr ::llvm::StringLiteral getTensorLaunchAttrName() {
      return ::llvm::StringLiteral("hpvm.tensor_launch");
    }
    /// Name of the discardable attribute of a tensor leaf whose whole
    /// computation is one cuDNN or cuBLAS call and its epilogue
    /// (convert-hpvm-to-gpu, TensorLibraryCalls.h): a dictionary describing
    /// the call, which hpvm-embed-kernels turns into the site's
    /// hpvm_rt_tensor_library_call_t.
    static constexpr ::llvm::StringLiteral getTensorLibraryAttrName() {
      return ::llvm::StringLiteral("hpvm.tensor_library");
    }
    /// Name of the discardable attribute naming the lane variant of a leaf
    /// (hpvm-vectorize): a leaf running W consecutive x instances.
    static constexpr ::llvm::StringLiteral getVectorVariantAttrName() {
      return ::llvm::StringLiteral("hpvm.vector_variant");
    }
    /// Name of the discardable attribute of a lane variant: its lane count W.
    static constexpr ::llvm::StringLiteral getLanesAttrName() {
      return ::llvm::StringLiteral("hpvm.lanes");
    }
    /// Name of the discardable attribute naming the block variant of a leaf
    /// (hpvm-vectorize): W x instances of U consecutive y rows.
    static constexpr ::llvm::StringLiteral getBlockVariantAttrName() {
      return ::llvm::StringLiteral("hpvm.block_variant");
    }
    /// Name of the discardable attribute naming the remainder variant of a
    /// leaf (hpvm-vectorize): its lane variant under a mask of the
    /// first n lanes, n a trailing i64 input.
    static constexpr ::llvm::StringLiteral getRemainderVariantAttrName() {
      return ::llvm::StringLiteral("hpvm.remainder_variant");
    }
    /// Name of the discardable attribute naming the tile variant of a
    /// structured leaf (hpvm-vectorize): a whole tile row of W
    /// instances in lock-step.
    static constexpr ::llvm::StringLiteral getTileVariantAttrName() {
      return ::llvm::StringLiteral("hpvm.tile_variant");
    }
    /// Name of the discardable attribute naming the sums variant of a leaf
    /// whose instances each sum products in a loop (hpvm-vectorize):
    /// the leaf reading its sum from a buffer its plan filled.
    static constexpr ::llvm::StringLiteral getContractionVariantAttrName() {
      return ::llvm::StringLiteral("hpvm.contraction_variant");
    }
    /// Name of the discardable attribute naming the plan of a leaf's sums
    /// variant: an llvm.func that fills the buffer of sums, or declines.
    static constexpr ::llvm::StringLiteral getContractionPlanAttrName() {
      return ::llvm::StringLiteral("hpvm.contraction_plan");
    }
    /// Name of the discardable attribute of a block variant: its row count U.
    static constexpr ::llvm::StringLiteral getRowsAttrName() {
      return ::llvm::StringLiteral("hpvm.rows");
    }
    /// Name of the discardable attribute of a tensor op choosing its
    /// approximation (#hpvm.knob).
    static constexpr ::llvm::StringLiteral getKnobAttrName() {
      return ::llvm::StringLiteral("hpvm.knob");
    }
    /// Name of the discardable attribute of a node giving the error its
    /// outputs may carry (#hpvm.error): a budget per node, or on a root the
    /// end-to-end target of the whole graph.
    static constexpr ::llvm::StringLiteral getErrorAttrName() {
      return ::llvm::StringLiteral("hpvm.error");
    }
    /// Name of the discardable attribute of a module naming its parameter
    /// archive: the file whose entries back the module's `dense_resource`
    /// constants (a model's weights), read by hpvm-externalize-constants.
    static constexpr ::llvm::StringLiteral getParametersAttrName() {
      return ::llvm::StringLiteral("hpvm.parameters");
    }
    /// Name of the argument attribute giving a node argument's access mode.
    static constexpr ::llvm::StringLiteral getAccessAttrName() {
      return ::llvm::StringLiteral("hpvm.access");
    }

  private:
    void registerTypes();
    void registerAttributes();

  public:
  }];
}

/// Base class of every hpvm op.
class HPVM_Op<string mnemonic, list<Trait> traits = []>
    : Op<HPVM_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Placement traits: where an op may appear in the node hierarchy.
//===----------------------------------------------------------------------===//

/// The op must be nested (at any depth) in an `hpvm.leaf`.
def HPVM_InLeaf : NativeOpTrait<"InLeaf"> {
  let cppNamespace = "::mlir::hpvm::OpTrait";
}

/// The op is host code: it must not be nested in any node definition.
def HPVM_HostOnly : NativeOpTrait<"HostOnly"> {
  let cppNamespace = "::mlir::hpvm::OpTrait";
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMDIALECT_TD
