// Passes of the lowering pipelines (lib/Pipelines): the steps that
// hpvm-lower-to-cpu-pipeline and hpvm-lower-to-llvm-pipeline add around the
// conversions, each runnable alone from hpvm-opt.
#ifndef HPVM_PIPELINES_PASSES_TD
#define HPVM_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPVMHostCodeBypass : Pass<"hpvm-host-code-bypass", "ModuleOp"> {
  let summary = "Run a lowering on the module with its LLVM-dialect functions set aside";
  let description = [{
    Runs the pipeline `lowering` (anchored on `builtin.module`; several run
    in order) on the module
    while the functions already in the LLVM dialect are out of it: host code
    imported from C, and the entry functions the CPU lowering writes. Those
    need none of the passes that lower the rest of a program to the llvm
    dialect, and some of those passes harm them: greedy rewrites with region
    simplification (expand-strided-metadata, convert-vector-to-llvm,
    canonicalize) merge C blocks that differ only in which local array they
    use and leave `llvm.intr.lifetime.start/end` on a block argument, which
    LLVM rejects.

    A function whose body is LLVM ops plus the glue the CPU lowering writes
    into host code (arith, scf, cf and index ops around runtime calls) first
    has that glue lowered by a dialect conversion, which keeps the blocks C
    wrote. Each function set aside leaves a declaration (marked
    `hpvm_set_aside`) in its place for calls and `llvm.mlir.addressof`;
    `llvm.mlir.global_ctors` / `global_dtors` wait beside the functions
    (their verifier wants a definition behind every symbol). After the
    lowering, each function goes back in its declaration's place, or at the
    end of the module when the lowering dropped the declaration.

    The lowering runs as a nested pipeline of this pass, so
    `--mlir-print-ir-after-all` and `--mlir-timing` show its passes. Both
    pipelines use it:
    `hpvm-host-code-bypass{lowering=builtin.module(...)}`. Without a
    `lowering`, the functions are set aside and put back (the glue of host
    code lowered).
  }];
  let options = [
    ListOption<"lowering", "lowering", "OpPassManager",
               "The pipelines run, in order, on the module while the "
               "LLVM-dialect functions are set aside (builtin.module(...))">,
  ];
  let dependentDialects = [
    "LLVM::LLVMDialect",
    "cf::ControlFlowDialect",
  ];
}

def HPVMLinalgToLoopsWhereUsed
    : Pass<"hpvm-linalg-to-loops-where-used", "ModuleOp"> {
  let summary = "convert-linalg-to-loops on the functions that hold a linalg op";
  let description = [{
    Runs upstream's `convert-linalg-to-loops` on each `func.func` of the
    module that holds an op of the linalg dialect, and changes nothing
    otherwise (the pass manager then skips verifying the module again). On a
    lowered graph of 10,000 leaves, `convert-linalg-to-loops` on every
    function cost 0.3 s for programs without any linalg op.
  }];
}

def HPVMVectorToLLVMWhereUsed
    : Pass<"hpvm-vector-to-llvm-where-used", "ModuleOp"> {
  let summary = "convert-vector-to-llvm on the module when it holds a vector op";
  let description = [{
    Runs upstream's `convert-vector-to-llvm` on the module when it holds an
    op of the vector dialect (module-wide: some vector ops lower to calls of
    functions it declares in the module), and changes nothing otherwise. On a
    lowered graph of 10,000 leaves without vector ops, the conversion over the
    module cost 1.27 s.
  }];
}

def HPVMDescribeStreamItems : Pass<"hpvm-describe-stream-items", "ModuleOp"> {
  let summary = "Tell the runtime's MPI layer the layout of streaming items";
  let description = [{
    For `hpvm-cc --distribute=mpi` (the `distribute` option of the pipelines,
    docs/Distributed.md): before each streaming `hpvm.launch`, a call of
    `hpvm_rt_mpi_describe_items` with the layout of the root's items, from
    which the runtime's MPI layer copies pushed items with their buffers to
    other ranks and popped results back. It runs on the hpvm dialect, before
    the graph lowering packs the items: a pushed item is the packed struct of
    the root's inputs, a popped one that of its outputs (natural alignment).

    The layout is a private constant string: the input fields, `;`, the
    output fields, each `<kind><size>.<align>`, separated by `,`:

    * `d`: plain data (integers, floats, vectors);
    * `i`, `o`, `b`: a host pointer the root reads (`hpvm.access` in),
      writes (out) or both (inout, or none given), followed by `n`, the
      size in bytes of that buffer (the next input, an integer);
    * `p`: a pointer among the outputs (it must point into one of the
      item's buffers);
    * `I`, `O`, `B`, `P`: a memref (its descriptor) read, written, both, or
      among the outputs, with `:<rank>:<element bytes>` after the
      alignment: its buffer spans from the aligned pointer to the last
      element its sizes and strides reach. A tensor input is an `I` (the
      graph reads it through a buffer of its shape), a tensor output a `P`
      unless it is an `F`;
    * `F`: a tensor output bound from a port that nothing else reads: a
      buffer the graph allocates and hands to the host, whose bytes travel
      back to rank 0 into a buffer of its own (the worker frees its copy).

    A root whose items cannot travel is refused, at the root: a host
    pointer not followed by its size in bytes, and memrefs or tensors of
    elements that are not whole bytes (`i1`), pushed or popped. Without
    streaming launches the module is unchanged.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def HPVMExpandStridedCopies : Pass<"hpvm-expand-strided-copies"> {
  let summary = "memref.copy between strided views as loops of loads and stores";
  let description = [{
    Rewrites each `memref.copy` whose source or target has a layout other
    than the identity (a `memref.subview`, what bufferization makes of
    `tensor.extract_slice` / `insert_slice`) into a nest of `scf.for` over the
    copy's extents with one `memref.load` and `memref.store` each. Upstream's
    memref-to-llvm lowers such copies to a call of `memrefCopy`, a function of
    MLIR's C runner utilities that compiled programs do not link, and fails
    outright on some; contiguous copies between identity layouts keep their
    lowering to `llvm.intr.memcpy`. Copies of unranked memrefs are left as
    they are. Nested on `func.func` and `llvm.func` (the CPU lowering's range
    functions hold leaf code) in both lowering pipelines, before the loops
    are lowered.
  }];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def HPVMVectorizeLaneLoops : Pass<"hpvm-vectorize-lane-loops"> {
  let summary = "Mark loops over the 16 lanes of a block for the loop vectorizer";
  let description = [{
    Marks each innermost `scf.for` from 0 to 16 by 1 (no loop-carried
    values) whose body only loads and stores 32-bit elements with the loop's
    induction variable as their last index (every other index defined
    outside the loop) and computes with `arith` and `math` ops: its
    `llvm.loop_annotation` asks the C compiler's loop vectorizer for a width
    of 16 (one 512-bit vector of f32 per iteration of the loop around it)
    and forbids unrolling it. An `scf.parallel` whose last dimension is such
    a loop is first split into the parallel loop of its other dimensions
    around an `scf.for` of that one. These are the loops of elementwise ops
    over images with their channels in blocks of 16 (a batch normalization,
    an activation, a bias): unmarked, LLVM unrolled them whole and
    vectorized the loop around them, across positions 16 floats apart, with
    gathers and scatters. Every element is computed by the same operations:
    the same values. `hpvm-cf-to-llvm-in-function` turns the annotation the
    latch branch inherits into the branch's loop metadata. Nested on
    `func.func` and `llvm.func`, after the loops are made and before they
    are lowered.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "scf::SCFDialect"];
}

def HPVMAssertsToLLVM : Pass<"hpvm-asserts-to-llvm", "ModuleOp"> {
  let summary = "cf.assert to the llvm dialect, the rest of the IR untouched";
  let description = [{
    Lowers each `cf.assert` to a branch to a block that reports the message and
    the assert's location through the runtime (`hpvm_rt_assert_failed`, declared
    in the module) and is unreachable after it, and nothing else: a module
    without asserts costs one walk. The failure is an error of the program: it
    ends the program with status 1, or, inside `hpvm_rt_call_guarded` (the
    Python package's calls, embedders), returns there as a status instead of
    ending the process (upstream's lowering prints the message and calls
    `abort`).
    Upstream's `convert-cf-to-llvm` is a module pass for this one pattern; the
    pipeline runs this pass first and then `hpvm-cf-to-llvm-in-function` on
    each function, in parallel (on a graph of 10,000 leaves the module-wide
    conversion cost 0.45 s of 4.05 s on one thread).
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def HPVMControlFlowToLLVMInFunction : Pass<"hpvm-cf-to-llvm-in-function"> {
  let summary = "convert-cf-to-llvm on one function, cf.assert excepted";
  let description = [{
    The patterns of upstream's `convert-cf-to-llvm` but `cf.assert`'s
    (`hpvm-asserts-to-llvm`), applied to the op the pass runs on: nested on
    `func.func` and `llvm.func`, the pass manager runs it on every function
    in parallel. The type converter and the patterns are built once per pass
    instance, not per function. A branch's discardable
    `llvm.loop_annotation` (which `scf-to-cf` copies from a loop, e.g. one
    `hpvm-vectorize-lane-loops` marked) becomes the `llvm.br`'s own loop
    annotation, the loop's `llvm.loop` metadata in LLVM IR.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def HPVMGuardedEntryPoints : Pass<"hpvm-guarded-entry-points", "ModuleOp"> {
  let summary = "Give each C interface function an entry point for hpvm_rt_call_guarded";
  let description = [{
    Runs after `convert-func-to-llvm`: for every defined C interface function
    `_mlir_ciface_<f>` (a public host function), adds an entry point
    `void __hpvm_guarded_<f>(void **args)` of one fixed signature, which loads
    each argument through `args[i]` (the pointer itself for pointer
    parameters, such as memref descriptors; the value it points to for
    scalars), calls `_mlir_ciface_<f>` and stores a result through the
    pointer after the arguments. An embedder hands it to the runtime's
    `hpvm_rt_call_guarded`, which returns an error of the compiled code as a
    status instead of letting it end the process. An entry point that exists
    already is kept.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def HPVMLineTables : Pass<"hpvm-line-tables", "ModuleOp"> {
  let summary = "Give generated functions subprograms and line tables";
  let description = [{
    For `hpvm-cc -g` (the `line-tables` option of
    `hpvm-lower-to-llvm-pipeline`): every `llvm.func` without a subprogram of
    its own (what the lowering generates: leaves' functions and their lane
    variants, range functions, ...) gets one, of line tables only, from its
    ops' source locations, after the debug scopes those carry from the
    function they came from are dropped. Functions with a subprogram (host
    code imported from C) keep theirs. The subprograms come from upstream's
    `ensure-debug-info-scope-on-llvm-func`, run as a nested pipeline.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def HPVMSanitizeFunctions : Pass<"hpvm-sanitize-functions", "ModuleOp"> {
  let summary = "Mark every defined function for a sanitizer's instrumentation";
  let description = [{
    For `hpvm-cc -fsanitize=address|thread` (the `sanitize` option of
    `hpvm-lower-to-llvm-pipeline`): LLVM's AddressSanitizer and
    ThreadSanitizer passes instrument only the functions that carry their
    attribute (`sanitize_address`, `sanitize_thread`), which clang sets when
    it compiles C with `-fsanitize`. The program reaches clang's last compile
    as LLVM IR made by the lowering: host code imported from C without the
    attributes (the import must not see instrumented IR) and the functions
    the lowering generates for leaves and graphs. This pass gives every
    `llvm.func` defined at the top of the module the attribute of each
    sanitizer named, so that the final compile instruments host code and
    leaves alike. A function marked `disable_sanitizer_instrumentation` (C's
    `__attribute__((disable_sanitizer_instrumentation))`) is left alone.
    Sanitizers: `address`, `thread`, `memory`, `hwaddress`; any other name is
    an error. Device kernels are not instrumented.
  }];
  let options = [
    ListOption<"sanitizers", "sanitizers", "std::string",
               "The sanitizers whose attribute every defined function gets "
               "(address, thread, memory, hwaddress)">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // HPVM_PIPELINES_PASSES_TD
