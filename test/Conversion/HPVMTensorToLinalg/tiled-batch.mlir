// RUN: hpvm-opt --hpvm-tile-tensor-batch=chunk-bytes=65536 --convert-hpvm-tensor-to-linalg --canonicalize %s | FileCheck %s

// Leaves over chunks of images (hpvm-tile-tensor-batch), lowered: each
// chunk's convolution reads its images in place (the slice's offset added to
// the batch's pointer, no copy) and absorbs the bias from outside the loop;
// the chunks' temporaries are allocated once before the loop and freed after
// it; the loop carries nothing once bufferized, the normalization writes
// its chunk of the output in place (its loops not merged: merged, it would
// write a buffer of its own, copied), and the leaf returns the buffer the
// chunks were written into (which the runtime then owns).

// CHECK-LABEL: hpvm.leaf @norm(
// CHECK-SAME: %[[X:[^:]*]]: memref<16x4x16x16xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16x16x16xf32>
// CHECK: %[[CONV:.*]] = memref.alloc() : memref<4x16x16x16xf32>
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK-NOT: memref.alloc
// CHECK: %[[SLICE:.*]] = memref.subview %[[X]][%[[I]], 0, 0, 0] [4, 4, 16, 16]
// CHECK: %[[BASE:[^,]*]], %[[OFFSET:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[SLICE]]
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFFSET]], %{{.*}} : index
// CHECK: arith.addi %[[P]], %[[BYTES]] : index
// CHECK: llvm.call @hpvm_rt_tensor_conv2d_f32(
// CHECK: linalg.generic
// CHECK: math.sqrt
// CHECK: %[[DEST:.*]] = memref.subview %[[OUT]][%[[I]], 0, 0, 0] [4, 16, 16, 16]
// CHECK: linalg.generic {{.*}} outs(%[[DEST]] :
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK-NOT: memref.copy
// CHECK: } {image_chunks}
// CHECK: memref.dealloc %[[CONV]]
// CHECK-NOT: memref.dealloc %[[OUT]] :
// CHECK: hpvm.return %[[OUT]] : memref<16x16x16x16xf32>
hpvm.leaf @norm(%x: tensor<16x4x16x16xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<1x16x1x1xf32>, %s: tensor<16xf32>) -> (tensor<16x16x16x16xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]} : (tensor<16x4x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<16x16x16x16xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<16x16x16x16xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x16x16xf32>
  %n = hpvm.tensor.batchnorm %a, %s, %s, %s, %s {epsilon = 1.0e-3 : f64} : (tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16x16x16x16xf32>
  %r = hpvm.tensor.relu %n : tensor<16x16x16x16xf32>
  hpvm.return %r : tensor<16x16x16x16xf32>
}

// CHECK-LABEL: hpvm.leaf @pool(
// CHECK: scf.for
// CHECK: llvm.call @hpvm_rt_tensor_conv2d_f32(
// CHECK: llvm.call @hpvm_rt_tensor_pool_f32(
// CHECK: memref.copy
// CHECK: hpvm.return
hpvm.leaf @pool(%x: tensor<16x16x16x16xf32>, %w: tensor<16x16x1x1xf32>) -> (tensor<16x16x8x8xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1]} : (tensor<16x16x16x16xf32>, tensor<16x16x1x1xf32>) -> tensor<16x16x16x16xf32>
  %p = hpvm.tensor.pool max %c {window = [2, 2], strides = [2, 2], padding = [0, 0]} : tensor<16x16x16x16xf32> -> tensor<16x16x8x8xf32>
  hpvm.return %p : tensor<16x16x8x8xf32>
}
