// A convolution whose filter (and bias, when its epilogue has one) are
// constants of the program calls the runtime's constant-filter kernel, which
// packs the weights once; a filter or bias that arrives through a port keeps
// the kernel that packs them on every call. Products likewise, by their right
// operand (the weights).
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s

// CHECK-LABEL: hpvm.leaf @constant_filter(
// CHECK: memref.get_global
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32(
hpvm.leaf @constant_filter(%x: tensor<1x2x8x8xf32>) -> (tensor<1x3x6x6xf32>) {
  %w = arith.constant dense_resource<conv1_weight> : tensor<3x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}

// The constant bias is the kernel's epilogue: still constant.
// CHECK-LABEL: hpvm.leaf @constant_filter_and_bias(
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32(
// CHECK-NOT: linalg.generic
hpvm.leaf @constant_filter_and_bias(%x: tensor<1x2x8x8xf32>) -> (tensor<1x3x6x6xf32>) {
  %w = arith.constant dense<0.5> : tensor<3x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  %b = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x3x1x1xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x3x6x6xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x6x6xf32>
  %r = hpvm.tensor.relu %a : tensor<1x3x6x6xf32>
  hpvm.return %r : tensor<1x3x6x6xf32>
}

// A bias from a port: its packed copy could change, so nothing is kept.
// CHECK-LABEL: hpvm.leaf @port_bias(
// CHECK: call @hpvm_rt_tensor_conv2d_f32(
hpvm.leaf @port_bias(%x: tensor<1x2x8x8xf32>, %b: tensor<1x3x1x1xf32>) -> (tensor<1x3x6x6xf32>) {
  %w = arith.constant dense<0.5> : tensor<3x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x3x6x6xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %a : tensor<1x3x6x6xf32>
}

// A filter from a port.
// CHECK-LABEL: hpvm.leaf @port_filter(
// CHECK: call @hpvm_rt_tensor_conv2d_f32(
hpvm.leaf @port_filter(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}

// Products: constant weights (a fully connected layer, a projection) and a
// constant bias call the kernel that packs the weights once.
// CHECK-LABEL: hpvm.leaf @constant_weights(
// CHECK: call @hpvm_rt_tensor_matmul_constant_f32(
// CHECK-NOT: linalg.generic
hpvm.leaf @constant_weights(%x: tensor<16x8xf32>) -> (tensor<16x4xf32>) {
  %w = arith.constant dense<0.25> : tensor<8x4xf32>
  %m = hpvm.tensor.mul %x, %w : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %a = hpvm.tensor.add %m, %b : (tensor<16x4xf32>, tensor<1x4xf32>) -> tensor<16x4xf32>
  hpvm.return %a : tensor<16x4xf32>
}

// Weights from a port (an attention's keys): packed on every call.
// CHECK-LABEL: hpvm.leaf @port_weights(
// CHECK: call @hpvm_rt_tensor_matmul_f32(
hpvm.leaf @port_weights(%x: tensor<16x8xf32>, %w: tensor<8x4xf32>) -> (tensor<16x4xf32>) {
  %m = hpvm.tensor.mul %x, %w : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  hpvm.return %m : tensor<16x4xf32>
}

// A constant left operand only: nothing is kept either.
// CHECK-LABEL: hpvm.leaf @constant_lhs(
// CHECK: call @hpvm_rt_tensor_matmul_f32(
hpvm.leaf @constant_lhs(%w: tensor<8x4xf32>) -> (tensor<16x4xf32>) {
  %x = arith.constant dense<0.5> : tensor<16x8xf32>
  %m = hpvm.tensor.mul %x, %w : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  hpvm.return %m : tensor<16x4xf32>
}
