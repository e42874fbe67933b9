// Conversion passes of the hpvm dialect: convert-hpvm-to-<target>.
#ifndef HPVM_CONVERSION_PASSES_TD
#define HPVM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertHPVMToCPU : Pass<"convert-hpvm-to-cpu", "ModuleOp"> {
  let summary = "Lower HPVM graphs and host ops to calls of the HPVM runtime on the CPU";
  let description = [{
    Compiles every dataflow graph of the module for the CPU and its host ops to
    calls of the C runtime (runtime/include/hpvm/hpvm_rt.h):

    * a leaf becomes a private `func.func` computing one instance; its grid
      queries become arguments (level 0) or reads of the ancestor frames
      (level >= 1); a leaf function with a single caller (most: the range
      function of its grid) is inlined there (`inline-leaves`, on by
      default: LLVM would inline it anyway, and the module is one function
      per leaf smaller);
    * an internal node becomes a `func.func` running its children level by
      level of the DFG: a level with several (independent) children runs as a
      runtime task graph, concurrently; a replicated child runs through
      `hpvm_rt_parallel_for` with an outlined range body and a packed context;
    * a streaming launch becomes a runtime pipeline with one stage per child of
      the root (each stage receives the pushed item and its incoming streaming
      edges); `hpvm.push`, `hpvm.pop` and `hpvm.wait` become stream calls;
    * `hpvm.launch` / `hpvm.wait` become `hpvm_rt_launch` / `hpvm_rt_wait` of an
      entry function, the tracker ops become `hpvm_rt_track`, `hpvm_rt_untrack`
      and `hpvm_rt_request_host`; every runtime status is checked with
      `hpvm_rt_check_at` (message and exit code 1 on error).

    Public host functions get `llvm.emit_c_interface` so that C code can call
    them. A leaf with `hpvm.barrier`s at the top level of its body's blocks
    runs phase by phase (one parallel-for per phase, values crossing a barrier
    spilled per instance); the blocks may branch (imported C), as long as
    every path passes the same barriers in the same order;
    `hpvm.alloc` memory returned by an allocation leaf lives until its parent
    instance ends; one_to_one edges between replicated nodes carry one value
    per instance in an array indexed by the linear instance id. A node with a
    kernel site (`hpvm.kernel = @site`, from `convert-hpvm-to-gpu` and
    `hpvm-embed-kernels`) first calls `hpvm_rt_kernel_run` with its inputs
    (memrefs as their descriptors' fields, buffers by host address) and runs
    its CPU version only when no device ran it; in a module with kernel
    sites, CPU runs of leaves first make the host copies of their buffers
    valid (`hpvm_rt_request_host`). Every leaf run calls
    `hpvm_rt_trace_node` (a no-op unless `HPVM_TRACE` is set).

    Tiles run in lock-step: a leaf that names a tile variant
    (`hpvm.tile_variant`, built by `hpvm-vectorize` for structured
    leaves whose grids all have one constant x extent W) runs each whole row
    of W instances as one call of the variant, like the threads of a GPU
    thread block, and a small constant grid of it (a tile) on the thread
    that runs the tile; any box of the grid that is not whole rows runs
    instance by instance. Lane variants (`hpvm.vector_variant`, imported C)
    run rows in groups of their lanes, the rest through the remainder
    variant, and rows in blocks through the block variant. Not supported
    yet (a diagnostic, never a miscompile): barriers in nested regions, in
    loops or on some paths only,
    other uses of `hpvm.alloc`, tensor ops (run
    `convert-hpvm-tensor-to-linalg` first, as the pipelines do), some one_to_one edges with values
    (between streaming stages, with barrier leaves; a value per instance that
    is also bound out or also feeds an all_to_all edge), streaming
    edges below the root of a streaming graph, non-streaming edges inside one,
    and streaming outputs defined by several children.

    Example: `hpvm-opt --convert-hpvm-to-cpu prog.mlir`, then the upstream
    lowering to LLVM (`--hpvm-lower-to-llvm-pipeline` does both).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
  let options = [
    Option<"collapseGrids", "collapse-grids", "bool", /*default=*/"true",
           "Run a replicated internal node whose only child is a replicated "
           "leaf (no barriers or per-tile memory) as one parallel-for "
           "over the combined grid">,
    Option<"inlineLeaves", "inline-leaves", "bool", /*default=*/"true",
           "Inline each leaf function that has one caller (a range function, "
           "say) into it, when its body is one block in the dialects the "
           "LLVM pipeline lowers everywhere, without stack allocations">,
  ];
}

def HPVMParallelLeafLoops : Pass<"hpvm-parallel-leaf-loops", "ModuleOp"> {
  let summary = "Run the parallel loops of leaves instantiated once on the runtime's thread pool";
  let description = [{
    A leaf instantiated once (a tensor graph's elementwise op, softmax, layer
    norm or pool outside a library kernel) runs on one thread; its sibling
    levels may leave every other core idle. This pass gives such a leaf's
    large loops to the pool: each linalg op on buffers (a `linalg.generic`,
    a transpose, a fill, ...) at the top of the body of a leaf that no
    `hpvm.create_node` instantiates with a grid, whose outermost iterator is
    parallel and indexes every output (an output also read through another
    map disqualifies the op), whose loop ranges are static and
    whose estimated work (iterations times the ops of its body) reaches
    `min-work`, becomes loops (`scf.parallel` for its parallel dimensions);
    the outermost `scf.parallel` is outlined into a body function
    `void(ptr context, ptr range)` that runs the box of its first (up to two)
    dimensions — those parallel and indexing every output, so that no two
    boxes write one element — `hpvm_rt_parallel_for` hands it, and the leaf calls
    `hpvm_rt_parallel_for` with a context holding the values the loop uses
    (buffers as their descriptors), checking its status with
    `hpvm_rt_check_at`. Each element is computed by the same ops in the same
    order as before (reductions stay whole within one call), so results are
    bit-identical to the sequential loop.

    Runs after `convert-hpvm-tensor-to-linalg` (buffers), before
    `convert-hpvm-to-cpu`; the compile pipelines run it when `parallel-leaves`
    is on (the default). Leaves with a grid are left alone: their instances
    already run on the pool.

    Example: `hpvm-opt --convert-hpvm-tensor-to-linalg
    --hpvm-parallel-leaf-loops graph.mlir`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"131072",
           "The least work (iterations times the ops of the loop body) a "
           "loop must have to run on the pool">,
  ];
}

def RaiseHPVMC : Pass<"hpvm-raise-c", "ModuleOp"> {
  let summary = "Raise the HPVM-C calls of imported C (llvm dialect) to hpvm ops";
  let description = [{
    The frontend of HPVM-C (runtime/include/hpvm/hpvm.h). Works on a module imported
    from the LLVM IR clang emits for an HPVM-C program (`hpvm-translate
    --import-llvm`) and turns it into an hpvm program:

    * node functions (passed to `__hpvm__createNodeND` or `__hpvm__launch`)
      that describe a graph become `hpvm.internal`: their bodies are evaluated
      at compile time (loops over constant bounds are fine), each
      `__hpvm__createNodeND` becomes `hpvm.create_node` (extents computed from
      the node's inputs are kept as arithmetic), `__hpvm__bindIn`,
      `__hpvm__bindOut` and `__hpvm__edge` become `hpvm.bind_in`,
      `hpvm.bind_out` and `hpvm.edge`;
    * the other node functions become `hpvm.leaf`, their C body kept in the
      `llvm` dialect: `__hpvm__getNodeInstanceID_*` / `__hpvm__getNumNodeInstances_*`
      on `__hpvm__getNode()` (level 0) or its `__hpvm__getParentNode` chain
      (levels 1, 2) become `hpvm.instance_id` / `hpvm.num_instances`,
      `__hpvm__barrier` `hpvm.barrier`, `__hpvm__malloc` `hpvm.alloc`, the
      atomics `llvm.atomicrmw`, and `__hpvm__return` the `hpvm.return`;
    * `__hpvm__hint` sets `hpvm.targets`, `__hpvm__attributes` the
      `hpvm.access` of pointer inputs;
    * in a leaf that calls ApproxHPVM's `__hpvm__tensor_*`, the parameters
      `__hpvm__tensor_shape(t, rank, sizes...)` declares become ranked f32
      tensor inputs and each intrinsic the `hpvm.tensor.*` op; internal nodes
      take the tensor types of the child inputs they bind, and a launch of a
      root with tensor ports calls a function that runs the graph on memrefs
      over the argument struct's data pointers (docs/HPVM-C.md, "Tensors");
    * in host code, `__hpvm__launch` / `__hpvm__wait` / `__hpvm__push` /
      `__hpvm__pop` become `hpvm.launch` / `hpvm.wait` / `hpvm.push` /
      `hpvm.pop`, reading the packed argument struct (one field per root input,
      then the root's output struct, which `__hpvm__wait` fills) and
      `llvm_hpvm_{track,untrack,request}_mem` become `hpvm.track`,
      `hpvm.untrack` and `hpvm.request`.

    Misuse is an error at the C source line: ports out of range, more than 3
    dimensions, graph calls with non-constant ports or control flow that does
    not depend on constants, computation in a graph-describing function, HPVM
    calls where they do not belong (host calls in nodes, node calls in host
    code), node functions that are not functions. Edge and bind types, inputs
    fed twice or never, and cycles are checked by the dialect's verifiers on
    the raised graph, also at the C source lines.

    Example: `clang -O1 -g -S -emit-llvm -I include prog.c -o prog.ll &&
    hpvm-translate --import-llvm prog.ll | hpvm-opt --hpvm-raise-c`
    (`hpvm-cc prog.c` runs all of it).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::hpvm::HPVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertHPVMTensorToLinalg : Pass<"convert-hpvm-tensor-to-linalg", "ModuleOp"> {
  let summary = "Lower hpvm.tensor ops in leaves to linalg and bufferize tensor graphs for the CPU";
  let description = [{
    Replaces every `hpvm.tensor.*` op inside a leaf by upstream ops on
    tensors computing the same value:

    * `conv2d` and `mul` in f32, with `kernels` (the default): a call of the
      runtime's packed kernels (`hpvm_rt_tensor_conv2d_f32`: im2col packed
      straight from the image, or a direct depthwise kernel;
      `hpvm_rt_tensor_matmul_f32`), multithreaded on the runtime's pool, on
      the operands' buffers (`bufferization.to_buffer`, read-only) and a fresh
      result buffer (`memref.alloc`, read back by `bufferization.to_tensor
      restrict`);
    * `conv2d` otherwise: `linalg.conv_2d_nchw_fchw` with its strides (groups
      > 1: a `linalg.generic` reading input channel (f floordiv F/G) * C/G +
      c), the input zero-padded by a generic that selects 0 outside it;
    * `mul` otherwise: `linalg.matmul` (batches: a `linalg.generic`
      contraction);
    * `add` (with broadcast of size-1 dimensions), `relu`, `clipped_relu`,
      `tanh` (as 1 - 2 / (exp(2x) + 1)), `sigmoid`, `batchnorm`, `map`:
      elementwise `linalg.generic`s;
    * `pool max|min|mean`: a `linalg.generic` over the output and the window
      (padding is -inf / +inf / 0; a mean divides by the window size, padding
      included);
    * `softmax`: max, exp(x - max), sum and division along the axis;
    * `reduce`: a `linalg.generic` reduction with the combining region.

    Error budgets are dropped: the result is the exact computation. The
    elementwise ops of a leaf that feed only each other are fused into one
    `linalg.generic`; then every elementwise generic of static shapes that does
    not read its loop indices drops its unit dimensions and merges the loops
    that all its operands walk contiguously (`CollapseElementwise.cpp`): a
    per-channel scale of a `1x144x28x28` image is 144 loops of 784 elements,
    not 144 x 28 loops of 28 (which the C compiler unrolled whole and
    vectorized across rows with gathers), a residual add one loop over the
    whole image. Each element is computed by the same operations: the same
    bits. With `bufferize-graphs` (the default), the tensor program is then made ready
    for `convert-hpvm-to-cpu`: tensor inputs and outputs of node definitions
    become memrefs of the same shape (leaf inputs `#hpvm.access<in>`, read
    through `bufferization.to_tensor restrict`, never written); leaves are
    bufferized with One-Shot Bufferize (each output a fresh allocation or an
    input); host functions pass `bufferization.to_buffer` of their tensors to
    `hpvm.launch` / `hpvm.push` and read `hpvm.wait` / `hpvm.pop` results
    through `bufferization.to_tensor`, and are bufferized too.

    Not supported yet (a diagnostic at the op, never a miscompile):
    dynamically shaped tensors.
    Buffers a leaf allocates for intermediate values are freed before it
    returns. Its output buffers are freed by whoever receives them last: the
    leaf at the other end of the (single) edge, or the host function after its
    last use of the `hpvm.wait` / `hpvm.pop` result (leaves instantiated once,
    without an instance grid; others keep their buffers). A buffer that goes
    along several edges is freed by the receiver every other one feeds, or,
    where the graph does not order them (two branches from one input), by the
    receiver that finishes last: each asks the runtime as it returns
    (`hpvm_rt_buffer_last_use`, counting per address). A leaf that owns its
    input (frees it) and whose output is only a copy of it, reshaped or not
    (a Reshape, Flatten or Squeeze), returns the input's view instead: nothing
    is copied, and the receiver frees the buffer.

    Destination passing: a graph output that the host stores into one of its
    arguments through `bufferization.materialize_in_destination ... restrict
    writable` (the argument promised unaliased, and used for nothing else) is
    written there directly when a leaf of the root computes it into a fresh
    buffer: the argument becomes a new input of the launch, of the root (bound
    to the leaf) and of the leaf (`#hpvm.access<out>`), which writes into it
    instead of allocating (also when the leaf writes its buffer through the
    collapsed view of a merged loop and returns it expanded); the host copies
    nothing. Other outputs are copied.

    Example: `hpvm-opt --convert-hpvm-tensor-to-linalg examples/lenet_layer.mlir`;
    `hpvm-lower-to-cpu-pipeline` runs it before `convert-hpvm-to-cpu`.
  }];
  let options = [
    Option<"bufferizeGraphs", "bufferize-graphs", "bool", /*default=*/"true",
           "Turn tensor node interfaces into memrefs and bufferize leaves and "
           "host code (false: only lower the tensor ops, on tensors)">,
    Option<"kernels", "kernels", "bool", /*default=*/"true",
           "f32 conv2d and mul call the runtime's packed kernels (false: "
           "linalg named ops and generics, compiled with the program)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertHPVMToGPU : Pass<"convert-hpvm-to-gpu", "ModuleOp"> {
  let summary = "Extract the GPU-targeted nodes of HPVM graphs as gpu.func kernels";
  let description = [{
    The kernel extraction shared by the CUDA and OpenCL backends. Every node
    definition with a `#hpvm.target<gpu>` or `#hpvm.target<spirv>` hint that
    has one of the two kernel shapes becomes a `gpu.func` kernel in the
    `gpu.module @hpvm_kernels`, and the node gets `hpvm.kernel =
    @hpvm_kernels::@<node>`:

    * a leaf (any grid of 1 to 3 dimensions): one GPU thread per instance; the
      kernel takes the leaf's inputs and the grid's three extents (i64),
      computes `block_id * block_dim + thread_id` per dimension and returns at
      once in the threads past the grid (partial work-groups);
      `hpvm.instance_id` / `hpvm.num_instances` become those ids and extents;
    * an internal node whose only child is a replicated leaf bound to its
      inputs (the 3-level shape: a grid of tiles, each a grid of instances):
      one work-group per instance of the internal node, one thread per
      instance of the leaf; level 0 of the grid queries becomes the thread id
      and block size, level 1 the block id and grid size, and `hpvm.barrier`
      becomes `gpu.barrier`;
    * a tensor leaf (hinted as above or `#hpvm.target<tensor>`, ApproxHPVM's
      CUDNN_TARGET): one thread per element of its outputs, each op's element
      built from its operands' where it is read (a fused conv + bias +
      activation + pool is one kernel); constant tensors become
      `memref.global`s named in the leaf's `hpvm.tensor_kernel`, which the
      host passes with output buffers it allocates. A convolution, product,
      softmax or reduce of another reduction's result, a pool of one whose
      windows hold an element more than 4 times, a perforation knob (the precision and
      sampling knobs are kernel arithmetic) or an op with no element form
      keeps the node on the CPU with the reason. A leaf whose one tensor
      output is a convolution of one group or a product of matrices followed
      by elementwise ops (bias add, activation, batchnorm, map) computes it
      in work-group tiles instead (`tensor-tiles`): each work-group of 256
      threads a 64 x 64 block of the output as a matrix product (a
      convolution's filters times its input windows), the operands staged
      through work-group memory 16 terms at a time, the epilogue applied
      where each element is stored; the leaf gets `hpvm.tensor_launch =
      array<i64: threads, 256, bytes, bytes>`, which the host launches with
      the two slices' work-group memory. A convolution whose epilogue a pool
      reads (then elementwise ops) is tiled with the pool's window taps as
      the columns: the epilogued values go to a third work-group memory
      parameter (64 x 65 elements), from which each pooled pixel's window is
      folded before the rest of the epilogue.
      A tensor leaf whose whole
      computation is `act?(add?(conv2d(x, W), bias))` or
      `act?(add?(mul(a, b), bias))` in f32 (act: relu, clipped relu, tanh,
      sigmoid; x, W, a, b, bias inputs or constant tensors; no knob; scalar
      outputs only constants) also gets `hpvm.tensor_library`: that cuDNN /
      cuBLAS call, with the indices of its tensors in the host's parameter
      array, which the runtime runs on CUDA instead of the kernel when the
      library loads (docs/GPUBackend.md).

    A kernel may have outputs that are numbers (HPVM-C leaves return sizes),
    memrefs that are one of its memref inputs passed on (a pipeline stage
    handing on the buffer it wrote), and, in leaf kernels, pointers that are
    one of its pointer inputs or null: they must be equal in every instance,
    as HPVM requires of outputs that leave a grid, and the kernel's first
    thread stores them through an extra pointer parameter to
    `{ outputs... }` (index as i64; a memref or pointer as the i64 index of
    the input it is, which the host turns back into what it passed).

    Both kinds of leaf body are kept as they are: structured code
    (memref/scf/arith/math) and imported HPVM-C code (the llvm dialect with
    pointers and branches); functions the leaf calls and constant tables it
    reads are copied into the kernel module, and calls of the C math
    functions (`sqrtf`, `expf`, `powf`, ... and their double versions)
    become `math` ops. Nodes stay in the module (their CPU version is still
    built): the host code calls the kernel when a device is there and the CPU
    version otherwise. A GPU-hinted node that cannot become a kernel gets a
    warning naming the reason (other outputs, `hpvm.alloc` outside a tile's
    allocation nodes, a barrier outside a tile, a call of an external
    function, a global that is not a constant, an aggregate input or an
    integer input that is not whole bytes; `i1` inputs travel as bytes)
    and runs on the CPU.

    Example: `hpvm-opt --convert-hpvm-to-gpu prog.mlir`; `hpvm-embed-kernels`
    then compiles the kernels for the devices.
  }];
  let options = [
    Option<"tensorTiles", "tensor-tiles", "std::string", /*default=*/"\"auto\"",
           "Which convolutions and products of tensor kernels are computed in "
           "work-group tiles (the leaf's hpvm.tensor_launch): auto (32 or "
           "more rows, 64 or more columns, 32 or more terms per sum), always "
           "(wherever the leaf's shape allows), never">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def HPVMEmbedKernels : Pass<"hpvm-embed-kernels", "ModuleOp"> {
  let summary = "Compile the kernels of convert-hpvm-to-gpu for the devices and embed them";
  let description = [{
    Compiles the `gpu.module`s made by `convert-hpvm-to-gpu` for each device
    in `devices` and embeds the binaries in the host module as constant
    globals, then replaces each node's `hpvm.kernel` with a kernel site
    global (`hpvm_rt_kernel_site_t`: node name, kernel name, one image per
    device kind, runtime state, and for a leaf with `hpvm.tensor_library`
    and a CUDA image, its `hpvm_rt_tensor_library_call_t`) and erases the
    `gpu.module`s:

    * `cuda`: NVVM (upstream `convert-gpu-to-nvvm`, `nvvm-attach-target`,
      `gpu-module-to-binary`), PTX for `chip` (sm_80 by default) with
      `features` (+ptx80). Where the CUDA toolkit's `ptxas` and `fatbinary`
      are found (`CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`, `PATH`), the
      image is a fat binary holding a cubin for each architecture in `cubins`
      (sm_80 and sm_90 by default) and the PTX, which the driver
      JIT-compiles for other GPUs; otherwise it is the PTX alone. Every
      kernel `K` also comes as `K__i32` (same parameters), its address
      arithmetic, loop counters and grid checks in 32 bits, which the runtime
      launches when the grid and every buffer fit 2^31 (instances, bytes).
    * `opencl`: OpenCL-flavoured SPIR-V 1.0 (Kernel capability, Physical64
      addressing) through `convert-gpu-to-llvm-spv` and LLVM's SPIR-V backend,
      in process. Pointers of imported leaves become global (CrossWorkgroup)
      pointers, private ones stay private. Where `llvm-spirv` 15 is found
      (`HPVM_LLVM_SPIRV`, `llvm-spirv-15`, `llvm-spirv`), the image also
      carries the module's SPIR 1.2 bitcode, which devices without SPIR-V
      support (PoCL 3.1) build instead (`spir-fallback`).

    `dump-dir`, when set, receives each image (`<module>.ptx`,
    `<module>.fatbin` with the cubins, `<module>.spv`, `<module>.spir.bc`).
  }];
  let options = [
    ListOption<"devices", "devices", "std::string",
               "Devices to compile the kernels for (cuda, opencl)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "CUDA: the GPU architecture of the PTX">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "CUDA: the PTX version">,
    Option<"dumpDir", "dump-dir", "std::string", /*default=*/"\"\"",
           "A directory to write every device image to">,
    Option<"spirFallback", "spir-fallback", "bool", /*default=*/"true",
           "OpenCL: embed the SPIR 1.2 bitcode of each module (llvm-spirv 15) "
           "where the translator is found">,
    Option<"cubins", "cubins", "std::string", /*default=*/"\"sm_80,sm_90\"",
           "CUDA: the architectures to compile cubins for, comma-separated, "
           "where ptxas and fatbinary are found ('' for PTX only)">,
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
  ];
}

#endif // HPVM_CONVERSION_PASSES_TD
