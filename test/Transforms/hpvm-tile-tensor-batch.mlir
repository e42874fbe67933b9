// RUN: hpvm-opt --hpvm-tile-tensor-batch="chunk-bytes=65536" --split-input-file %s | FileCheck %s
// RUN: not hpvm-opt --hpvm-tile-tensor-batch="chunk-bytes=0" %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: hpvm-tile-tensor-batch: chunk-bytes must be positive, got 0

// A convolution, its bias, a normalization and a ReLU over 16 images of
// 16 KiB: chunks of 4 images (64 KiB); the image is sliced, the filter, bias
// and statistics are read whole, the byte size stays above the loop.

// CHECK-LABEL: hpvm.leaf @norm(
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<16x16x16x16xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[LOOP:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C16]] step %[[C4]] iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[X:.*]] = tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [4, 4, 16, 16] [1, 1, 1, 1] : tensor<16x4x16x16xf32> to tensor<4x4x16x16xf32>
// CHECK: %[[C:.*]] = hpvm.tensor.conv2d %[[X]], %arg1 {padding = [1, 1]} : (tensor<4x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<4x16x16x16xf32>
// CHECK: %[[A:.*]] = hpvm.tensor.add %[[C]], %arg2 : (tensor<4x16x16x16xf32>, tensor<1x16x1x1xf32>) -> tensor<4x16x16x16xf32>
// CHECK: %[[N:.*]] = hpvm.tensor.batchnorm %[[A]], %arg3, %arg3, %arg3, %arg3 {{.*}} -> tensor<4x16x16x16xf32>
// CHECK: %[[R:.*]] = hpvm.tensor.relu %[[N]] : tensor<4x16x16x16xf32>
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[R]] into %[[ACC]][%[[I]], 0, 0, 0] [4, 16, 16, 16] [1, 1, 1, 1]
// CHECK: scf.yield %[[INS]]
// CHECK-NEXT: } {image_chunks}
// CHECK: hpvm.return %[[LOOP]], %{{.*}} : tensor<16x16x16x16xf32>, i64
hpvm.leaf @norm(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<1x16x1x1xf32>, %s: tensor<16xf32>) -> (tensor<16x16x16x16xf32>, i64) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x16x16x16xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<16x16x16x16xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x16x16xf32>
  %n = hpvm.tensor.batchnorm %a, %s, %s, %s, %s {epsilon = 1.0e-3 : f64} : (tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16x16x16x16xf32>
  %r = hpvm.tensor.relu %n : tensor<16x16x16x16xf32>
  %bytes = llvm.mlir.constant(0 : i64) : i64
  hpvm.return %r, %bytes : tensor<16x16x16x16xf32>, i64
}

// -----

// The same in blocks of channels (hpvm-block-tensor-layout's leaves): the
// bias put in blocks reads no image and stays above the loop (which goes at
// the leaf's end, after it); the rank-5 images are sliced on their first
// dimension; the conversion back to NCHW runs per chunk.

// CHECK-LABEL: hpvm.leaf @blocked(
// CHECK: %[[BB:.*]] = hpvm.tensor.to_blocked %arg2
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[X:.*]] = tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [4, 4, 16, 16]
// CHECK: %[[C:.*]] = hpvm.tensor.conv2d %[[X]], %arg1 {{.*}} -> tensor<4x1x16x16x16xf32>
// CHECK: %[[A:.*]] = hpvm.tensor.add %[[C]], %[[BB]] : (tensor<4x1x16x16x16xf32>, tensor<1x1x1x1x16xf32>) -> tensor<4x1x16x16x16xf32>
// CHECK: %[[N:.*]] = hpvm.tensor.batchnorm %[[A]], {{.*}} -> tensor<4x1x16x16x16xf32>
// CHECK: %[[P:.*]] = hpvm.tensor.pool max %[[N]] {{.*}} -> tensor<4x1x8x8x16xf32>
// CHECK: %[[F:.*]] = hpvm.tensor.from_blocked %[[P]] : tensor<4x1x8x8x16xf32> -> tensor<4x16x8x8xf32>
// CHECK: tensor.insert_slice %[[F]] into %[[ACC]][%[[I]], 0, 0, 0] [4, 16, 8, 8]
// CHECK: } {image_chunks}
hpvm.leaf @blocked(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<1x16x1x1xf32>, %s: tensor<16xf32>) -> (tensor<16x16x8x8xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1], result_block = 16 : i64} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x1x16x16x16xf32>
  %bb = hpvm.tensor.to_blocked %b {block = 16 : i64} : tensor<1x16x1x1xf32> -> tensor<1x1x1x1x16xf32>
  %a = hpvm.tensor.add %c, %bb : (tensor<16x1x16x16x16xf32>, tensor<1x1x1x1x16xf32>) -> tensor<16x1x16x16x16xf32>
  %n = hpvm.tensor.batchnorm %a, %s, %s, %s, %s {epsilon = 1.0e-3 : f64} : (tensor<16x1x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16x1x16x16x16xf32>
  %p = hpvm.tensor.pool max %n {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<16x1x16x16x16xf32> -> tensor<16x1x8x8x16xf32>
  %f = hpvm.tensor.from_blocked %p : tensor<16x1x8x8x16xf32> -> tensor<16x16x8x8xf32>
  hpvm.return %f : tensor<16x16x8x8xf32>
}

// -----

// A residual block's end: both images of the add are sliced; the pool after
// the ReLU is the op no kernel absorbs. 12 images: chunks of 4 (the largest
// divisor of 12 whose 16 KiB images fit 64 KiB).

// CHECK-LABEL: hpvm.leaf @residual(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-DAG: tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [4, 16, 16, 16]
// CHECK-DAG: tensor.extract_slice %arg2[%[[I]], 0, 0, 0] [4, 16, 16, 16]
// CHECK: hpvm.tensor.pool {{.*}} -> tensor<4x16x8x8xf32>
// CHECK: tensor.insert_slice %{{.*}} [4, 16, 8, 8]
hpvm.leaf @residual(%x: tensor<12x16x16x16xf32>, %w: tensor<16x16x1x1xf32>, %skip: tensor<12x16x16x16xf32>) -> (tensor<12x16x8x8xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<12x16x16x16xf32>, tensor<16x16x1x1xf32>) -> tensor<12x16x16x16xf32>
  %a = hpvm.tensor.add %c, %skip : (tensor<12x16x16x16xf32>, tensor<12x16x16x16xf32>) -> tensor<12x16x16x16xf32>
  %r = hpvm.tensor.relu %a : tensor<12x16x16x16xf32>
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<12x16x16x16xf32> -> tensor<12x16x8x8xf32>
  hpvm.return %p : tensor<12x16x8x8xf32>
}

// -----

// Left as they are: a tail the convolution's kernel absorbs (a bias and one
// activation); a whole batch that fits two chunks; a filter larger than half
// a chunk's image; an op that is not per image (a flatten and a product).
// Tiled: a leaf that returns an intermediate too (each output built in a
// value the loop carries).

// CHECK-LABEL: hpvm.leaf @absorbed(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @absorbed(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<1x16x1x1xf32>) -> (tensor<16x16x16x16xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x16x16x16xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<16x16x16x16xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x16x16xf32>
  %r = hpvm.tensor.relu %a : tensor<16x16x16x16xf32>
  hpvm.return %r : tensor<16x16x16x16xf32>
}

// CHECK-LABEL: hpvm.leaf @small(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @small(%x: tensor<8x4x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> (tensor<8x16x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<8x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x8x8xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<8x16x8x8xf32> -> tensor<8x16x4x4xf32>
  hpvm.return %p : tensor<8x16x4x4xf32>
}

// CHECK-LABEL: hpvm.leaf @large_filter(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @large_filter(%x: tensor<8x128x8x8xf32>, %w: tensor<128x128x3x3xf32>) -> (tensor<8x128x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<8x128x8x8xf32>, tensor<128x128x3x3xf32>) -> tensor<8x128x8x8xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<8x128x8x8xf32> -> tensor<8x128x4x4xf32>
  hpvm.return %p : tensor<8x128x4x4xf32>
}

// CHECK-LABEL: hpvm.leaf @two_outputs(
// CHECK: %{{.*}}:2 = scf.for
// CHECK-COUNT-2: tensor.insert_slice
// CHECK: hpvm.return
hpvm.leaf @two_outputs(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>) -> (tensor<16x16x16x16xf32>, tensor<16x16x8x8xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x16x16x16xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<16x16x16x16xf32> -> tensor<16x16x8x8xf32>
  hpvm.return %c, %p : tensor<16x16x16x16xf32>, tensor<16x16x8x8xf32>
}

// CHECK-LABEL: hpvm.leaf @product(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @product(%x: tensor<8x4x16x16xf32>, %w: tensor<16x4x3x3xf32>, %m: tensor<4096x16xf32>) -> (tensor<8x16xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<8x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x16x16xf32>
  %p = hpvm.tensor.pool max %c {window = [1, 1], strides = [1, 1], padding = [0, 0]} : tensor<8x16x16x16xf32> -> tensor<8x16x16x16xf32>
  %f = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<8x16x16x16xf32> into tensor<8x4096xf32>
  %y = hpvm.tensor.mul %f, %m : (tensor<8x4096xf32>, tensor<4096x16xf32>) -> tensor<8x16xf32>
  hpvm.return %y : tensor<8x16xf32>
}

// -----

// A leaf of the tensor target is tiled, unless a device takes it
// (tensor-leaves=false, as the pipelines set with --target devices).

// RUN: hpvm-opt --hpvm-tile-tensor-batch="chunk-bytes=65536 tensor-leaves=false" --split-input-file %s | FileCheck %s --check-prefix=DEVICE
// CHECK-LABEL: hpvm.leaf @for_tensor_runtime(
// CHECK: scf.for
// DEVICE-LABEL: hpvm.leaf @for_tensor_runtime(
// DEVICE-NOT: scf.for
// DEVICE: hpvm.return
hpvm.leaf @for_tensor_runtime(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>) -> (tensor<16x16x8x8xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x16x16x16xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<16x16x16x16xf32> -> tensor<16x16x8x8xf32>
  hpvm.return %p : tensor<16x16x8x8xf32>
}

// -----

// Not images: a scalar and a matrix (no batch dimension to split).

// CHECK-LABEL: hpvm.leaf @scalar(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @scalar(%x: tensor<f32>) -> (tensor<f32>) {
  %r = hpvm.tensor.relu %x : tensor<f32>
  hpvm.return %r : tensor<f32>
}
// CHECK-LABEL: hpvm.leaf @matrix(
// CHECK-NOT: scf.for
// CHECK: hpvm.return
hpvm.leaf @matrix(%x: tensor<4096x1024xf32>) -> (tensor<4096x1024xf32>) {
  %r = hpvm.tensor.relu %x : tensor<4096x1024xf32>
  %t = hpvm.tensor.tanh %r : tensor<4096x1024xf32>
  hpvm.return %t : tensor<4096x1024xf32>
}
