// hpvm-vectorize-lane-loops: an innermost loop over the 16 lanes of a block
// (from 0 to 16 by 1, its induction variable the last index of every access
// of 32-bit elements) is marked for LLVM's loop vectorizer at width 16, not
// unrolled; an scf.parallel whose last dimension is one is split around it.
// Loops of other extents, other accesses or other bodies stay unmarked.
// RUN: hpvm-opt %s --allow-unregistered-dialect --hpvm-vectorize-lane-loops | FileCheck %s
// RUN: hpvm-opt %s --allow-unregistered-dialect --hpvm-vectorize-lane-loops --convert-scf-to-cf --hpvm-cf-to-llvm-in-function | FileCheck %s --check-prefix=BRANCH

// CHECK-DAG: #[[VEC:.*]] = #llvm.loop_vectorize<disable = false, width = 16 : i32>
// CHECK-DAG: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[ANN:.*]] = #llvm.loop_annotation<vectorize = #[[VEC]], unroll = #[[UNROLL]]>

// A batch normalization's loop over one block: image in, statistics per lane.
// CHECK-LABEL: func.func @norm(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: } {llvm.loop_annotation = #[[ANN]]}
// BRANCH-LABEL: func.func @norm(
// BRANCH: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// BRANCH-NOT: llvm.loop_annotation =
func.func @norm(%x: memref<4x1024x16xf32>, %g: memref<4x16xf32>, %y: memref<4x1024x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.for %p = %c0 to %c1024 step %c1 {
    scf.for %l = %c0 to %c16 step %c1 {
      %v = memref.load %x[%c0, %p, %l] : memref<4x1024x16xf32>
      %s = memref.load %g[%c0, %l] : memref<4x16xf32>
      %d = arith.divf %v, %s : f32
      %r = arith.maximumf %d, %zero : f32
      memref.store %r, %y[%c0, %p, %l] : memref<4x1024x16xf32>
    }
  }
  return
}

// The parallel loop of an outlined body: its lane dimension split off.
// CHECK-LABEL: func.func @parallel(
// CHECK: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: memref.load %{{.*}}[%[[P]], %[[L]]]
// CHECK: } {llvm.loop_annotation = #[[ANN]]}
func.func @parallel(%x: memref<64x16xf32>, %y: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%p, %l) = (%c0, %c0) to (%c64, %c16) step (%c1, %c1) {
    %v = memref.load %x[%p, %l] : memref<64x16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%p, %l] : memref<64x16xf32>
  }
  return
}

// Left alone: 8 iterations; the lane not the last index; 64-bit elements; a
// call in the body; an op of no registered dialect; a loop-carried sum.
// CHECK-LABEL: func.func @others(
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func private @use(f32)
func.func @others(%x: memref<16x16xf32>, %d: memref<16xf64>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %l = %c0 to %c8 step %c1 {
    %v = memref.load %x[%c0, %l] : memref<16x16xf32>
    memref.store %v, %x[%c1, %l] : memref<16x16xf32>
  }
  scf.for %l = %c0 to %c16 step %c1 {
    %v = memref.load %x[%l, %c0] : memref<16x16xf32>
    memref.store %v, %x[%l, %c1] : memref<16x16xf32>
  }
  scf.for %l = %c0 to %c16 step %c1 {
    %v = memref.load %d[%l] : memref<16xf64>
    memref.store %v, %d[%l] : memref<16xf64>
  }
  scf.for %l = %c0 to %c16 step %c1 {
    %v = memref.load %x[%c0, %l] : memref<16x16xf32>
    func.call @use(%v) : (f32) -> ()
    memref.store %v, %x[%c1, %l] : memref<16x16xf32>
  }
  scf.for %l = %c0 to %c16 step %c1 {
    %v = memref.load %x[%c0, %l] : memref<16x16xf32>
    %u = "test.unknown"(%v) : (f32) -> f32
    memref.store %u, %x[%c1, %l] : memref<16x16xf32>
  }
  %sum = scf.for %l = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%c0, %l] : memref<16x16xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  return %sum : f32
}
