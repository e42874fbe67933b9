// Attributes and enums of the hpvm dialect: targets, access modes, error budgets.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMATTRS_TD
#define HPVM_DIALECT_HPVM_IR_HPVMATTRS_TD

include "HPVM/Dialect/HPVM/IR/HPVMDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Dialect attributes (printed as #hpvm.<mnemonic><...>)
//===----------------------------------------------------------------------===//

def HPVM_TargetEnum : I32EnumAttr<"Target", "compilation target of a node", [
    I32EnumAttrCase<"cpu", 0>,
    I32EnumAttrCase<"vector", 1>,
    I32EnumAttrCase<"gpu", 2>,
    I32EnumAttrCase<"spirv", 3>,
    I32EnumAttrCase<"tensor", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::hpvm";
}

def HPVM_TargetAttr : EnumAttr<HPVM_Dialect, HPVM_TargetEnum, "target"> {
  let summary = "a target a node may be compiled for";
  let description = [{
    One target hint: `cpu` (threads), `vector` (SIMD across instances), `gpu`
    (NVIDIA, PTX), `spirv` (OpenCL devices) or `tensor` (tensor libraries).
    Node definitions list their hints in the `hpvm.targets` attribute; a node
    without hints is compiled for the CPU.

    ```mlir
    hpvm.leaf @f() attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
      hpvm.return
    }
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

// The values are the runtime's hpvm_rt_access_t (inout = in | out), checked by
// static_asserts in lib/Conversion/HPVMToCPU/RuntimeABI.h and the C API.
def HPVM_AccessEnum : I32EnumAttr<"Access", "how a node uses a buffer argument", [
    I32EnumAttrCase<"in", 1>,
    I32EnumAttrCase<"out", 2>,
    I32EnumAttrCase<"inout", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::hpvm";
}

def HPVM_AccessAttr : EnumAttr<HPVM_Dialect, HPVM_AccessEnum, "access"> {
  let summary = "access mode of a buffer argument of a node";
  let description = [{
    Attached as `hpvm.access` to `memref` or `!llvm.ptr` arguments of node
    definitions. The memory tracker copies `in`/`inout` data to the device that
    runs the node and marks `out`/`inout` data valid only there afterwards.

    ```mlir
    hpvm.leaf @f(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>}) { hpvm.return }
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def HPVM_ErrorBudgetAttr : AttrDef<HPVM_Dialect, "ErrorBudget"> {
  let mnemonic = "error";
  let summary = "relative L1 / L2 error budget of an approximable tensor op";
  let description = [{
    The error an approximate implementation of a tensor op may introduce,
    relative to the exact output: `l1` = ||approx - exact||_1 / ||exact||_1
    and `l2` likewise with the L2 norm (ApproxHPVM, OOPSLA'19). Both are ≥ 0.

    ```mlir
    %c = hpvm.tensor.relu %x {error = #hpvm.error<l1 = 0.01, l2 = 0.02>} : tensor<4xf32>
    ```
  }];
  let parameters = (ins APFloatParameter<"relative L1 error">:$l1,
                        APFloatParameter<"relative L2 error">:$l2);
  let builders = [
    AttrBuilder<(ins "double":$l1, "double":$l2), [{
      return $_get($_ctxt, ::llvm::APFloat(l1), ::llvm::APFloat(l2));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def HPVM_KnobKindEnum : I32EnumAttr<"KnobKind", "approximation knob of a tensor op", [
    I32EnumAttrCase<"perforate_rows", 1>,
    I32EnumAttrCase<"perforate_cols", 2>,
    I32EnumAttrCase<"sample_filter", 3>,
    I32EnumAttrCase<"sample_reduction", 4>,
    I32EnumAttrCase<"fp16", 5>,
    I32EnumAttrCase<"bf16", 6>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::hpvm";
}

def HPVM_KnobAttr : AttrDef<HPVM_Dialect, "Knob"> {
  let mnemonic = "knob";
  let summary = "an approximate implementation chosen for a tensor op";
  let description = [{
    The approximation an `hpvm.tensor.conv2d`, `hpvm.tensor.reduce` or
    `hpvm.tensor.mul` runs with, set as its `hpvm.knob` attribute (by hand, or
    from a configuration file by `hpvm-apply-knobs`). Every sampling knob skips
    one element in `rate` (rate ≥ 2), starting at `offset`
    (0 ≤ offset < rate), as ApproxTuner's knobs do. On `hpvm.tensor.conv2d`:

    * `perforate_rows` / `perforate_cols`: output rows (columns) y with
      y mod rate = offset are not computed; each is the average of its computed
      neighbours (perforated convolution, interpolated);
    * `sample_filter`: filter elements k (over channel, row, column of the
      window, flattened) with k mod rate = offset are skipped, and the kept
      weights scaled by rate / (rate - 1) (filter sampling).

    On `hpvm.tensor.reduce`, whose combiner must be a single `arith.addf`,
    `arith.maximumf`, `arith.minimumf`, `arith.maxnumf` or `arith.minnumf` of
    the accumulator and the element:

    * `sample_reduction`: the elements k along the reduced axis with
      k mod rate = offset are skipped; a sum is scaled by
      n / (number of elements kept) to estimate the full sum (n: the extent of
      the axis; with none kept, the result is the init value), a maximum or
      minimum is not scaled (reduction sampling).

    On `hpvm.tensor.mul`, whose operands and result are f32:

    * `fp16` / `bf16` (half-precision storage): the operands are stored in
      IEEE half precision (binary16) or bfloat16 (rounded to nearest even,
      constants at compile time), the products are summed in f32, and the
      result is rounded to the same format. These knobs take no rate or offset.

    ```mlir
    %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %s = hpvm.tensor.reduce %y, %zero axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 0>}
        : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
    ^bb0(%acc: f32, %e: f32):
      %t = arith.addf %acc, %e : f32
      hpvm.tensor.yield %t : f32
    }
    %p = hpvm.tensor.mul %a, %b {hpvm.knob = #hpvm.knob<bf16>}
        : (tensor<1x4096xf32>, tensor<4096x1000xf32>) -> tensor<1x1000xf32>
    ```
  }];
  // `#hpvm.knob<kind, rate = R, offset = O>`, or `#hpvm.knob<kind>` (rate and
  // offset 0) for the precision knobs.
  let parameters = (ins EnumParameter<HPVM_KnobKindEnum>:$kind, "int64_t":$rate,
                        "int64_t":$offset);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// fp16 and bf16: the knobs that change the precision of an op's storage
    /// instead of skipping part of its work (no rate, no offset).
    static bool isPrecision(KnobKind kind) {
      return kind == KnobKind::fp16 || kind == KnobKind::bf16;
    }
    bool isPrecision() const { return isPrecision(getKind()); }
  }];
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Enums printed as bare keywords inside ops
//===----------------------------------------------------------------------===//

def HPVM_DimEnum : I32EnumAttr<"Dim", "dimension of an instance grid", [
    I32EnumAttrCase<"x", 0>,
    I32EnumAttrCase<"y", 1>,
    I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::mlir::hpvm";
}

def HPVM_ReplicationEnum : I32EnumAttr<"Replication",
    "how the instances of two nodes joined by an edge are paired", [
    I32EnumAttrCase<"one_to_one", 0>,
    I32EnumAttrCase<"all_to_all", 1>]> {
  let cppNamespace = "::mlir::hpvm";
}

def HPVM_PoolKindEnum : I32EnumAttr<"PoolKind", "reduction of a pooling window", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"min", 1>,
    I32EnumAttrCase<"mean", 2>]> {
  let cppNamespace = "::mlir::hpvm";
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMATTRS_TD
