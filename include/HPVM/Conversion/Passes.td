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
      (level >= 1);
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
    them. A leaf with top-level `hpvm.barrier`s runs phase by phase (one
    parallel-for per phase, values crossing a barrier spilled per instance);
    `hpvm.alloc` memory returned by an allocation leaf lives until its parent
    instance ends; one_to_one edges between replicated nodes carry one value
    per instance in an array indexed by the linear instance id. Every node runs on the CPU whatever its hints. Not supported
    yet (a diagnostic, never a miscompile): barriers inside control flow,
    other uses of `hpvm.alloc`, tensor ops (run
    `convert-hpvm-tensor-to-linalg` first, as the pipelines do), some one_to_one edges with values
    (between streaming stages, with barrier leaves, also bound out), streaming
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
  ];
}

def ConvertHPVMTensorToLinalg : Pass<"convert-hpvm-tensor-to-linalg", "ModuleOp"> {
  let summary = "Lower hpvm.tensor ops in leaves to linalg and bufferize tensor graphs for the CPU";
  let description = [{
    Replaces every `hpvm.tensor.*` op inside a leaf by upstream ops on
    tensors computing the same value:

    * `conv2d` (groups = 1): `linalg.conv_2d_nchw_fchw` with its strides, the
      input zero-padded by `tensor.insert_slice` into a filled tensor;
    * `mul`: `linalg.matmul` (batches: a `linalg.generic` contraction);
    * `add` (with broadcast of size-1 dimensions), `relu`, `clipped_relu`,
      `tanh` (as 1 - 2 / (exp(2x) + 1)), `sigmoid`, `batchnorm`, `map`:
      elementwise `linalg.generic`s;
    * `pool max|min|mean`: a `linalg.generic` over the output and the window
      (padding is -inf / +inf / 0; a mean divides by the window size, padding
      included);
    * `softmax`: max, exp(x - max), sum and division along the axis;
    * `reduce`: a `linalg.generic` reduction with the combining region.

    Error budgets are dropped: the result is the exact computation. With
    `bufferize-graphs` (the default), the tensor program is then made ready
    for `convert-hpvm-to-cpu`: tensor inputs and outputs of node definitions
    become memrefs of the same shape (leaf inputs `#hpvm.access<in>`, read
    through `bufferization.to_tensor restrict`, never written); leaves are
    bufferized with One-Shot Bufferize (each output a fresh allocation or an
    input); host functions pass `bufferization.to_buffer` of their tensors to
    `hpvm.launch` / `hpvm.push` and read `hpvm.wait` / `hpvm.pop` results
    through `bufferization.to_tensor`, and are bufferized too.

    Not supported yet (a diagnostic at the op, never a miscompile): group
    and depthwise convolution (`groups` > 1) and dynamically shaped tensors.
    Buffers a leaf allocates for intermediate values are freed before it
    returns; its output buffers are not freed yet.

    Example: `hpvm-opt --convert-hpvm-tensor-to-linalg examples/lenet_layer.mlir`;
    `hpvm-lower-to-cpu-pipeline` runs it before `convert-hpvm-to-cpu`.
  }];
  let options = [
    Option<"bufferizeGraphs", "bufferize-graphs", "bool", /*default=*/"true",
           "Turn tensor node interfaces into memrefs and bufferize leaves and "
           "host code (false: only lower the tensor ops, on tensors)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // HPVM_CONVERSION_PASSES_TD
