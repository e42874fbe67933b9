// Tensor ops of the hpvm dialect (ApproxHPVM): value-semantics, shape-verified, approximable.
#ifndef HPVM_DIALECT_HPVM_IR_HPVMTENSOROPS_TD
#define HPVM_DIALECT_HPVM_IR_HPVMTENSOROPS_TD

include "HPVM/Dialect/HPVM/IR/HPVMNodeOps.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def HPVM_FloatTensor : RankedTensorOf<[AnyFloat]>;

/// Every tensor op lives in a leaf and accepts an optional error budget.
class HPVM_TensorOp<string mnemonic, list<Trait> traits = []>
    : HPVM_Op<"tensor." # mnemonic, !listconcat(traits, [
        HPVM_InLeaf, HPVM_ApproximableOpInterface])> {
  /// Arguments every tensor op has, appended to the op's own.
  dag errorArgs = (ins OptionalAttr<HPVM_ErrorBudgetAttr>:$error);
}

/// A side-effect-free tensor op whose result type follows from its operands;
/// the verifier checks the declared type against the inferred one.
class HPVM_InferredTensorOp<string mnemonic, list<Trait> traits = []>
    : HPVM_TensorOp<mnemonic, !listconcat(traits, [
        Pure, InferTypeOpAdaptorWithIsCompatible])> {
  // verify() reports shape errors precisely; see HPVMTensorOps.cpp.
  let hasVerifier = 1;
}

def HPVM_TensorAddOp : HPVM_InferredTensorOp<"add"> {
  let summary = "elementwise sum with broadcast of size-1 dimensions";
  let description = [{
    Adds two tensors of equal rank. A dimension of size 1 in either operand is
    broadcast to the other's size (the bias add of a convolution layer).

    ```mlir
    %a = hpvm.tensor.add %c, %b
        : (tensor<1x8x26x26xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x26x26xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$lhs, HPVM_FloatTensor:$rhs), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def HPVM_TensorMulOp : HPVM_InferredTensorOp<"mul"> {
  let summary = "matrix multiplication (batched over equal leading dimensions)";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]` on row-major matrices; leading
    (batch) dimensions must be equal. This is the fully-connected layer of
    ApproxHPVM.

    ```mlir
    %y = hpvm.tensor.mul %x, %w : (tensor<1x784xf32>, tensor<784x10xf32>) -> tensor<1x10xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$lhs, HPVM_FloatTensor:$rhs), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def HPVM_TensorConv2DOp : HPVM_InferredTensorOp<"conv2d"> {
  let summary = "2-D convolution of an NCHW image by an FCHW filter";
  let description = [{
    Input `[N, C, H, W]`, filter `[F, C / groups, KH, KW]`, result
    `[N, F, (H + 2*padding[0] - KH) / strides[0] + 1, (W + 2*padding[1] - KW) / strides[1] + 1]`.
    `groups` > 1 gives group convolution; `groups = C = F` is depthwise.

    Channels in blocks: an input of rank 5, `[N, C / B, H, W, B]`, holds
    channel `c` of position `(y, x)` at `[n, c / B, y, x, c % B]` (see
    `hpvm.tensor.to_blocked`); with `result_block = B` the result is
    `[N, F / B, OH, OW, B]` in the same layout. The values are those of the
    convolution of the NCHW tensors. `hpvm-block-tensor-layout` makes these
    forms; the CPU's kernels read and write them directly.

    ```mlir
    %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]}
        : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
    %d = hpvm.tensor.conv2d %b, %v {padding = [1, 1], result_block = 16}
        : (tensor<1x2x28x28x16xf32>, tensor<64x32x3x3xf32>) -> tensor<1x4x28x28x16xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input, HPVM_FloatTensor:$filter,
      DefaultValuedAttr<ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>, "{0, 0}">:$padding,
      DefaultValuedAttr<ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>, "{1, 1}">:$strides,
      DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
      OptionalAttr<I64Attr>:$result_block), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter attr-dict `:` functional-type(operands, results)";
}

def HPVM_TensorPoolOp : HPVM_InferredTensorOp<"pool"> {
  let summary = "2-D pooling (max, min or mean) over windows of an NCHW image";
  let description = [{
    Reduces each `window` of the padded image with `kind`. `padding` is added
    before the first row and column; `padding_end`, where present, after the
    last ones (absent: `padding` on both sides). The padding never wins a max
    or min, and a mean counts it as zeros (it divides by the window's size).
    The result is
    `[N, C, (H + padding[0] + padding_end[0] - window[0]) / strides[0] + 1, ...]`;
    every padding is smaller than the window.

    An end padding larger than the begin padding is ONNX's and PyTorch's
    `ceil_mode`: the last window hangs over the end of the image.

    An input of rank 5 has its channels in blocks, `[N, C / B, H, W, B]` (see
    `hpvm.tensor.to_blocked`); the result is then `[N, C / B, OH, OW, B]`.

    ```mlir
    %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2], padding = [0, 0]}
        : tensor<1x8x26x26xf32> -> tensor<1x8x13x13xf32>
    // ceil_mode: 3x3 windows at stride 2 over 27x27 leave 13x13 (floor)
    // or, with one row and column more at the end, 14x14.
    %q = hpvm.tensor.pool max %s {window = [3, 3], strides = [2, 2], padding = [0, 0],
                                  padding_end = [1, 1]}
        : tensor<1x8x27x27xf32> -> tensor<1x8x14x14xf32>
    ```
  }];
  let arguments = !con((ins HPVM_PoolKindEnum:$kind, HPVM_FloatTensor:$input,
      ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>:$window,
      ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>:$strides,
      DefaultValuedAttr<ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>, "{0, 0}">:$padding,
      OptionalAttr<ConfinedAttr<I64ArrayAttr, [ArrayCount<2>]>>:$padding_end),
      errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// The padding after the last row and column: `padding_end`, or
    /// `padding` where it is absent.
    ::llvm::SmallVector<int64_t> getEndPadding();
  }];
}

def HPVM_TensorToBlockedOp : HPVM_InferredTensorOp<"to_blocked"> {
  let summary = "an NCHW image with its channels in blocks of `block`";
  let description = [{
    `[N, C, H, W] -> [N, C / B, H, W, B]` for the block size `B = block`
    (which divides `C`): element `[n, c, y, x]` goes to
    `[n, c / B, y, x, c % B]`, so that the `B` channels of a block are
    consecutive at each position (the "NCHW16c" layout of CPU libraries, with
    `B = 16`: a vector register of 16 floats holds one position of a block).

    ```mlir
    %b = hpvm.tensor.to_blocked %x {block = 16}
        : tensor<1x32x56x56xf32> -> tensor<1x2x56x56x16xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input,
      ConfinedAttr<I64Attr, [IntPositive]>:$block), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def HPVM_TensorFromBlockedOp : HPVM_InferredTensorOp<"from_blocked"> {
  let summary = "the NCHW image of a tensor with its channels in blocks";
  let description = [{
    `[N, C / B, H, W, B] -> [N, C, H, W]`: the inverse of
    `hpvm.tensor.to_blocked`.

    ```mlir
    %x = hpvm.tensor.from_blocked %b
        : tensor<1x2x56x56x16xf32> -> tensor<1x32x56x56xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

class HPVM_TensorActivationOp<string mnemonic, string formula>
    : HPVM_TensorOp<mnemonic, [Pure, SameOperandsAndResultType,
                               InferTypeOpInterface]> {
  let summary = "elementwise " # formula;
  let description = [{
    Applies the activation elementwise; the result has the operand's type.

    ```mlir
    %r = hpvm.tensor.}] # mnemonic # [{ %x : tensor<1x8x26x26xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def HPVM_TensorReluOp : HPVM_TensorActivationOp<"relu", "max(x, 0)">;
def HPVM_TensorTanhOp : HPVM_TensorActivationOp<"tanh", "tanh(x)">;
def HPVM_TensorSigmoidOp : HPVM_TensorActivationOp<"sigmoid", "1 / (1 + exp(-x))">;

def HPVM_TensorClippedReluOp : HPVM_TensorOp<"clipped_relu",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "elementwise min(max(x, 0), max)";
  let description = [{
    ReLU clipped at `max` (> 0), e.g. ReLU6.

    ```mlir
    %r = hpvm.tensor.clipped_relu %x max 6.0 : tensor<1x8x26x26xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input, F64Attr:$max), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input `max` $max attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def HPVM_TensorSoftmaxOp : HPVM_TensorOp<"softmax",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "softmax along one axis";
  let description = [{
    Normalizes `exp(x)` along `axis` (default 1: the channels of NCHW or the
    classes of an `[N, classes]` matrix).

    ```mlir
    %p = hpvm.tensor.softmax %logits {axis = 1} : tensor<1x10xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input,
                            DefaultValuedAttr<I64Attr, "1">:$axis), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def HPVM_TensorBatchNormOp : HPVM_InferredTensorOp<"batchnorm"> {
  let summary = "batch normalization of an image per channel";
  let description = [{
    `gamma * (x - mean) / sqrt(variance + epsilon) + beta` per channel, on an
    NCHW image or one with its channels in blocks (`[N, C / B, H, W, B]`, as
    `hpvm.tensor.to_blocked` makes). Each parameter is `[C]` or
    `[1, C, 1, 1]` whatever the image's layout; the result has the input's
    type.

    ```mlir
    %y = hpvm.tensor.batchnorm %x, %g, %b, %m, %v {epsilon = 1.0e-05}
        : (tensor<1x8x26x26xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
           tensor<8xf32>) -> tensor<1x8x26x26xf32>
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input, HPVM_FloatTensor:$gamma,
                            HPVM_FloatTensor:$beta, HPVM_FloatTensor:$mean,
                            HPVM_FloatTensor:$variance, F64Attr:$epsilon), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `,` $mean `,` $variance attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def HPVM_TensorMapOp : HPVM_TensorOp<"map", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "elementwise function of tensors of equal shape";
  let description = [{
    Applies the region to the elements at each position of the inputs (all of
    the same shape). The region's arguments are one element per input; it
    yields the element of the result, which has the inputs' shape.

    ```mlir
    %d = hpvm.tensor.map %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      hpvm.tensor.yield %s : f32
    }
    ```
  }];
  let arguments = !con((ins Variadic<HPVM_FloatTensor>:$inputs), errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$mapper);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results) $mapper";
  let hasRegionVerifier = 1;
}

def HPVM_TensorReduceOp : HPVM_TensorOp<"reduce", [RecursiveMemoryEffects, SingleBlock,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "reduction along one axis with a combining region";
  let description = [{
    Folds the elements along `axis` into `init` with the region
    `(accumulator, element) -> accumulator`. The result drops `axis`. A
    reduction whose region is a single sum, maximum or minimum may carry
    `#hpvm.knob<sample_reduction, ...>`, which skips elements along `axis`.

    ```mlir
    %s = hpvm.tensor.reduce %x, %zero axis 1 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
    ^bb0(%acc: f32, %e: f32):
      %t = arith.addf %acc, %e : f32
      hpvm.tensor.yield %t : f32
    }
    ```
  }];
  let arguments = !con((ins HPVM_FloatTensor:$input, AnyFloat:$init, I64Attr:$axis),
                       errorArgs);
  let results = (outs HPVM_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$combiner);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $input `,` $init `axis` $axis attr-dict `:` functional-type(operands, results) $combiner
  }];
  let hasRegionVerifier = 1;
}

def HPVM_TensorYieldOp : HPVM_Op<"tensor.yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["TensorMapOp", "TensorReduceOp"]>]> {
  let summary = "yields the element computed by a tensor map or reduce region";
  let description = [{
    ```mlir
    hpvm.tensor.yield %s : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // HPVM_DIALECT_HPVM_IR_HPVMTENSOROPS_TD
