// Images with their channels in blocks ([N, C / 16, H, W, 16]): f32 ops call
// the runtime's blocked kernels (a convolution's layouts as its last
// argument: 1 the input blocked, 2 the output, 3 both, plus 4 where the
// filter or bias is not a constant), with the bias and
// activation after a blocked convolution its epilogue; without the kernels
// (kernels=false), the NCHW lowering between a transpose out of the blocks
// and one back into them.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg="kernels=false bufferize-graphs=false" \
// RUN:   | FileCheck %s --check-prefix=LINALG

// CHECK-LABEL: hpvm.leaf @stem(
// CHECK: %[[LAYOUTS:.*]] = arith.constant 2 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_blocked_f32({{.*}}, %[[LAYOUTS]])
// CHECK-NOT: linalg.generic
// LINALG-LABEL: hpvm.leaf @stem(
// LINALG: linalg.conv_2d_nchw_fchw
// LINALG: tensor.expand_shape {{.*}} into tensor<1x2x16x6x6xf32>
// LINALG: linalg.transpose ins({{.*}} : tensor<1x2x16x6x6xf32>) outs({{.*}} : tensor<1x2x6x6x16xf32>) permutation = [0, 1, 3, 4, 2]
hpvm.leaf @stem(%x: tensor<1x3x8x8xf32>) -> (tensor<1x2x6x6x16xf32>) {
  %w = arith.constant dense<0.5> : tensor<32x3x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w {result_block = 16} : (tensor<1x3x8x8xf32>, tensor<32x3x3x3xf32>) -> tensor<1x2x6x6x16xf32>
  %b = arith.constant dense<1.0> : tensor<1x2x1x1x16xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x2x6x6x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x6x6x16xf32>
  %r = hpvm.tensor.relu %a : tensor<1x2x6x6x16xf32>
  hpvm.return %r : tensor<1x2x6x6x16xf32>
}

// Blocked in, NCHW out; a bias that is not a constant is the epilogue's all
// the same (packed on each call: 1 + 4).
// CHECK-LABEL: hpvm.leaf @blocked_in(
// CHECK: %[[LAYOUTS:.*]] = arith.constant 5 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_blocked_f32({{.*}}, %[[LAYOUTS]])
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
// LINALG-LABEL: hpvm.leaf @blocked_in(
// LINALG: linalg.transpose ins({{.*}} : tensor<1x2x6x6x16xf32>) outs({{.*}} : tensor<1x2x16x6x6xf32>) permutation = [0, 1, 4, 2, 3]
// LINALG: tensor.collapse_shape {{.*}} into tensor<1x32x6x6xf32>
// LINALG: linalg.conv_2d_nchw_fchw
hpvm.leaf @blocked_in(%x: tensor<1x2x6x6x16xf32>, %b: tensor<1x8x1x1xf32>) -> (tensor<1x8x6x6xf32>) {
  %w = arith.constant dense<0.5> : tensor<8x32x1x1xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x6x6x16xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  hpvm.return %a : tensor<1x8x6x6xf32>
}

// A filter that is not a constant: the blocked kernel, told to pack it on
// each call (3 + 4).
// CHECK-LABEL: hpvm.leaf @port_filter(
// CHECK: %[[LAYOUTS:.*]] = arith.constant 7 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_blocked_f32({{.*}}, %[[LAYOUTS]])
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: hpvm.return
hpvm.leaf @port_filter(%x: tensor<1x2x6x6x16xf32>, %w: tensor<16x32x1x1xf32>) -> (tensor<1x1x6x6x16xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {result_block = 16} : (tensor<1x2x6x6x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x1x6x6x16xf32>
  hpvm.return %c : tensor<1x1x6x6x16xf32>
}

// CHECK-LABEL: hpvm.leaf @pool(
// CHECK: %[[C:.*]] = arith.constant 32 : i64
// CHECK: call @hpvm_rt_tensor_pool_blocked_f32({{.*}}, %{{.*}}, %[[C]],
// LINALG-LABEL: hpvm.leaf @pool(
// LINALG: linalg.transpose
// LINALG: linalg.generic
// LINALG: linalg.transpose {{.*}} permutation = [0, 1, 3, 4, 2]
hpvm.leaf @pool(%x: tensor<1x2x6x6x16xf32>) -> (tensor<1x2x3x3x16xf32>) {
  %p = hpvm.tensor.pool max %x {window = [2, 2], strides = [2, 2]} : tensor<1x2x6x6x16xf32> -> tensor<1x2x3x3x16xf32>
  hpvm.return %p : tensor<1x2x3x3x16xf32>
}

// CHECK-LABEL: hpvm.leaf @layouts(
// CHECK: call @hpvm_rt_tensor_to_blocked_f32(
// CHECK: call @hpvm_rt_tensor_from_blocked_f32(
// LINALG-LABEL: hpvm.leaf @layouts(
// LINALG: tensor.expand_shape
// LINALG: linalg.transpose {{.*}} permutation = [0, 1, 3, 4, 2]
// LINALG: linalg.transpose {{.*}} permutation = [0, 1, 4, 2, 3]
// LINALG: tensor.collapse_shape
hpvm.leaf @layouts(%x: tensor<1x32x4x4xf32>) -> (tensor<1x32x4x4xf32>) {
  %b = hpvm.tensor.to_blocked %x {block = 16} : tensor<1x32x4x4xf32> -> tensor<1x2x4x4x16xf32>
  %n = hpvm.tensor.from_blocked %b : tensor<1x2x4x4x16xf32> -> tensor<1x32x4x4xf32>
  hpvm.return %n : tensor<1x32x4x4xf32>
}

// A batch normalization in blocks: each statistic ([C] or [1, C, 1, 1]) read
// as [C / 16, 16] at (block, lane) (the positions of a block then collapsed
// into one dimension).
// CHECK-LABEL: hpvm.leaf @blocked_norm(
// CHECK-DAG: memref.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
// CHECK-DAG: memref.collapse_shape %arg2 {{\[\[}}0, 1, 2, 3]] : memref<1x32x1x1xf32> into memref<32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IMAGE:.*]], #[[LANE:.*]], #[[LANE]], #[[LANE]], #[[LANE]], #[[IMAGE]]]
// CHECK-SAME: ins({{.*}} : memref<2x36x16xf32>, memref<2x16xf32>, memref<2x16xf32>, memref<2x16xf32>, memref<2x16xf32>)
hpvm.leaf @blocked_norm(%x: tensor<1x2x6x6x16xf32>, %g: tensor<32xf32>, %b: tensor<1x32x1x1xf32>) -> (tensor<1x2x6x6x16xf32>) {
  %n = hpvm.tensor.batchnorm %x, %g, %b, %g, %g {epsilon = 1.0e-3} : (tensor<1x2x6x6x16xf32>, tensor<32xf32>, tensor<1x32x1x1xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x2x6x6x16xf32>
  hpvm.return %n : tensor<1x2x6x6x16xf32>
}
