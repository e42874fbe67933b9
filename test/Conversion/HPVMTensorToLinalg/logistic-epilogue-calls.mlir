// The logistic activations after a convolution or product (and its bias) are
// the kernel's epilogue: a sigmoid used once passes HPVM_RT_TENSOR_SIGMOID (3);
// a sigmoid whose input and result feed one product and nothing else (SiLU as
// ONNX writes it, the product's operands in either order) passes
// HPVM_RT_TENSOR_SILU (4); anything else stays elementwise code.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s

// CHECK-LABEL: hpvm.leaf @conv_bias_sigmoid(
// CHECK: %[[ACT:[^ ]+]] = arith.constant 3 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32({{(([^,]+, ){18})}}%[[ACT]], %
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_bias_sigmoid(%x: tensor<1x2x5x5xf32>) -> (tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<6x2x1x1xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %b = arith.constant dense<0.25> : tensor<1x6x1x1xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x6x5x5xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %s = hpvm.tensor.sigmoid %a : tensor<1x6x5x5xf32>
  hpvm.return %s : tensor<1x6x5x5xf32>
}

// CHECK-LABEL: hpvm.leaf @conv_bias_silu(
// CHECK: %[[ACT:[^ ]+]] = arith.constant 4 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32({{(([^,]+, ){18})}}%[[ACT]], %
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_bias_silu(%x: tensor<1x2x5x5xf32>) -> (tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<6x2x1x1xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %b = arith.constant dense<0.25> : tensor<1x6x1x1xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x6x5x5xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %s = hpvm.tensor.sigmoid %a : tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %a, %s : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}

// The operands the other way round, the filter from a port, no bias.
// CHECK-LABEL: hpvm.leaf @conv_silu_swapped(
// CHECK: %[[ACT:[^ ]+]] = arith.constant 4 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_f32({{(([^,]+, ){18})}}%[[ACT]], %
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_silu_swapped(%x: tensor<1x2x5x5xf32>, %w: tensor<6x2x1x1xf32>) -> (tensor<1x6x5x5xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %s = hpvm.tensor.sigmoid %c : tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %s, %c : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e1, %e0 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}

// A product with its per-column bias and SiLU.
// CHECK-LABEL: hpvm.leaf @matmul_bias_silu(
// CHECK: %[[ACT:[^ ]+]] = arith.constant 4 : i64
// CHECK: call @hpvm_rt_tensor_matmul_constant_f32({{(([^,]+, ){8})}}%[[ACT]], %
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @matmul_bias_silu(%x: tensor<2x5xf32>) -> (tensor<2x6xf32>) {
  %w = arith.constant dense<0.5> : tensor<5x6xf32>
  %p = hpvm.tensor.mul %x, %w : (tensor<2x5xf32>, tensor<5x6xf32>) -> tensor<2x6xf32>
  %b = arith.constant dense<0.25> : tensor<1x6xf32>
  %a = hpvm.tensor.add %p, %b : (tensor<2x6xf32>, tensor<1x6xf32>) -> tensor<2x6xf32>
  %s = hpvm.tensor.sigmoid %a : tensor<2x6xf32>
  %y = hpvm.tensor.map %a, %s : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<2x6xf32>
}

// The convolution's result used a third time: the bias only; sigmoid and
// product stay elementwise.
// CHECK-LABEL: hpvm.leaf @used_thrice(
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32(
// CHECK: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @used_thrice(%x: tensor<1x2x5x5xf32>) -> (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<6x2x1x1xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %s = hpvm.tensor.sigmoid %c : tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %c, %s : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.mulf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y, %c : tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>
}

// A map that is not the product (a sum): the sigmoid is not absorbed either.
// CHECK-LABEL: hpvm.leaf @not_a_product(
// CHECK: %[[ACT:[^ ]+]] = arith.constant 0 : i64
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32({{(([^,]+, ){18})}}%[[ACT]], %
// CHECK: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @not_a_product(%x: tensor<1x2x5x5xf32>) -> (tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<6x2x3x3xf32>
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1]} : (tensor<1x2x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  %s = hpvm.tensor.sigmoid %c : tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %c, %s : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %m = arith.addf %e0, %e1 : f32
    hpvm.tensor.yield %m : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}
