// Shape and attribute rules of the hpvm.tensor ops (NCHW images, row-major
// matrices), one case per rule.
// RUN: hpvm-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect
// (unregistered ops stand for a foreign terminator in a region)

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'hpvm.tensor.add' op expects operands of one element type, found 'f32' and 'f16'}}
  %r = hpvm.tensor.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.add' op expects operands of equal rank (only size-1 dimensions broadcast), found 'tensor<2x3xf32>' and 'tensor<3xf32>'}}
  %r = hpvm.tensor.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.add' op cannot broadcast dimension 1: 3 in the lhs, 4 in the rhs; expected equal sizes or 1}}
  %r = hpvm.tensor.add %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) {
  // expected-error @+2 {{'hpvm.tensor.add' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<1x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) {
  // expected-error @+1 {{'hpvm.tensor.add' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<2x3xi32>'}}
  %r = hpvm.tensor.add %a, %b : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.mul' op expects two matrices (or batches of matrices) of equal rank >= 2, found 'tensor<3xf32>' and 'tensor<3xf32>'}}
  %r = hpvm.tensor.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'hpvm.tensor.mul' op contracted dimensions differ: the lhs has 3 columns but the rhs has 4 rows}}
  %r = hpvm.tensor.mul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x2x3xf32>, %b: tensor<4x3x5xf32>) {
  // expected-error @+1 {{'hpvm.tensor.mul' op batch dimension 0 is 2 in the lhs but 4 in the rhs}}
  %r = hpvm.tensor.mul %a, %b : (tensor<2x2x3xf32>, tensor<4x3x5xf32>) -> tensor<2x2x5xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{'hpvm.tensor.mul' op inferred type(s) 'tensor<2x5xf32>' are incompatible with return type(s) of operation 'tensor<5x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.mul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op expects the input to be an NCHW image (rank 4) or one with its channels in blocks of a static size (rank 5, [N, C / B, H, W, B]), found 'tensor<1x28x28xf32>'}}
  %r = hpvm.tensor.conv2d %x, %w : (tensor<1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x3x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op input has 3 channels but the filter expects 1 x 1 groups = 1}}
  %r = hpvm.tensor.conv2d %x, %w : (tensor<1x3x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x4x28x28xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op 6 filters cannot be split into 4 groups}}
  %r = hpvm.tensor.conv2d %x, %w {groups = 4} : (tensor<1x4x28x28xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op expects strides > 0, found [0, 1]}}
  %r = hpvm.tensor.conv2d %x, %w {strides = [0, 1]} : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op expects padding >= 0, found [-1, 0]}}
  %r = hpvm.tensor.conv2d %x, %w {padding = [-1, 0]} : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x2x2xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op window 3x3 is larger than the padded input 2x2}}
  %r = hpvm.tensor.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x1x1xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op attribute 'strides' failed to satisfy constraint: 64-bit integer array attribute with exactly 2 elements}}
  %r = hpvm.tensor.conv2d %x, %w {strides = [1, 1, 1]} : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+2 {{'hpvm.tensor.conv2d' op inferred type(s) 'tensor<1x8x13x13xf32>' are incompatible with return type(s) of operation 'tensor<1x8x26x26xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.conv2d %x, %w {strides = [2, 2]} : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf16>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op expects input and filter of one element type, found 'f32' and 'f16'}}
  %r = hpvm.tensor.conv2d %x, %w : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf16>) -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x26x26xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects a window > 0, found [0, 2]}}
  %r = hpvm.tensor.pool max %x {window = [0, 2], strides = [2, 2]} : tensor<1x8x26x26xf32> -> tensor<1x8x13x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x26x26xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects padding smaller than the window 2x2, found [2, 0]}}
  %r = hpvm.tensor.pool max %x {window = [2, 2], strides = [2, 2], padding = [2, 0]} : tensor<1x8x26x26xf32> -> tensor<1x8x13x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x27x27xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects padding_end smaller than the window 3x3, found [3, 1]}}
  %r = hpvm.tensor.pool max %x {window = [3, 3], strides = [2, 2], padding_end = [3, 1]} : tensor<1x8x27x27xf32> -> tensor<1x8x14x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x27x27xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects padding_end >= 0, found [0, -1]}}
  %r = hpvm.tensor.pool max %x {window = [3, 3], strides = [2, 2], padding_end = [0, -1]} : tensor<1x8x27x27xf32> -> tensor<1x8x13x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x27x27xf32>) {
  // A ceil_mode pool's result counts the windows over the end of the image.
  // expected-error @+2 {{'hpvm.tensor.pool' op inferred type(s) 'tensor<1x8x14x13xf32>' are incompatible with return type(s) of operation 'tensor<1x8x13x13xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.pool max %x {window = [3, 3], strides = [2, 2], padding = [0, 0], padding_end = [2, 0]} : tensor<1x8x27x27xf32> -> tensor<1x8x13x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x8x26x26xf32>) {
  // expected-error @+2 {{'hpvm.tensor.pool' op inferred type(s) 'tensor<1x8x13x13xf32>' are incompatible with return type(s) of operation 'tensor<1x8x26x26xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.pool mean %x {window = [2, 2], strides = [2, 2]} : tensor<1x8x26x26xf32> -> tensor<1x8x26x26xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<8x26x26xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects the input to be an NCHW image (rank 4) or one with its channels in blocks of a static size (rank 5, [N, C / B, H, W, B]), found 'tensor<8x26x26xf32>'}}
  %r = hpvm.tensor.pool min %x {window = [2, 2], strides = [2, 2]} : tensor<8x26x26xf32> -> tensor<8x13x13xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.clipped_relu' op expects a finite 'max' > 0, found 0}}
  %r = hpvm.tensor.clipped_relu %x max 0.0 : tensor<4xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x10xf32>) {
  // expected-error @+1 {{'hpvm.tensor.softmax' op axis 2 out of range for a tensor of rank 2}}
  %r = hpvm.tensor.softmax %x {axis = 2} : tensor<1x10xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.relu' op requires the same type for all operands and results}}
  %r = "hpvm.tensor.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x4x8x8xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{'hpvm.tensor.batchnorm' op expects gamma of shape [4] or [1, 4, 1, 1] (one value per channel), found 'tensor<3xf32>'}}
  %r = hpvm.tensor.batchnorm %x, %g, %g, %g, %g {epsilon = 1.0e-5}
      : (tensor<1x4x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x2x8x8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'hpvm.tensor.batchnorm' op expects gamma of shape [32] or [1, 32, 1, 1] (one value per channel), found 'tensor<16xf32>'}}
  %r = hpvm.tensor.batchnorm %x, %g, %g, %g, %g {epsilon = 1.0e-5}
      : (tensor<1x2x8x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x2x8x8x16xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<4x8x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.batchnorm' op expects the input to be an NCHW image (rank 4) or one with its channels in blocks of a static size (rank 5, [N, C / B, H, W, B]), found 'tensor<4x8x8xf32>'}}
  %r = hpvm.tensor.batchnorm %x, %g, %g, %g, %g {epsilon = 1.0e-5}
      : (tensor<4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x4x8x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.batchnorm' op expects a finite epsilon > 0, found 0}}
  %r = hpvm.tensor.batchnorm %x, %g, %g, %g, %g {epsilon = 0.0}
      : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x4x8x8xf32>, %g: tensor<4xf32>, %h: tensor<4xf16>) {
  // expected-error @+1 {{'hpvm.tensor.batchnorm' op variance has element type 'f16' but the input has 'f32'}}
  %r = hpvm.tensor.batchnorm %x, %g, %g, %g, %h {epsilon = 1.0e-5}
      : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) -> tensor<1x4x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'hpvm.tensor.map' op expects inputs of one shape, but input 1 is 'tensor<5xf32>' and input 0 is 'tensor<4xf32>'}}
  %r = hpvm.tensor.map %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    hpvm.tensor.yield %x : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.map' op expects region arguments (f32), found (f16)}}
  %r = hpvm.tensor.map %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f16):
    %e = arith.extf %x : f16 to f32
    hpvm.tensor.yield %e : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.map' op expects the region to yield 'f16', found 'f32'}}
  %r = hpvm.tensor.map %a : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: f32):
    hpvm.tensor.yield %x : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.map' op expects the result to have the inputs' shape, found 'tensor<8xf32>' for inputs of type 'tensor<4xf32>'}}
  %r = hpvm.tensor.map %a : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32):
    hpvm.tensor.yield %x : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f() {
  // expected-error @+1 {{'hpvm.tensor.map' op expects at least one input tensor}}
  %r = hpvm.tensor.map : () -> tensor<4xf32> {
  ^bb0:
    %c = arith.constant 0.0 : f32
    hpvm.tensor.yield %c : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{'hpvm.tensor.reduce' op axis 2 out of range for 'tensor<4x8xf32>'}}
  %r = hpvm.tensor.reduce %a, %z axis 2 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    hpvm.tensor.yield %acc : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+2 {{'hpvm.tensor.reduce' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = hpvm.tensor.reduce %a, %z axis 0 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    hpvm.tensor.yield %acc : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{'hpvm.tensor.reduce' op expects region arguments (f32, f32), found (f32)}}
  %r = hpvm.tensor.reduce %a, %z axis 1 : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32):
    hpvm.tensor.yield %acc : f32
  }
  hpvm.return
}

// -----

func.func @host(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'hpvm.tensor.relu' op expects to be nested in an 'hpvm.leaf': only leaf nodes compute; found in 'func.func'}}
  %r = hpvm.tensor.relu %a : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

hpvm.leaf @f(%a: f32) {
  // expected-error @+1 {{'hpvm.tensor.yield' op expects parent op to be one of 'hpvm.tensor.map, hpvm.tensor.reduce'}}
  hpvm.tensor.yield %a : f32
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{#hpvm.error expects a finite l1 budget >= 0, found -1}}
  %r = hpvm.tensor.relu %a {error = #hpvm.error<l1 = -1.0, l2 = 0.0>} : tensor<4xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.tensor.map' op expects the region to end in 'hpvm.tensor.yield'}}
  %d = hpvm.tensor.map %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%u: f32):
    "test.terminator"(%u) : (f32) -> ()
  }
  hpvm.return
}

// -----

// Approximation knobs (#hpvm.knob, the hpvm.knob attribute of a conv2d or a reduce).
hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{#hpvm.knob<perforate_rows> expects rate >= 2 (one element skipped in rate), found 1}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 1, offset = 0>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{#hpvm.knob<sample_filter> expects 0 <= offset < rate (4), found 4}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 4>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<perforate_cols> applies to hpvm.tensor.conv2d only (perforate_rows, perforate_cols and sample_filter approximate convolutions), found on 'hpvm.tensor.relu'}}
  %r = hpvm.tensor.relu %x {hpvm.knob = #hpvm.knob<perforate_cols, rate = 2, offset = 0>} : tensor<1x1x4x4xf32>
  hpvm.return
}

// -----

// The convolution knobs are not a reduction's ...
hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<sample_filter> applies to hpvm.tensor.conv2d only (perforate_rows, perforate_cols and sample_filter approximate convolutions), found on 'hpvm.tensor.reduce'}}
  %r = hpvm.tensor.reduce %a, %z axis 1 {hpvm.knob = #hpvm.knob<sample_filter, rate = 2, offset = 0>} : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %s = arith.addf %acc, %e : f32
    hpvm.tensor.yield %s : f32
  }
  hpvm.return
}

// -----

// ... and reduction sampling is not a convolution's.
hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<sample_reduction> applies to hpvm.tensor.reduce only (it samples the elements a reduction combines), found on 'hpvm.tensor.conv2d'}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{#hpvm.knob<sample_reduction> expects rate >= 2 (one element skipped in rate), found 0}}
  %r = hpvm.tensor.reduce %a, %z axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 0, offset = 0>} : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %s = arith.addf %acc, %e : f32
    hpvm.tensor.yield %s : f32
  }
  hpvm.return
}

// -----

// Reduction sampling rescales a sum and keeps a maximum or minimum; it cannot
// sample any other combiner.
hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<sample_reduction> expects a combiner that is one arith.addf, arith.maximumf, arith.minimumf, arith.maxnumf or arith.minnumf of the accumulator and the element, found 'arith.mulf'}}
  %r = hpvm.tensor.reduce %a, %z axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 1>} : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %s = arith.mulf %acc, %e : f32
    hpvm.tensor.yield %s : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{expects a combiner that is one arith.addf, arith.maximumf, arith.minimumf, arith.maxnumf or arith.minnumf of the accumulator and the element, found 2 ops before the yield}}
  %r = hpvm.tensor.reduce %a, %z axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 1>} : (tensor<4x8xf32>, f32) -> tensor<8xf32> {
  ^bb0(%acc: f32, %e: f32):
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %acc, %sq : f32
    hpvm.tensor.yield %s : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{found 'arith.maximumf' of other operands than the accumulator and the element}}
  %r = hpvm.tensor.reduce %a, %z axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 3, offset = 2>} : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %m = arith.maximumf %e, %e : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<4x8xf32>, %z: f32) {
  // expected-error @+1 {{found 'arith.minimumf' whose result is not the value yielded}}
  %r = hpvm.tensor.reduce %a, %z axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>} : (tensor<4x8xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %m = arith.minimumf %acc, %e : f32
    hpvm.tensor.yield %acc : f32
  }
  hpvm.return
}

// -----

// Precision knobs: products only, f32 only, no rate or offset.
hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<fp16> applies to hpvm.tensor.mul only (half-precision storage of a product's operands), found on 'hpvm.tensor.conv2d'}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<fp16>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>) {
  // expected-error @+1 {{'hpvm.knob' #hpvm.knob<bf16> expects f32 operands and result (stored in bf16 by the knob), found 'tensor<2x3xf16>'}}
  %m = hpvm.tensor.mul %a, %b {hpvm.knob = #hpvm.knob<bf16>} : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{#hpvm.knob<fp16> takes no rate or offset (it changes the precision of the op's storage and skips nothing), found rate = 2, offset = 0}}
  %m = hpvm.tensor.mul %a, %b {hpvm.knob = #hpvm.knob<fp16, rate = 2, offset = 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{expected a knob kind (perforate_rows, perforate_cols, sample_filter, sample_reduction, fp16, bf16), found 'fp8'}}
  %m = hpvm.tensor.mul %a, %b {hpvm.knob = #hpvm.knob<fp8>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{#hpvm.knob<perforate_rows> expects rate >= 2 (one element skipped in rate), found 0}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'hpvm.knob' expects a #hpvm.knob, found 2 : i64}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = 2} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  hpvm.return
}

// -----

// expected-error @+1 {{'hpvm.error' expects a #hpvm.error<l1 = .., l2 = ..>, found 5.000000e-01 : f32}}
hpvm.leaf @f() attributes {hpvm.error = 0.5 : f32} {
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'hpvm.error' is only valid on node definitions (hpvm.leaf, hpvm.internal; tensor ops carry their budget as 'error'), found on 'hpvm.tensor.relu'}}
  %r = hpvm.tensor.relu %x {hpvm.error = #hpvm.error<l1 = 0.1, l2 = 0.1>} : tensor<4xf32>
  hpvm.return
}

// -----

// Channels in blocks: a block of dynamic size is not a layout.
hpvm.leaf @f(%x: tensor<1x2x8x8x?xf32>) {
  // expected-error @+1 {{'hpvm.tensor.pool' op expects the input to be an NCHW image (rank 4) or one with its channels in blocks of a static size (rank 5, [N, C / B, H, W, B]), found 'tensor<1x2x8x8x?xf32>'}}
  %r = hpvm.tensor.pool max %x {window = [2, 2], strides = [2, 2]} : tensor<1x2x8x8x?xf32> -> tensor<1x2x4x4x?xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x32x8x8xf32>, %w: tensor<24x32x1x1xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op expects a result_block > 0 that divides the 24 filters, found 16}}
  %r = hpvm.tensor.conv2d %x, %w {result_block = 16} : (tensor<1x32x8x8xf32>, tensor<24x32x1x1xf32>) -> tensor<1x1x8x8x16xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x2x8x8x16xf32>, %w: tensor<16x16x1x1xf32>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op input has 32 channels but the filter expects 16 x 1 groups = 16}}
  %r = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8x16xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x24x8x8xf32>) {
  // expected-error @+1 {{'hpvm.tensor.to_blocked' op expects channels that blocks of 16 divide, found 24}}
  %r = hpvm.tensor.to_blocked %x {block = 16} : tensor<1x24x8x8xf32> -> tensor<1x1x8x8x16xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x24x8xf32>) {
  // expected-error @+1 {{'hpvm.tensor.to_blocked' op expects the input (NCHW) to have rank 4, found 'tensor<1x24x8xf32>'}}
  %r = hpvm.tensor.to_blocked %x {block = 8} : tensor<1x24x8xf32> -> tensor<1x3x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x32x8x8xf32>) {
  // expected-error @+1 {{'hpvm.tensor.to_blocked' op attribute 'block' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = hpvm.tensor.to_blocked %x {block = 0} : tensor<1x32x8x8xf32> -> tensor<1x32x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x32x8x8xf32>) {
  // expected-error @+1 {{'hpvm.tensor.from_blocked' op expects channels in blocks (rank 5), found 'tensor<1x32x8x8xf32>'}}
  %r = hpvm.tensor.from_blocked %x : tensor<1x32x8x8xf32> -> tensor<1x32x8x8xf32>
  hpvm.return
}

// -----

hpvm.leaf @f(%x: tensor<1x2x8x8x16xf32>) {
  // expected-error @+2 {{'hpvm.tensor.from_blocked' op inferred type(s) 'tensor<1x32x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x16x8x8xf32>'}}
  // expected-error @+1 {{'hpvm.tensor.from_blocked' op failed to infer returned types}}
  %r = hpvm.tensor.from_blocked %x : tensor<1x2x8x8x16xf32> -> tensor<1x16x8x8xf32>
  hpvm.return
}
