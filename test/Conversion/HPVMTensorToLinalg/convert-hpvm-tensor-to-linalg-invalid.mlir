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
