// The logistic activations after a convolution or product (and its bias) are
// the kernel's epilogue: a sigmoid used once passes HPVM_RT_TENSOR_SIGMOID (3);
// a sigmoid whose input and result feed one product and nothing else (SiLU as
// ONNX writes it, the product's operands in either order) passes
// HPVM_RT_TENSOR_SILU (4); HardSwish maps (below) 5; anything else stays elementwise code.
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

// HardSwish as the ONNX importer writes it (x * max(min(x * (1/6) + 0.5, 1), 0), here with
// the commutative operands the other way round) passes HPVM_RT_TENSOR_HARDSWISH (5).
// CHECK-LABEL: hpvm.leaf @conv_bias_hardswish(
// CHECK: call @hpvm_rt_tensor_conv2d_constant_f32({{(([^,]+, ){18})}}%c5_i64{{(_[0-9]+)?}}, %
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_bias_hardswish(%x: tensor<1x2x5x5xf32>) -> (tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<0.5> : tensor<6x2x1x1xf32>
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %b = arith.constant dense<0.25> : tensor<1x6x1x1xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x6x5x5xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %a : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e: f32):
    %sixth = arith.constant 0.166666672 : f32
    %half = arith.constant 5.000000e-01 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %s = arith.mulf %sixth, %e : f32
    %t = arith.addf %half, %s : f32
    %lo = arith.minimumf %one, %t : f32
    %hi = arith.maximumf %lo, %zero : f32
    %r = arith.mulf %hi, %e : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}

// Not HardSwish: a maximum with -0 (maximumf(-0, +0) is +0 there, -0 here), or a fast-math
// flag on one op; the maps stay elementwise code after a plain call.
// CHECK-LABEL: hpvm.leaf @conv_near_hardswish(
// CHECK: call @hpvm_rt_tensor_conv2d_f32({{(([^,]+, ){18})}}%c0_i64{{(_[0-9]+)?}}, %
// CHECK: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_near_hardswish(%x: tensor<1x2x5x5xf32>, %w: tensor<6x2x1x1xf32>) -> (tensor<1x6x5x5xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %c : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e: f32):
    %sixth = arith.constant 0.166666672 : f32
    %half = arith.constant 5.000000e-01 : f32
    %zero = arith.constant -0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %s = arith.mulf %e, %sixth : f32
    %t = arith.addf %s, %half : f32
    %lo = arith.minimumf %t, %one : f32
    %hi = arith.maximumf %lo, %zero : f32
    %r = arith.mulf %e, %hi : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}

// CHECK-LABEL: hpvm.leaf @conv_fast_hardswish(
// CHECK: call @hpvm_rt_tensor_conv2d_f32({{(([^,]+, ){18})}}%c0_i64{{(_[0-9]+)?}}, %
// CHECK: linalg.generic
// CHECK: hpvm.return
hpvm.leaf @conv_fast_hardswish(%x: tensor<1x2x5x5xf32>, %w: tensor<6x2x1x1xf32>) -> (tensor<1x6x5x5xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  %y = hpvm.tensor.map %c : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  ^bb0(%e: f32):
    %sixth = arith.constant 0.166666672 : f32
    %half = arith.constant 5.000000e-01 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %s = arith.mulf %e, %sixth fastmath<contract> : f32
    %t = arith.addf %s, %half : f32
    %lo = arith.minimumf %t, %one : f32
    %hi = arith.maximumf %lo, %zero : f32
    %r = arith.mulf %e, %hi : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %y : tensor<1x6x5x5xf32>
}
