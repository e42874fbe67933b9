// A convolution with an approximation knob (hpvm.knob) calls the runtime's
// approximate kernel: the knob (1: perforate rows, 2: columns, 3: sample the
// filter), its rate and offset follow the epilogue's arguments. Without the
// kernels (kernels=false) a knob is an error, never silently exact.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg --cse | FileCheck %s
// RUN: not hpvm-opt %s --convert-hpvm-tensor-to-linalg=kernels=false 2>&1 | FileCheck %s --check-prefix=LINALG

// CHECK-LABEL: hpvm.leaf @rows(
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c0_i64, %{{.*}}, %c1_i64, %c2_i64, %c1_i64)
// CHECK-NOT: call @hpvm_rt_tensor_conv2d_f32
// CHECK: hpvm.return
// LINALG: error: 'hpvm.tensor.conv2d' op with #hpvm.knob<perforate_rows, rate = 2, offset = 1> needs the runtime's kernels (f32 operands, convert-hpvm-tensor-to-linalg kernels=true); found kernels=false
hpvm.leaf @rows(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}

// The epilogue is still absorbed: bias pointer, relu (1), then the knob.
// CHECK-LABEL: hpvm.leaf @sampled_relu(
// CHECK-NOT: linalg.generic
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c1_i64, %{{.*}}, %c3_i64, %c4_i64, %c3_i64)
// CHECK-LABEL: hpvm.leaf @columns(
// CHECK: call @hpvm_rt_tensor_conv2d_approx_f32({{.*}}, %c2_i64, %c3_i64, %c0_i64)
hpvm.leaf @sampled_relu(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>,
                        %b: tensor<1x3x1x1xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 3>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  %a = hpvm.tensor.add %c, %b : (tensor<1x3x6x6xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x6x6xf32>
  %r = hpvm.tensor.relu %a : tensor<1x3x6x6xf32>
  hpvm.return %r : tensor<1x3x6x6xf32>
}
hpvm.leaf @columns(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_cols, rate = 3, offset = 0>}
      : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  hpvm.return %c : tensor<1x3x6x6xf32>
}
