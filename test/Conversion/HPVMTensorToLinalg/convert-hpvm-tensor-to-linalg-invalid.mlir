// convert-hpvm-tensor-to-linalg refusals: what it does not support yet.
// RUN: hpvm-opt %s --split-input-file --convert-hpvm-tensor-to-linalg --verify-diagnostics \
// RUN:   --allow-unregistered-dialect

hpvm.leaf @dynamic(%x: tensor<?xf32>) -> (tensor<?xf32>) {
  // expected-error @+1 {{'hpvm.tensor.relu' op on dynamically shaped tensors is not supported by convert-hpvm-tensor-to-linalg yet (expected static shapes, found 'tensor<?xf32>')}}
  %r = hpvm.tensor.relu %x : tensor<?xf32>
  hpvm.return %r : tensor<?xf32>
}

// -----

// expected-error @+1 {{'hpvm.leaf' op has a tensor input or output of type 'tensor<?xf32>', which convert-hpvm-tensor-to-linalg cannot bufferize yet (expected static shapes)}}
hpvm.leaf @dynamic_interface(%x: tensor<?xf32>) {
  hpvm.return
}

// -----

// An op without a bufferization (unregistered here) stops one-shot bufferization.
// expected-error @+1 {{convert-hpvm-tensor-to-linalg: one-shot bufferization failed here}}
hpvm.leaf @opaque(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4xf32>
  // expected-error @+1 {{op was not bufferized}}
  %y = "test.opaque"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  hpvm.return %y : tensor<4xf32>
}

// -----

// The knobs are implemented by the runtime's f32 kernels only.
hpvm.leaf @knob_f16(%x: tensor<1x2x8x8xf16>, %w: tensor<3x2x3x3xf16>) -> (tensor<1x3x6x6xf16>) {
  // expected-error @+1 {{'hpvm.tensor.conv2d' op with #hpvm.knob<sample_filter, rate = 2, offset = 0> needs the runtime's kernels (f32 operands, convert-hpvm-tensor-to-linalg kernels=true); found non-f32 operands}}
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 2, offset = 0>}
      : (tensor<1x2x8x8xf16>, tensor<3x2x3x3xf16>) -> tensor<1x3x6x6xf16>
  hpvm.return %c : tensor<1x3x6x6xf16>
}
