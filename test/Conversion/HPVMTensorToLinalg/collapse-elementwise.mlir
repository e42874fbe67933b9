// Elementwise loops over contiguous runs: after fusion, an all-parallel
// linalg.generic of static shapes drops its unit dimensions and merges the loops
// every operand walks contiguously, so that the innermost loop is long (the C
// compiler unrolled 28-element rows whole and vectorized across rows, with
// gathers). Loops an operand walks out of order, and loops that read their
// indices, stay as they are.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg="bufferize-graphs=false kernels=false" | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg | FileCheck %s --check-prefix=BUF

// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$CHANNEL:.*]] = affine_map<(d0, d1) -> (d0)>

// A squeeze-excite scale: a per-channel factor times an image, 144 loops of 784.
// CHECK-LABEL: hpvm.leaf @channel_scale(
// CHECK-DAG: %[[S:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : tensor<1x144x1x1xf32> into tensor<144xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2, 3]] : tensor<1x144x28x28xf32> into tensor<144x784xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$CHANNEL]], #[[$ROW]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]] : tensor<144x784xf32>, tensor<144xf32>)
// CHECK: arith.mulf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2, 3]] output_shape [1, 144, 28, 28]
// CHECK: hpvm.return %[[E]]
hpvm.leaf @channel_scale(%s: tensor<1x144x1x1xf32>, %x: tensor<1x144x28x28xf32>)
    -> (tensor<1x144x28x28xf32>) {
  %e = tensor.empty() : tensor<1x144x28x28xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x144x1x1xf32>) outs(%e : tensor<1x144x28x28xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x144x28x28xf32>
  %m = hpvm.tensor.map %x, %b : (tensor<1x144x28x28xf32>, tensor<1x144x28x28xf32>)
      -> tensor<1x144x28x28xf32> {
  ^bb0(%a: f32, %c: f32):
    %r = arith.mulf %a, %c : f32
    hpvm.tensor.yield %r : f32
  }
  hpvm.return %m : tensor<1x144x28x28xf32>
}

// A residual add of two images: one loop over all of it.
// CHECK-LABEL: hpvm.leaf @residual(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}} : tensor<3136xf32>, tensor<3136xf32>)
// CHECK: arith.addf
hpvm.leaf @residual(%x: tensor<1x16x14x14xf32>, %y: tensor<1x16x14x14xf32>)
    -> (tensor<1x16x14x14xf32>) {
  %a = hpvm.tensor.add %x, %y : (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  hpvm.return %a : tensor<1x16x14x14xf32>
}

// A transpose walks its input out of order: its loops stay apart.
// CHECK-LABEL: hpvm.leaf @transposed(
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
hpvm.leaf @transposed(%x: tensor<4x5x6xf32>) -> (tensor<6x5x4xf32>) {
  %e = tensor.empty() : tensor<6x5x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1, d0)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x5x6xf32>) outs(%e : tensor<6x5x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<6x5x4xf32>
  hpvm.return %t : tensor<6x5x4xf32>
}

// A loop that reads its indices keeps them (merged, each would be divisions).
// CHECK-LABEL: hpvm.leaf @indexed(
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.index 1
hpvm.leaf @indexed(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %r = arith.addf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  hpvm.return %t : tensor<4x8xf32>
}

// Bufferized, the scale writes one buffer through a collapsed view and returns
// it expanded; the buffer is the leaf's one allocation.
// BUF-LABEL: hpvm.leaf @channel_scale(
// BUF: %[[A:.*]] = memref.alloc() {{.*}} : memref<1x144x28x28xf32>
// BUF-NOT: memref.alloc
// BUF: %[[C:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1], [2, 3]] : memref<1x144x28x28xf32> into memref<144x784xf32>
// BUF: linalg.generic {{.*}} outs(%[[C]] : memref<144x784xf32>)
// BUF: %[[E:.*]] = memref.expand_shape %[[C]]
// BUF: hpvm.return %[[E]]
