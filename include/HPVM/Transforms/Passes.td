// Transforms of the hpvm dialect (hpvm-<verb>[-<noun>]): graph transforms, and
// hpvm-vectorize, which builds variants of leaves for the CPU backend to run.
#ifndef HPVM_TRANSFORMS_PASSES_TD
#define HPVM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPVMFuseNodes : Pass<"hpvm-fuse-nodes", "ModuleOp"> {
  let summary = "Fuse sibling leaves that are independent or joined by one-to-one edges";
  let description = [{
    Replaces two children of an internal node by one leaf running both bodies,
    when that keeps the graph's meaning (the HPVM paper's legality): both are leaves, have the same targets and the same grid (rank and
    extents: the same values or equal constants), and are either independent
    (no path between them) or joined only by direct one_to_one edges (no path
    through a third node). Edges between them become SSA values; the fused
    leaf, `@<producer>_<consumer>` (C++ names demangled, as the trace shows
    them), takes both nodes' other inputs and all their outputs.

    With `pairs=producer:consumer,...` the children instantiating those nodes
    are fused where legal, and a refusal is a remark saying why; with
    `greedy=true` every legal pair is fused until none is left.

    Leaves with several blocks or with barriers, and streaming edges between
    the two, are left alone.

    Example: `hpvm-opt --hpvm-fuse-nodes="pairs=square:store" prog.mlir`.
  }];
  let options = [
    ListOption<"pairs", "pairs", "std::string",
               "Node pairs to fuse, as producer:consumer (node definition names)">,
    Option<"greedy", "greedy", "bool", /*default=*/"false",
           "Fuse every legal pair of sibling leaves until none is left">,
  ];
}

def HPVMBlockTensorLayout : Pass<"hpvm-block-tensor-layout", "ModuleOp"> {
  let summary = "Keep images between convolutions with their channels in blocks of 16 (CPU)";
  let description = [{
    Rewrites the tensor leaves of CPU graphs so that the images between
    their convolutions have their channels in blocks of 16,
    `[N, C / 16, H, W, 16]` (the NCHW16c layout of CPU libraries): one vector
    register holds one position of a block, so the runtime's kernels store
    whole vectors, read depthwise and pooling windows as whole vectors, and
    transpose nothing. Values are those of the NCHW graph, bit for bit.

    On the graph as written the pass first finds the values *wanted* in
    blocks: the input of a convolution (f32, static shapes, no knob, one
    group or depthwise; not one block of 16 filters over a window larger
    than 1 x 1, which the NCHW kernel runs faster) whose channels 16
    divides, and the operands of
    layout-free ops (`add`, `relu`, `clipped_relu`, `tanh`, `sigmoid`, `map`
    on such images, `batchnorm`, and `pool`) whose results are wanted,
    across the edges between leaves. Filters need not be constants: the
    runtime packs a constant filter once and any other on each call. Then,
    leaf by leaf in topological order:

    * a convolution writes blocks (`result_block = 16`) where its result is
      wanted and 16 divides its filters, and reads blocks where its input
      arrives in them;
    * a layout-free op computes in blocks where one image operand is blocked
      and either all are or its result is wanted (the others converted by
      `hpvm.tensor.to_blocked`; constants are rewritten in place: a
      per-channel bias `[1, C, 1, 1]` becomes `[1, C / 16, 1, 1, 16]`); a
      pool, and a batch normalization (its per-channel statistics as they
      are), compute in blocks where their input is blocked;
    * every other op reads NCHW (`hpvm.tensor.from_blocked`, one per value);
    * an output leaves blocked where its value is blocked, it is wanted, and
      every consumer is a leaf the pass rewrites over plain edges (not bound
      out of the graph, not streaming).

    Leaves the pass rewrites: one instance, one block, CPU targets only (or
    the tensor target, with `tensor-leaves`), and instantiated by no other
    node (their signatures change). Run it before `hpvm-fuse-tensor-nodes`:
    a leaf's single tensor op stays single.

    Example: `hpvm-opt --hpvm-block-tensor-layout --hpvm-fuse-tensor-nodes model.mlir`.
  }];
  let options = [
    Option<"tensorLeaves", "tensor-leaves", "bool", "true",
           "Rewrite the leaves of the tensor target too (the pipelines turn this "
           "off where a device takes them: its kernels read NCHW)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def HPVMTileTensorBatch : Pass<"hpvm-tile-tensor-batch", "ModuleOp"> {
  let summary = "Run a leaf's convolution and the ops after it a few images at a time (CPU)";
  let description = [{
    A fused tensor leaf over a large batch (the release's programs run 10 to
    1000 images a call) computes its convolution over the whole batch, then
    each op after it (a batch normalization, an activation the kernel did not
    absorb, a pool) as a pass of its own over an image that outgrew the
    caches long before. This pass wraps such a leaf's tensor ops in an
    `scf.for` over chunks of the batch: each chunk's convolution writes an
    image that the ops after it read back from the cache, and the chunk's
    results go into the leaf's outputs (`tensor.insert_slice`).

    A leaf qualifies when its body is one block of tensor ops (`conv2d`,
    `add`, `batchnorm`, `relu`, `clipped_relu`, `tanh`, `sigmoid`, `map`,
    `pool`, `to_blocked`, `from_blocked`) on f32 images of one batch size N,
    NCHW or with their channels in blocks, without knobs, with a
    convolution and an op after it that no kernel epilogue absorbs
    (`batchnorm`, `pool`, `map`, or more than one activation), and with its
    images more than twice `chunk-bytes` over the batch. Operands with N
    images are sliced; per-channel and whole-batch operands (filters, biases,
    statistics; leading dimension 1) are read whole, and an op on those alone
    (a bias put in blocks) stays above the loop. The chunk is the largest
    divisor of N below N whose images (the largest image operand or result,
    times the chunk) fit `chunk-bytes`; a leaf where fewer than two images
    fit, or whose filters are larger than half a chunk's image (each chunk
    reads them again), is left whole. Every value is computed per image as
    before: the same values bit for bit.

    Example: `hpvm-opt --hpvm-fuse-tensor-nodes --hpvm-tile-tensor-batch model.mlir`.
  }];
  let options = [
    Option<"chunkBytes", "chunk-bytes", "int64_t", "2097152",
           "The most bytes a chunk's largest image may take (default 2 MiB: the "
           "second-level caches of two cores)">,
    Option<"tensorLeaves", "tensor-leaves", "bool", "true",
           "Tile the leaves of the tensor target too (the pipelines turn this off "
           "where a device takes them: its kernels take the whole batch)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def HPVMFuseTensorNodes : Pass<"hpvm-fuse-tensor-nodes", "ModuleOp"> {
  let summary = "Fuse chains of single-tensor-op leaves into one leaf (conv2d→add→act→pool, mul→add→act, …)";
  let description = [{
    The tensor-node fusion patterns of the HPVM release, and those of the
    ResNet and MobileNet layers ApproxHPVM writes: a chain of sibling leaves
    that each hold one tensor op becomes one leaf holding the chain, for the
    patterns `conv2d→add→act→pool`, `conv2d→add→act`, `conv2d→add→pool`,
    `conv2d→add`, `mul→add→act` and `mul→add` (the release's),
    `conv2d→add→batchnorm→act`, `conv2d→batchnorm→act`, `add→act` and
    `batchnorm→act` (and their prefixes), where act is `relu`,
    `clipped_relu`, `tanh`, `sigmoid` or a map that is HardSwish as the ONNX
    importer writes it (which the CPU's kernels apply in their epilogue,
    operation for operation). The longest pattern wins: a chain
    starts at each leaf whose op begins a pattern (in topological order) and
    grows while the next leaf continues a pattern and the step is legal.

    A single-tensor-op leaf has one block holding one `hpvm.tensor.*` op (and
    any constants it uses, e.g. weights a frontend wrote into the leaf, and
    reshapes and changes of layout around it, e.g. a bias
    `hpvm-block-tensor-layout` put in blocks; they are copied into the fused
    leaf) and an `hpvm.return` of its result. A step from one leaf to the next is legal
    when:

    * the producer's result is used only by the next node: it travels on one
      edge, into the consumer's data operand (either operand of `add`), and
      is not also bound out of the parent;
    * both are children of the same internal node, joined by a direct edge
      (not through a `bind_out` and an edge of the grandparent);
    * they have the same targets;
    * they have the same grid (rank and extents) and the edge is not
      streaming (nor `all_to_all` between replicated nodes);
    * the consumer is not already part of an earlier chain (an `add` fed by
      two `conv2d`s joins the first).

    A pattern step that is refused is reported as a remark at the producer's
    `hpvm.create_node` with the reason. The fused leaf is named after the
    chain's leaves joined by `_` (a C++ leaf's name demangled, as the trace
    shows it: `var_0_node_var_1_node`, not `_Z10var_0_nodePvmS_m_...`), takes every input of the chain except the
    fused edges (in chain order) and the last node's output; the original
    definitions stay (unused ones can be removed by `symbol-dce`).

    After a chain whose last op may take an activation (or a lone `conv2d` or
    `mul`), a diamond joins it: a one-input elementwise leaf fed by the
    chain's result and a map of exactly that result and the leaf's (SiLU as
    ONNX writes it: `sigmoid`, then `x * sigmoid(x)`), when the result goes
    nowhere else, on the CPU only; the kernels take it as their epilogue.

    Then, with `elementwise-groups` (the default), the elementwise leaves
    left (single instances of one block of maps, adds and activations without
    knobs, or of broadcasts — all-parallel `linalg.generic` ops on tensors —,
    on the CPU) are fused in groups: a group grows from a sink by every
    elementwise producer whose results go only into the group (not bound out,
    no streaming edge), unless that would make a path leave the group and come
    back; each group of two or more becomes one leaf (its members in
    topological order, the sink's result its output), where the linalg
    lowering fuses the maps into one loop. GELU as exporters write it (`Div`,
    `Erf`, `Add`, `Mul`, `Mul`), a layer scale and a residual add are one pass
    over memory instead of one each.

    Last, with `fold-reshapes` (the default), each leaf that only reshapes
    its one tensor (`tensor.collapse_shape`, `tensor.expand_shape`,
    `tensor.reshape`) and sends it to one other leaf (a single instance each,
    on the CPU, with that leaf's targets; no streaming edge, not bound out)
    becomes part of that leaf, where the reshape is a view instead of a copy
    into a buffer of its own; a reshape of a reshape folds in the next round.
    A transformer exported from PyTorch has hundreds of them (vit_b_16: 242
    of its 710 leaves).

    Example: `hpvm-opt --hpvm-fuse-tensor-nodes prog.mlir`.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "Report each refused step as a remark (the compile pipelines turn "
           "this off)">,
    Option<"elementwiseGroups", "elementwise-groups", "bool", /*default=*/"true",
           "Then fuse the remaining elementwise leaves in groups">,
    Option<"foldReshapes", "fold-reshapes", "bool", /*default=*/"true",
           "Last, fold each leaf that only reshapes a tensor into the one leaf "
           "it feeds">,
  ];
}

def HPVMCheckReplication : Pass<"hpvm-check-replication", "ModuleOp"> {
  let summary = "Warn about replicated nodes whose instances cannot differ";
  let description = [{
    A `hpvm.create_node` with dimensions runs one instance per point of its
    grid. When nothing lets those instances behave differently, every
    instance repeats the same work: a program bug that costs a factor of the
    grid size (the HPVM release's spmv runs its whole computation 374 times
    this way). The pass warns at the `create_node` (for HPVM-C, the line of
    the `__hpvm__createNodeND` call) when, for the node and everything below
    it, all of these hold:

    * no `hpvm.instance_id` or `hpvm.num_instances` refers to that level (level
      0 in the node itself, level k in the nodes k levels below it);
    * no input of the node is fed per instance (a one_to_one edge from a
      replicated sibling);
    * no atomics and no calls (either could hand instances different values).

    The program is not changed. The CPU pipelines run it first, so `hpvm-cc`
    reports the warning; the warning does not stop compilation.

    Example: `hpvm-opt --hpvm-check-replication prog.mlir`.
  }];
}

def HPVMAssignTargets : Pass<"hpvm-assign-targets", "ModuleOp"> {
  let summary = "Resolve each node's target hints to the backends that are built in";
  let description = [{
    Rewrites the `hpvm.targets` hint list of every node definition (in order
    of preference; none means `[cpu]`) into the targets the node will be
    compiled for, and marks nodes that keep several targets with
    `hpvm.dispatch` (the runtime picks one each time the node runs).

    1. **Available hints.** A node's hints are filtered to the backends in
       `available` (default: `cpu`; the pipelines do not run this pass: the GPU
       and OpenCL backends add kernel versions to the hinted nodes and keep
       their CPU versions).
       Names are those of `#hpvm.target` (`cpu`, `vector`, `gpu`, `spirv`,
       `tensor`); `opencl` is accepted for `spirv`.
    2. **Internal nodes follow their children.** An internal node compiled for
       a device (any target but `cpu`) becomes one device program with its
       whole subgraph, so it keeps a device target only when every child can
       be compiled for it too. `cpu` internal nodes are host code that may
       launch children on any device.
    3. **Policy.** From what remains, `policy` chooses: `first` keeps the
       first remaining hint; `prefer-gpu` keeps `gpu` when it remains, else the
       first; `prefer-cpu` likewise with `cpu`; `all` keeps every remaining
       hint (several targets: runtime dispatch).
    4. **Children of device nodes.** A child of an internal node assigned a
       device target also gets that target (it runs inside the parent's
       device program); it gets a policy choice of its own only when some
       instantiation of it is launched from host code (a `cpu` parent, a
       launch, or none known).
    5. **No available hint.** A node none of whose hints is available (or an
       internal node none of whose available hints all children can follow)
       is an error naming the hints and the backends, unless `fallback` names
       an available target: the node then gets it, with a warning. An
       internal node can fall back only to `cpu` or a target every child can
       follow.

    Running the pass again on its own result changes nothing.

    Example: `hpvm-opt --hpvm-assign-targets="available=cpu,gpu policy=all" prog.mlir`
    turns `hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<tensor>, #hpvm.target<cpu>]`
    into `hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]` with `hpvm.dispatch`.
  }];
  let options = [
    ListOption<"available", "available", "std::string",
               "Backends built in (cpu, vector, gpu, spirv or opencl, tensor); "
               "default: cpu">,
    Option<"policy", "policy", "std::string", /*default=*/"\"first\"",
           "Which available hints a node keeps: first, prefer-gpu, prefer-cpu or all">,
    Option<"fallback", "fallback", "std::string", /*default=*/"\"\"",
           "Target given, with a warning, to nodes with no available hint "
           "(default: none, such nodes are errors)">,
  ];
}

def HPVMTileNodes : Pass<"hpvm-tile-nodes", "ModuleOp"> {
  let summary = "Split a replicated leaf into a grid of tiles of a smaller leaf grid";
  let description = [{
    Replaces a replicated leaf child (`hpvm.create_node @leaf [%n0, %n1]`) by an
    internal node whose grid counts tiles, `ceil(n_d / size_d)` in dimension d,
    and whose one child is a copy of the leaf over one tile (`[size_0, size_1]`
    instances). The copy keeps the meaning of every grid query of the
    original leaf:

    * `hpvm.instance_id d` becomes `tile_d * size_d + local_d`, where
      `tile_d = hpvm.instance_id d level 1` and `local_d = hpvm.instance_id d`;
    * `hpvm.num_instances d` becomes the original extent `n_d` (a constant, or
      recomputed in the leaf from the parent's inputs it depends on, which the
      new nodes receive as extra inputs);
    * queries of ancestors (`level N`) become `level N+1`.

    When an extent is not a constant multiple of the tile size the last tile
    is partial: the tile count is rounded up and the leaf's body runs under
    `scf.if` (all global ids < extents), so out-of-range instances do
    nothing. Every instance of the original grid runs exactly once, with the
    same ids and extents as before.

    With `scratch=<element type>` an allocation leaf is added to each tile:
    it returns `hpvm.alloc() : memref<size_z x size_y x size_x x type>`
    (x fastest), fed to the tile leaf as a new last input through an
    all_to_all edge: memory per tile (GPU shared memory, on the CPU one
    allocation per tile freed when the tile is done). The original body does
    not use it; it is there for code that stages data per tile.

    With `nodes=a,b` the children instantiating those node definitions are
    tiled and every refusal is a remark saying why; without `nodes` every
    replicated leaf child is tiled where legal (remarks for the refused
    replicated leaves). Refused: definitions that are not leaves, leaves that
    are not replicated, `sizes` with a different rank than the grid, leaves
    with barriers (a barrier would then only wait for one tile), children
    joined by one_to_one edges (their grid changes) or streaming edges and
    binds, extents the leaf cannot recompute, and, when the last tile may be
    partial, leaves that compute an output or have several blocks. Outputs
    that are inputs passed on (`LeafOp::getPassedOnInputs`: every
    `hpvm.return` returns the same block arguments, as an HPVM-C leaf does
    that returns the buffer it wrote for an edge) are kept with partial
    tiles: the return after the guard passes the same inputs on.

    Example: `hpvm-opt --hpvm-tile-nodes="nodes=mm sizes=64,4" prog.mlir`.
  }];
  let options = [
    ListOption<"nodes", "nodes", "std::string",
               "Node definitions whose replicated children are tiled (default: all)">,
    ListOption<"sizes", "sizes", "int64_t",
               "Tile size per grid dimension, x first (e.g. 64,4)">,
    Option<"scratch", "scratch", "std::string", /*default=*/"\"\"",
           "Element type of per-tile scratch memory from an allocation node "
           "(e.g. f32; empty: no allocation node)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def HPVMApplyKnobs : Pass<"hpvm-apply-knobs", "ModuleOp"> {
  let summary = "Set the approximation knobs of tensor ops from a configuration file";
  let description = [{
    Reads a configuration (JSON) that maps tensor ops of leaves to
    approximation knobs and sets each op's `hpvm.knob` attribute
    (`#hpvm.knob`), which the CPU lowering of tensor ops implements. A
    configuration is data: the tuner writes one, `hpvm-cc --knobs=FILE` and
    this pass apply it.

    ```json
    {
      "knobs": [
        {"node": "conv1", "knob": "perforate_rows", "rate": 2, "offset": 1},
        {"node": "conv2_add_relu", "op": 0, "knob": "sample_filter", "rate": 4, "offset": 0},
        {"node": "conv3", "knob": "exact"},
        {"node": "pool_sum", "op": "reduce", "knob": "sample_reduction", "rate": 2, "offset": 0},
        {"node": "fc", "knob": "bf16"}
      ],
      "info": {"anything": "kept by the tuner, ignored here"}
    }
    ```

    Each entry names a leaf (`node`), the knob (`perforate_rows`,
    `perforate_cols`, `sample_filter` for an `hpvm.tensor.conv2d`,
    `sample_reduction` for an `hpvm.tensor.reduce`, `fp16` or `bf16` for an
    `hpvm.tensor.mul`, or `exact`, which removes a knob), and for the sampling
    knobs `rate` (≥ 2) and `offset` (0 ≤ offset < rate); `fp16`, `bf16` and
    `exact` take neither. `op` is the index of the op among the leaf's tensor
    ops in program order, or an op name (`"reduce"`, short for
    `hpvm.tensor.reduce`) of which the leaf holds exactly one; without it the
    leaf must hold exactly one op of the kind the knob applies to (for
    `exact`, one `hpvm.tensor.conv2d`, `hpvm.tensor.reduce` or
    `hpvm.tensor.mul`). Anything
    else is an error naming the entry (`knobs[2].rate`): a file that cannot be
    read or parsed, an unknown key, node or knob, an op index out of range, a
    knob on an op that has no such implementation (a convolution knob on
    another op, `sample_reduction` on another op or on a reduction whose
    combiner is not a sum, maximum or minimum), or two entries for the same
    op. Nothing is changed unless the whole file applies.

    Example: `hpvm-opt --hpvm-apply-knobs="file=knobs.json" model.mlir`.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "The configuration (JSON) to apply">,
  ];
}

def HPVMExternalizeConstants : Pass<"hpvm-externalize-constants", "ModuleOp"> {
  let summary = "Move large constant globals out of the LLVM IR into an assembly file of .incbin directives";
  let description = [{
    Runs on the lowered module (the llvm dialect), before it becomes LLVM IR.
    Weights of a model are constant globals of many megabytes: printed as
    LLVM IR text, each float becomes ~25 characters that clang must parse
    again (resnet50's 98 MB of weights made 700 MB of text and minutes of
    compile). With `asm` set, every constant `llvm.mlir.global` whose
    initializer is a dense or `dense_resource` elements attribute of integers
    or floats (whole bytes per element) of at least `min-bytes` bytes, and not
    all zeros, becomes an external hidden declaration (aligned to 64 bytes)
    and its bytes are named by an `.incbin` directive in the assembly file
    `asm`: a `dense_resource` key found in the module's parameter archive
    (`hpvm.parameters`) names the archive's bytes where they are; any other
    initializer is written once into `<asm>.bin`. The assembler copies the
    bytes into the object; nothing parses them. Symbols are
    `__hpvm_const_<tag>_<n>`, `<tag>` a hash of `asm`, so that several modules
    can be linked into one program.

    Without `asm`, only `dense_resource` keys that no blob backs are resolved:
    their bytes are read from the parameter archive into the initializer, so
    that the module translates to self-contained LLVM IR (hpvm-cc -emit-llvm).

    A key missing from the archive, an archive that cannot be read or is
    malformed, or an entry whose size differs from the global's type is an
    error naming the key, the archive and both sizes. The module's
    `hpvm.parameters` attribute is removed.

    A parameter archive (the Python package writes one beside a module,
    `model.params` for `model.mlir`; a relative path is taken from the
    module file's folder) is little-endian:

    | bytes | content |
    |---|---|
    | 0..7 | `HPVMPRM2` |
    | 8..15 | u64: the number of entries N |
    | 16..23 | u64: the size of the index in bytes |
    | 24..27 | u32: the CRC-32 of bytes 0..23 followed by the index |
    | 28..31 | zeros |
    | the index | N entries: u64 offset, u64 size, u32 CRC-32 of the entry's bytes, u32 key length, the key, zeros to a multiple of 8 |
    | the data | each entry's bytes at its offset, after the index; no two entries share a byte (the writers align offsets to 64) |

    CRC-32 is zlib's (Python's `zlib.crc32`). The archive is read only when
    it is a regular file (after links: a link to `/dev/zero` or a named
    pipe is refused before anything is read) and its path holds no NUL
    byte; it is mapped, and refused unless the checksum of the header and
    index, every entry's checksum and the bounds hold and no two entries
    overlap, so that data written at the wrong offset (an entry shifted by
    a byte) or one entry's bytes read for another's is an error naming the
    entry, never wrong weights. The first version of the format
    (`HPVMPRM1`: a 24-byte header, entries without checksums) is refused
    with a message asking to write the archive again: nothing in it tells
    such a fault from weights, and the Python package writes archives
    anew beside each module it saves.

    Example: `hpvm-opt --hpvm-externalize-constants="asm=consts.s" lowered.mlir`.
  }];
  let options = [
    Option<"asmFile", "asm", "std::string", /*default=*/"\"\"",
           "The assembly file that receives the .incbin directives (empty: "
           "resolve archive keys into the initializers instead)">,
    Option<"minBytes", "min-bytes", "uint64_t", /*default=*/"4096",
           "Constants smaller than this stay in the IR">,
  ];
}

def HPVMVectorize : Pass<"hpvm-vectorize", "ModuleOp"> {
  let summary = "Run consecutive x instances of imported-C leaves as vector lanes";
  let description = [{
    For each leaf replicated along x whose body is imported C (the `llvm`
    dialect in blocks, as `hpvm-raise-c` leaves it), builds a lane variant:
    a leaf `@<leaf>__lanes<W>` with `hpvm.lanes = W` that runs instances
    x .. x + W - 1 at once, and names it in the leaf's
    `hpvm.vector_variant`. `convert-hpvm-to-cpu` then runs each row of a
    grid as whole groups of W through the variant and the rest one instance
    at a time.

    In the variant, values equal in every instance stay scalars; indices and
    addresses that step by a constant from lane to lane (the x id, and what
    add, sub, mul, shifts, casts and GEPs make of it) keep only their first
    lane; other values become `vector<W x T>`. An access whose address steps
    by its own size is one vector load or store; other varying addresses are
    gathers and scatters (lanes written in order), uniform ones scalar
    accesses. Calls with side effects and atomics run once per lane, in lane
    order. Loops whose trip count is equal in every lane stay loops.

    Outputs (equal in every instance) come from lane 0. A local array
    (`llvm.alloca`) gets one copy per lane, interleaved element by element,
    so that a constant index is a vector access.

    A branch that some lanes take and others do not (divergent) is checked at
    run time: when all lanes agree the variant goes on. Otherwise, before
    anything was stored, it returns false and the caller runs those W
    instances one by one; after a store or a call with side effects, both
    sides run under masks (masked loads and stores, per-lane ops in active
    lanes only, divisors of 1 in inactive lanes, selects where the paths
    meet), which needs a region whose paths meet again without a loop. Casts
    and shifts that could wrap between lanes (the sign extension of a 32-bit
    index) get a run-time check of their first lane before any store, or
    stay vectors after one.

    Imported-C leaves are left scalar, with a reason under `remarks`, when
    they have regions or ops of other dialects than llvm, arith and math
    (structured leaves, which get tile variants when in tiles: below), hpvm ops other than the grid queries, volatile or
    atomic loads and stores, a local array whose address escapes, values with
    no vector form that differ between lanes, a divergent branch after a
    store around a loop, or a divergent switch; when a loop whose trip count
    differs between lanes gathers (not profitable); when their instances do
    not read their x id; and when they are never replicated along x. Each
    instance computes what it computed before, in the same order, so results
    are bitwise those of the scalar code.

    Instance coarsening: for a leaf replicated in two or more dimensions, a
    block variant (`@<leaf>__lanes<W>x<U>`, `hpvm.rows = U`, named by the
    leaf's `hpvm.block_variant`) also covers rows y .. y + U - 1: ops whose
    values differ between rows run once per row, one
    after the other, the others once, so that a load that does not depend
    on y (a row of A in sgemm) feeds U rows. It is built where a loop loads
    a value that every row needs (otherwise the rows share nothing), and
    needs branches on values equal in every row, no masked region, no
    computed outputs (inputs passed on are fine) and a leaf that reads its
    y id.

    Contractions (`contractions`, on by default): a leaf replicated in x
    and y, whose outputs are at most inputs passed on (the lowering takes
    those from the node's inputs; a computed output is known only by
    running the instances), whose instances each fold a loop
    `acc = acc + P[..] * Q[..]` (a multiply-add, or a product then a sum),
    one factor's address an affine function of the y ids (this leaf's and
    its parent's) and the loop counter, the other's of the x ids and the
    counter (a matrix product, as a naive sgemm is written), gets a plan,
    `@<leaf>__sums_plan`, named by `hpvm.contraction_plan`, and a sums
    variant, `@<leaf>__sums`, named by `hpvm.contraction_variant`. Where a
    tile grid runs as one parallel-for (`convert-hpvm-to-cpu`), the plan
    runs first: it checks that no index of the loop wraps over the grid and
    that both operands are indexed as required, then has the runtime
    (`hpvm_rt_contract_f32`) compute every instance's sum into a buffer at
    once, with packed, cache-blocked panels, each sum through the same
    rounded steps in the same order (fused or not, as the leaf's step), so
    results are bitwise those of the scalar code; the grid then runs the
    sums variant, the loop replaced by a load of its sum. When a check
    fails the plan declines and the grid runs the leaf as before.

    Structured leaves (memref, scf and arith in one block) whose grids all
    have one constant x extent W from 2 to 128 (tiles, as after
    `hpvm-tile-nodes`) get a tile variant instead (`tiles`, on by default):
    `@<leaf>__tile<W>`, named by `hpvm.tile_variant`, runs a whole tile row in
    lock-step, values that differ between instances as `vector<W x T>`,
    contiguous `memref` accesses as vector loads and stores, other accesses
    lane by lane, divergent `scf.if`s under masks; `convert-hpvm-to-cpu` runs
    whole tile rows through it and a small tile on the thread that runs its
    parent. `imported-c=false` builds only those.

    W is `lanes` when given, else a 64-byte cache line, or one vector
    register when wider (`vector-bits`, 0: the host CPU's widest: 512 with
    AVX-512, 256 with AVX, else 128), over the narrowest floating-point type
    the leaf loads or stores (32 bits when none): 16 floats, two AVX2
    registers, so that a contiguous access uses the whole line it fetches
    and each row keeps independent chains. U is `rows` when given, else
    what the register file holds: the registers (32 with 512-bit vectors,
    else 16) over the registers a row of W lanes takes, at most 8.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
  let options = [
    Option<"lanes", "lanes", "unsigned", /*default=*/"0",
           "Lanes per variant (0: a cache line of the narrowest type, at "
           "least one vector register)">,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Bits of a vector register (0: the host CPU's)">,
    Option<"rows", "rows", "unsigned", /*default=*/"0",
           "Rows (consecutive y instances) of a block variant for leaves "
           "replicated in two or more dimensions (0: from the register "
           "file, 1: none)">,
    Option<"importedC", "imported-c", "bool", /*default=*/"true",
           "Lane variants of imported-C leaves replicated along x">,
    Option<"tiles", "tiles", "bool", /*default=*/"true",
           "Tile variants of structured leaves whose grids all have one "
           "constant x extent from 2 to 128: tile rows in lock-step">,
    Option<"contractions", "contractions", "bool", /*default=*/"true",
           "Sums variants and plans of imported-C leaves replicated in x "
           "and y whose instances each sum products in a loop (a matrix "
           "product): every sum at once, packed, in the runtime">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report, as remarks, which leaves were vectorized at which "
           "width, and why the others were not">,
  ];
}

#endif // HPVM_TRANSFORMS_PASSES_TD
