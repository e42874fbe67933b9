// A reduction with #hpvm.knob<sample_reduction> is lowered to loops that visit
// the kept elements only: one linalg.generic over whole blocks of `rate`
// elements, which reads the rate - 1 kept positions of each block through
// strided maps (the skipped one is never loaded), then one over the outputs for
// the partial last block and, for a sum, init + sum * n / kept. Rates above 8
// read runs of consecutive kept elements instead (one operand, an inner loop).
// It needs no kernel: the same code with kernels=false and for f16.
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg="bufferize-graphs=false" | FileCheck %s
// RUN: hpvm-opt %s --convert-hpvm-tensor-to-linalg="bufferize-graphs=false kernels=false" | FileCheck %s
// RUN: hpvm-opt %s --pass-pipeline="builtin.module(convert-hpvm-tensor-to-linalg,hpvm.leaf(convert-linalg-to-loops,canonicalize,cse))" | FileCheck %s --check-prefix=LOOPS

// n = 10, rate 4, offset 1: blocks {0, 2, 3} and {4, 6, 7}, then 8 of the
// partial block {8, 9}; 7 kept, scaled by 10 / 7.
// CHECK-DAG: #[[P0:.*]] = affine_map<(d0, d1) -> (d0, d1 * 4)>
// CHECK-DAG: #[[P2:.*]] = affine_map<(d0, d1) -> (d0, d1 * 4 + 2)>
// CHECK-DAG: #[[P3:.*]] = affine_map<(d0, d1) -> (d0, d1 * 4 + 3)>
// CHECK-DAG: #[[BLOCKS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[TAIL:.*]] = affine_map<(d0) -> (d0, 8)>
// CHECK-DAG: #[[ROW_PAIRS:.*]] = affine_map<(d0, d1) -> (d0 * 2 + 1, d1)>
// CHECK-DAG: #[[BEFORE:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1, d2)>
// CHECK-DAG: #[[RUNS:.*]] = affine_map<(d0, d1, d2) -> (d0 * 16 + d1 + 6, d2)>
// CHECK-DAG: #[[AFTER:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 + 38, d2)>
// CHECK-DAG: #[[RUN_SHAPE:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[COLUMNS:.*]] = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: hpvm.leaf @sum_last_axis(
// CHECK-SAME: %[[X:.*]]: tensor<4x10xf32>, %[[INIT:.*]]: f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[START:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[SHAPE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {indexing_maps = [#[[P0]], #[[P2]], #[[P3]], #[[BLOCKS]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[X]], %[[X]], %[[SHAPE]] : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<2xf32>) outs(%[[START]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E0:.*]]: f32, %[[E2:.*]]: f32, %[[E3:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[ACC]], %[[E0]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S0]], %[[E2]] : f32
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[E3]] : f32
// CHECK-NEXT: linalg.yield %[[S3]] : f32
// CHECK: %[[SCALE:.*]] = arith.constant 1.42857146 : f32
// CHECK: linalg.generic {indexing_maps = [#[[TAIL]], #[[ID]]], iterator_types = ["parallel"]} ins(%[[X]] : tensor<4x10xf32>) outs(%[[PARTIAL]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E8:.*]]: f32, %[[SUM:.*]]: f32):
// CHECK-NEXT: %[[S8:.*]] = arith.addf %[[SUM]], %[[E8]] : f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[S8]], %[[SCALE]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[INIT]], %[[SCALED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32

// The loops: after the fill, 4 rows of 2 blocks of 4 loading 3 elements each,
// then the tail.
// LOOPS-LABEL: hpvm.leaf @sum_last_axis(
// LOOPS: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// LOOPS-NEXT: memref.store %cst
// LOOPS: scf.for %[[ROW:.*]] = %c0 to %c4 step %c1 {
// LOOPS-NEXT: scf.for %[[BLOCK:.*]] = %c0 to %c2 step %c1 {
// LOOPS-COUNT-3: memref.load %arg0[%[[ROW]], %{{.*}}] : memref<4x10xf32>
// LOOPS-NOT: memref.load %arg0
// LOOPS: memref.store
// LOOPS-NEXT: }
// LOOPS-NEXT: }
// LOOPS-NEXT: scf.for %[[ROW2:.*]] = %c0 to %c4 step %c1 {
// LOOPS-NEXT: memref.load %arg0[%[[ROW2]], %c8] : memref<4x10xf32>
// LOOPS-NOT: memref.load %arg0
// LOOPS: hpvm.return
hpvm.leaf @sum_last_axis(%x: tensor<4x10xf32>, %init: f32) -> (tensor<4xf32>) {
  %s = hpvm.tensor.reduce %x, %init axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 1>}
      : (tensor<4x10xf32>, f32) -> tensor<4xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<4xf32>
}

// A maximum along axis 0, n = 10, rate 2, offset 0: rows 1, 3, ... 9, read as
// whole rows; no partial block, no scaling, and it starts from init.
// CHECK-LABEL: hpvm.leaf @max_axis0(
// CHECK-SAME: %[[X:.*]]: tensor<10x3xf32>, %[[INIT:.*]]: f32
// CHECK: %[[START:.*]] = linalg.fill ins(%[[INIT]] : f32)
// CHECK: %[[SHAPE:.*]] = tensor.empty() : tensor<5xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ROW_PAIRS]], #[[ROWS]], #[[BLOCKS]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[SHAPE]] : tensor<10x3xf32>, tensor<5xf32>) outs(%[[START]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return %[[R]]
// LOOPS-LABEL: hpvm.leaf @max_axis0(
// LOOPS: scf.for %{{.*}} = %c0 to %c5 step %c1 {
// LOOPS-NEXT: scf.for
// LOOPS-NEXT: affine.apply
// LOOPS-NEXT: memref.load %arg0
// LOOPS-NOT: memref.load %arg0
// LOOPS: hpvm.return
hpvm.leaf @max_axis0(%x: tensor<10x3xf32>, %init: f32) -> (tensor<3xf32>) {
  %m = hpvm.tensor.reduce %x, %init axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>}
      : (tensor<10x3xf32>, f32) -> tensor<3xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.maximumf %e, %acc : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %m : tensor<3xf32>
}

// Fewer elements than the rate, none of them skipped (n = 3, offset 3): the
// partial block alone, unscaled; f16 is sampled as well as f32.
// CHECK-LABEL: hpvm.leaf @short_f16(
// CHECK-NOT: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16>, tensor<2x3xf16>)
// CHECK-COUNT-3: arith.addf %{{.*}} : f16
// CHECK-NEXT: arith.addf %{{.*}} : f16
// CHECK-NEXT: linalg.yield
hpvm.leaf @short_f16(%x: tensor<2x3xf16>, %init: f16) -> (tensor<2xf16>) {
  %s = hpvm.tensor.reduce %x, %init axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 3>}
      : (tensor<2x3xf16>, f16) -> tensor<2xf16> {
  ^bb0(%acc: f16, %e: f16):
    %t = arith.addf %acc, %e : f16
    hpvm.tensor.yield %t : f16
  }
  hpvm.return %s : tensor<2xf16>
}

// Nothing kept (n = 1, offset 0): the result is init.
// CHECK-LABEL: hpvm.leaf @nothing_kept(
// CHECK-SAME: %{{.*}}: tensor<1x5xf32>, %[[INIT:.*]]: f32
// CHECK: %[[R:.*]] = linalg.fill ins(%[[INIT]] : f32)
// CHECK-NOT: linalg.generic
// CHECK: hpvm.return %[[R]]
hpvm.leaf @nothing_kept(%x: tensor<1x5xf32>, %init: f32) -> (tensor<5xf32>) {
  %s = hpvm.tensor.reduce %x, %init axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>}
      : (tensor<1x5xf32>, f32) -> tensor<5xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<5xf32>
}

// A rate above 8 (n = 40, rate 16, offset 5: 5, 21 and 37 skipped): rows
// [0, 5), two runs of 15 from 6 (6..20, 22..36), rows [38, 40), then the
// scaling by 40 / 37.
// CHECK-LABEL: hpvm.leaf @sum_runs(
// CHECK: tensor.empty() : tensor<1x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[BEFORE]], #[[RUN_SHAPE]], #[[COLUMNS]]], iterator_types = ["reduction", "reduction", "parallel"]}
// CHECK: tensor.empty() : tensor<2x15xf32>
// CHECK: linalg.generic {indexing_maps = [#[[RUNS]], #[[RUN_SHAPE]], #[[COLUMNS]]], iterator_types = ["reduction", "reduction", "parallel"]}
// CHECK: tensor.empty() : tensor<1x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[AFTER]], #[[RUN_SHAPE]], #[[COLUMNS]]], iterator_types = ["reduction", "reduction", "parallel"]}
// CHECK: arith.constant 1.08108103 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel"]}
// CHECK: arith.mulf
// LOOPS-LABEL: hpvm.leaf @sum_runs(
// LOOPS: scf.for %{{.*}} = %c0 to %c5 step %c1 {
// LOOPS: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// LOOPS-NEXT: scf.for %{{.*}} = %c0 to %c15 step %c1 {
// LOOPS: scf.for %{{.*}} = %c0 to %c2 step %c1 {
hpvm.leaf @sum_runs(%x: tensor<40x3xf32>, %init: f32) -> (tensor<3xf32>) {
  %s = hpvm.tensor.reduce %x, %init axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 16, offset = 5>}
      : (tensor<40x3xf32>, f32) -> tensor<3xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<3xf32>
}
