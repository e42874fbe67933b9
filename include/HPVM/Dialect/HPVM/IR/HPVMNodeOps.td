// Graph ops of the hpvm dialect: node definitions, graph structure, leaf intrinsics, host ops.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMNODEOPS_TD
#define HPVM_DIALECT_HPVM_IR_HPVMNODEOPS_TD

include "HPVM/Dialect/HPVM/IR/HPVMDialect.td"
include "HPVM/Dialect/HPVM/IR/HPVMTypes.td"
include "HPVM/Dialect/HPVM/IR/HPVMAttrs.td"
include "HPVM/Dialect/HPVM/IR/HPVMInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

/// A port number: the index of an input or output of a node.
def HPVM_PortAttr : ConfinedAttr<I32Attr, [IntNonNegative]>;

def HPVM_LLVMPointer : Type<CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
                            "LLVM pointer", "::mlir::LLVM::LLVMPointerType">;

/// A buffer the memory tracker can follow: a memref, or a pointer from imported C.
def HPVM_Buffer : AnyTypeOf<[AnyMemRef, HPVM_LLVMPointer]>;

//===----------------------------------------------------------------------===//
// Node definitions
//===----------------------------------------------------------------------===//

// What every node definition declares (FunctionOpInterface, its body).
defvar HPVM_NodeDefDeclarations = [{
    //===------------------------------------------------------------------===//
    // FunctionOpInterface / CallableOpInterface
    //===------------------------------------------------------------------===//
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The block holding the node's body; its arguments are the node's inputs.
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
}];

class HPVM_NodeDefOp<string mnemonic, list<Trait> traits = []>
    : HPVM_Op<mnemonic, !listconcat(traits, [
        FunctionOpInterface, IsolatedFromAbove,
        DeclareOpInterfaceMethods<HPVM_NodeOpInterface, ["isLeafNode"]>,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type,
                                 CArg<"::llvm::ArrayRef<::mlir::NamedAttribute>", "{}">:$attrs)>];
  let extraClassDeclaration = HPVM_NodeDefDeclarations;
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def HPVM_LeafOp : HPVM_NodeDefOp<"leaf", [AutomaticAllocationScope]> {
  let summary = "definition of a leaf node: the computation of one instance";
  let description = [{
    A leaf node holds ordinary code (arith, math, memref, scf, vector, llvm, and
    `hpvm.tensor.*` ops) that one dynamic instance executes. Inputs are the
    arguments, outputs the operands of the `hpvm.return` terminator. The grid
    of instances is chosen by the `hpvm.create_node` that instantiates the leaf;
    `hpvm.instance_id` and `hpvm.num_instances` locate an instance in it.

    Buffer arguments may carry `hpvm.access`; target hints are listed in
    `hpvm.targets` (default: cpu).

    ```mlir
    hpvm.leaf @vadd(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                    %b: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                    %c: memref<?xf32> {hpvm.access = #hpvm.access<out>})
        attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
      %i = hpvm.instance_id x : index
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<?xf32>
      hpvm.return
    }
    ```
  }];
  let regions = (region MinSizedRegion<1>:$body);
  let extraClassDeclaration = HPVM_NodeDefDeclarations # [{
    /// For each output, the input that every `hpvm.return` passes on as it:
    /// the leaf only forwards those inputs (a buffer it wrote, returned for an
    /// edge), so its outputs are one value for all instances, known before
    /// any instance runs. std::nullopt when some output is computed.
    std::optional<::llvm::SmallVector<unsigned>> getPassedOnInputs();
  }];
}

def HPVM_InternalOp : HPVM_NodeDefOp<"internal", [NoTerminator]> {
  let summary = "definition of an internal node: a graph of child nodes";
  let description = [{
    An internal node holds only the structure of its child graph: one block of
    `hpvm.create_node`, `hpvm.edge`, `hpvm.bind_in` and `hpvm.bind_out` ops, plus
    side-effect-free scalar arithmetic computing child extents. Its outputs are
    defined by its `hpvm.bind_out`s; the block has no terminator.

    The verifier checks the graph: ports in range, equal types across edges and
    binds, every child input fed exactly once, every output bound exactly once,
    one-to-one edges between grids of equal rank, no cycle among the children,
    and no recursion through the node hierarchy.

    ```mlir
    hpvm.internal @root(%a: memref<?xf32>, %n: index) -> (f32) {
      %p = hpvm.create_node @producer [%n] : !hpvm.node
      %c = hpvm.create_node @consumer : !hpvm.node
      hpvm.bind_in %a -> %p[0] : memref<?xf32>
      hpvm.edge %p[0] -> %c[0] all_to_all
      hpvm.bind_out %c[0] -> 0
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
}

def HPVM_ReturnOp : HPVM_Op<"return", [HasParent<"LeafOp">, Pure, ReturnLike,
                                       Terminator]> {
  let summary = "terminator of a leaf node, giving the node's outputs";
  let description = [{
    Ends the execution of a leaf instance. The operands are the instance's
    outputs and must match the leaf's result types.

    ```mlir
    hpvm.return %sum, %count : f32, i64
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Graph structure (only directly inside hpvm.internal)
//===----------------------------------------------------------------------===//

def HPVM_CreateNodeOp : HPVM_Op<"create_node", [HasParent<"InternalOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "instantiates a child node with 0 to 3 replication dimensions";
  let description = [{
    Creates the static child node `@node` in the enclosing internal node. The
    index operands are the extents of its instance grid (x, y, z); with none the
    child has a single instance. Extents are runtime values.

    ```mlir
    %tiles = hpvm.create_node @mm_tile [%tilesX, %tilesY] : !hpvm.node
    %single = hpvm.create_node @reduce : !hpvm.node
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$node, Variadic<Index>:$dims);
  let results = (outs HPVM_NodeType:$handle);
  let assemblyFormat = "$node (` ` `[` $dims^ `]`)? attr-dict `:` type($handle)";
  let hasVerifier = 1;
  // Removes children whose outputs are unused and that have no side effects.
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// Number of replication dimensions (0 to 3).
    unsigned getRank() { return getDims().size(); }
    /// The node definition this op instantiates, or null if it does not resolve.
    ::mlir::hpvm::NodeOpInterface
    getNodeDefinition(::mlir::SymbolTableCollection &symbolTable);
  }];
}

def HPVM_EdgeOp : HPVM_Op<"edge", [HasParent<"InternalOp">]> {
  let summary = "dataflow edge from an output of a child to an input of a sibling";
  let description = [{
    Connects output `source_port` of `%source` to input `dest_port` of `%dest`.
    Edges have copy semantics: the sink starts after the source completed.
    `one_to_one` pairs instance i of the source with instance i of the sink (the
    grids must be identical); `all_to_all` places a barrier between the two
    instance groups. `streaming` edges carry a sequence of values. An output
    port may feed several edges (fan-out, as a residual block's input feeds
    its convolution and its add) and also be bound out: every consumer
    receives the same value.

    ```mlir
    hpvm.edge %p[0] -> %q[2] all_to_all
    hpvm.edge %blur[0] -> %grad[0] one_to_one streaming
    ```
  }];
  let arguments = (ins HPVM_NodeType:$source, HPVM_PortAttr:$source_port,
                       HPVM_NodeType:$dest, HPVM_PortAttr:$dest_port,
                       HPVM_ReplicationEnum:$replication, UnitAttr:$streaming);
  let assemblyFormat = [{
    $source `[` $source_port `]` `->` $dest `[` $dest_port `]` $replication
    (`streaming` $streaming^)? attr-dict
  }];
  let hasVerifier = 1;
}

def HPVM_BindInOp : HPVM_Op<"bind_in", [HasParent<"InternalOp">]> {
  let summary = "binds an input of the internal node to an input of a child";
  let description = [{
    Makes the enclosing internal node's input `%input` (one of its block
    arguments) input `dest_port` of child `%dest`. A bind is a name binding,
    never data movement.

    ```mlir
    hpvm.bind_in %a -> %leaf[0] : memref<?xf32>
    ```
  }];
  let arguments = (ins AnyType:$input, HPVM_NodeType:$dest,
                       HPVM_PortAttr:$dest_port, UnitAttr:$streaming);
  let assemblyFormat = [{
    $input `->` $dest `[` $dest_port `]` (`streaming` $streaming^)? attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

def HPVM_BindOutOp : HPVM_Op<"bind_out", [HasParent<"InternalOp">]> {
  let summary = "binds an output of a child to an output of the internal node";
  let description = [{
    Makes output `source_port` of child `%source` the enclosing internal node's
    output number `output`.

    ```mlir
    hpvm.bind_out %p[1] -> 0
    ```
  }];
  let arguments = (ins HPVM_NodeType:$source, HPVM_PortAttr:$source_port,
                       HPVM_PortAttr:$output, UnitAttr:$streaming);
  let assemblyFormat = [{
    $source `[` $source_port `]` `->` $output (`streaming` $streaming^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Leaf intrinsics (anywhere inside hpvm.leaf)
//===----------------------------------------------------------------------===//

class HPVM_GridQueryOp<string mnemonic> : HPVM_Op<mnemonic, [HPVM_InLeaf, Pure]> {
  let arguments = (ins HPVM_DimEnum:$dim,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntNonNegative]>,
                                         "0">:$level);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim (`level` $level^)? attr-dict `:` type($result)";
}

def HPVM_InstanceIdOp : HPVM_GridQueryOp<"instance_id"> {
  let summary = "index of the current instance of this leaf or of an ancestor";
  let description = [{
    The index, in dimension `dim`, of the current dynamic instance of this leaf
    (`level 0`, the default) or of its `level`-th ancestor node. The dimension
    must be one the node at that level is replicated in; the verifier checks it
    wherever the hierarchy is statically known.

    ```mlir
    %i = hpvm.instance_id x : index
    %tile = hpvm.instance_id y level 1 : index
    ```
  }];
}

def HPVM_NumInstancesOp : HPVM_GridQueryOp<"num_instances"> {
  let summary = "extent of the instance grid of this leaf or of an ancestor";
  let description = [{
    The number of dynamic instances, in dimension `dim`, of this leaf (`level 0`)
    or of its `level`-th ancestor node.

    ```mlir
    %n = hpvm.num_instances x : index
    %tiles = hpvm.num_instances x level 1 : index
    ```
  }];
}

def HPVM_BarrierOp : HPVM_Op<"barrier", [HPVM_InLeaf]> {
  let summary = "barrier across the instances of this leaf";
  let description = [{
    No instance of the leaf continues past the barrier until all instances of
    the leaf (in the enclosing tile, on GPUs one thread block) have reached it.
    It also orders their memory accesses.

    ```mlir
    hpvm.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def HPVM_AllocOp : HPVM_Op<"alloc", [HPVM_InLeaf,
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "allocates memory shared with the instances that receive it";
  let description = [{
    Allocates a buffer owned by the graph; it is shared by the instances that
    receive it through edges. Allocated inside a tile-level internal node it
    maps to GPU shared memory. A memref takes one index operand per dynamic
    dimension; a `!llvm.ptr` (HPVM-C's `__hpvm__malloc`) takes the size in
    bytes.

    ```mlir
    %scratch = hpvm.alloc() : memref<64xf32>
    %rows = hpvm.alloc(%n) : memref<?x16xf32>
    %bytes = hpvm.alloc(%size) : !llvm.ptr
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes);
  let results = (outs HPVM_Buffer:$memory);
  let assemblyFormat = "`(` $dynamic_sizes `)` attr-dict `:` type($memory)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host ops (outside every node)
//===----------------------------------------------------------------------===//

def HPVM_LaunchOp : HPVM_Op<"launch", [HPVM_HostOnly,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "launches a dataflow graph rooted at a node";
  let description = [{
    Starts an execution of the graph rooted at `@root` (a single instance) on
    the given inputs and returns its handle. With `streaming`, the graph runs
    until its input streams end: the operands are the first item; further items
    are given with `hpvm.push`.

    ```mlir
    %g = hpvm.launch @root(%a, %n) : (memref<?xf32>, index) -> !hpvm.graph
    %s = hpvm.launch @pipeline(%frame) streaming : (memref<?x?xf32>) -> !hpvm.graph
    ```

    With `pushed` (HPVM-C's streaming `__hpvm__launch`), the launch has no
    operands and every item, the first included, comes from `hpvm.push`.

    ```mlir
    %s = hpvm.launch @pipeline() streaming pushed : () -> !hpvm.graph
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$root, Variadic<AnyType>:$args,
                       UnitAttr:$streaming, UnitAttr:$pushed);
  let results = (outs HPVM_GraphType:$graph);
  let assemblyFormat = [{
    $root `(` $args `)` (`streaming` $streaming^)? (`pushed` $pushed^)? attr-dict
    `:` functional-type($args, $graph)
  }];
  let hasVerifier = 1;
}

def HPVM_WaitOp : HPVM_Op<"wait", [HPVM_HostOnly,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "waits for a launched graph to finish";
  let description = [{
    Blocks until the graph completes. For a non-streaming graph the results are
    the root's outputs (exactly its result types); a streaming graph's outputs
    are popped instead, so waiting on it has no results and first ends its
    input streams.

    ```mlir
    %count = hpvm.wait %g : i64
    hpvm.wait %s
    ```

    The handle may reach the wait through branches, from one of several
    launches chosen at run time; the wait must then fit every root it may
    come from (which the verifier checks, as for one launch):

    ```mlir
      cf.cond_br %exact, ^a, ^b
    ^a:
      %ga = hpvm.launch @exact(%x) : (f32) -> !hpvm.graph
      cf.br ^join(%ga : !hpvm.graph)
    ^b:
      %gb = hpvm.launch @fast(%x) : (f32) -> !hpvm.graph
      cf.br ^join(%gb : !hpvm.graph)
    ^join(%g: !hpvm.graph):
      %r = hpvm.wait %g : f32
    ```

    A wait ends its graph: waiting again on the same handle (after a wait that
    dominates, or in a loop that does not launch it again) is an error.
  }];
  let arguments = (ins HPVM_GraphType:$graph);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$graph attr-dict (`:` type($results)^)?";
  let hasVerifier = 1;
}

def HPVM_PushOp : HPVM_Op<"push", [HPVM_HostOnly,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pushes one set of inputs into a streaming graph (blocking)";
  let description = [{
    Gives the next item of every input stream of a streaming graph. Blocks while
    the graph's input buffers are full.

    ```mlir
    hpvm.push %s(%frame, %bias) : memref<?x?xf32>, f32
    ```
  }];
  let arguments = (ins HPVM_GraphType:$graph, Variadic<AnyType>:$args);
  let assemblyFormat = "$graph `(` $args `)` attr-dict (`:` type($args)^)?";
}

def HPVM_PopOp : HPVM_Op<"pop", [HPVM_HostOnly,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pops one set of outputs from a streaming graph (blocking)";
  let description = [{
    Returns the next item of every output stream of a streaming graph, in push
    order. Blocks until the graph has produced it.

    ```mlir
    %edges = hpvm.pop %s : memref<?x?xf32>
    ```
  }];
  let arguments = (ins HPVM_GraphType:$graph);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$graph attr-dict (`:` type($results)^)?";
}

class HPVM_MemoryTrackerOp<string mnemonic> : HPVM_Op<mnemonic, [HPVM_HostOnly]> {
  let arguments = (ins HPVM_Buffer:$memory, Optional<Index>:$size);
  let assemblyFormat = "$memory (`,` $size^)? attr-dict `:` type($memory)";
  let hasVerifier = 1;
}

def HPVM_TrackOp : HPVM_MemoryTrackerOp<"track"> {
  let summary = "registers a buffer with the runtime's memory tracker";
  let description = [{
    From now on the runtime knows which copies (host, devices) of the buffer are
    valid and copies only when a stale location is used. A memref carries its
    size; a `!llvm.ptr` (imported C) needs the size in bytes.

    ```mlir
    hpvm.track %a : memref<?xf32>
    hpvm.track %p, %bytes : !llvm.ptr
    ```
  }];
}

def HPVM_UntrackOp : HPVM_MemoryTrackerOp<"untrack"> {
  let summary = "removes a buffer from the memory tracker";
  let description = [{
    Ends the tracking of the buffer: a device copy newer than the host copy is
    copied back first, then every device copy is freed, so the host memory is
    valid afterwards.

    ```mlir
    hpvm.untrack %a : memref<?xf32>
    ```
  }];
}

def HPVM_RequestOp : HPVM_MemoryTrackerOp<"request"> {
  let summary = "makes the host copy of a tracked buffer valid";
  let description = [{
    Copies the buffer back from the device that holds its valid copy, if the
    host copy is stale. A `!llvm.ptr` needs the size in bytes.

    ```mlir
    hpvm.request %c : memref<?xf32>
    ```
  }];
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMNODEOPS_TD
