// A convolution whose filter (and bias, when its epilogue has one) are
// constants of the program calls the runtime's constant-filter kernel, which
// packs the weights once; a filter or bias that arrives through a port keeps
// the kernel that packs them on every call.
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
