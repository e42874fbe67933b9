// hpvm-parallel-leaf-loops: the large linalg.generic ops at the top of leaves
// instantiated once become an outlined scf.parallel body that
// hpvm_rt_parallel_for runs on boxes of its first two dimensions; everything
// else stays as it was.
// RUN: hpvm-opt %s --hpvm-parallel-leaf-loops=min-work=1000 | FileCheck %s
// The full lowering accepts what the pass makes.
// RUN: hpvm-opt %s --hpvm-parallel-leaf-loops=min-work=1000 --hpvm-lower-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#bias = affine_map<(d0, d1, d2) -> (d2)>

// An elementwise op with a value from above (a bias buffer) and a scalar: the
// context carries the three buffers and the scalar; the extents go x first
// (dimension 1: 16, then dimension 0: 8), the body's bounds come from the box.
// CHECK-LABEL: llvm.func internal @__hpvm_loop_scale_
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[RANGE:.*]]: !llvm.ptr)
// CHECK: llvm.load {{.*}} -> !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>
// CHECK: builtin.unrealized_conversion_cast {{.*}} to memref<8x16x32xf32>
// CHECK: %[[B0P:.*]] = llvm.getelementptr %[[RANGE]][0, 0, 0]
// CHECK: %[[B0:.*]] = llvm.load %[[B0P]] : !llvm.ptr -> i64
// CHECK: %[[B0I:.*]] = arith.index_cast %[[B0]]
// CHECK: %[[E0P:.*]] = llvm.getelementptr %[[RANGE]][0, 1, 0]
// CHECK: %[[E0:.*]] = llvm.load %[[E0P]]
// CHECK: %[[E0I:.*]] = arith.index_cast %[[E0]]
// CHECK: %[[B1P:.*]] = llvm.getelementptr %[[RANGE]][0, 0, 1]
// CHECK: %[[B1:.*]] = llvm.load %[[B1P]]
// CHECK: %[[B1I:.*]] = arith.index_cast %[[B1]]
// CHECK: %[[E1P:.*]] = llvm.getelementptr %[[RANGE]][0, 1, 1]
// CHECK: %[[E1:.*]] = llvm.load %[[E1P]]
// CHECK: %[[E1I:.*]] = arith.index_cast %[[E1]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%[[B1I]], %[[B0I]], %{{.*}}) to (%[[E1I]], %[[E0I]], %{{.*}})
// CHECK: arith.mulf
// CHECK: llvm.return
// CHECK-LABEL: hpvm.leaf @scale(
// CHECK-NOT: linalg.generic
// CHECK: llvm.mlir.constant(16 : i64)
// CHECK: llvm.store
// CHECK: llvm.mlir.constant(8 : i64)
// CHECK: llvm.store
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @__hpvm_loop_scale_
// CHECK: %[[RANK:.*]] = llvm.mlir.constant(2 : i32)
// CHECK: %[[STATUS:.*]] = llvm.call @hpvm_rt_parallel_for(%[[RANK]], %{{.*}}, %[[FN]], %{{.*}})
// CHECK: llvm.call @hpvm_rt_check_at(%[[STATUS]],
// CHECK: hpvm.return
hpvm.leaf @scale(%x: memref<8x16x32xf32>, %b: memref<32xf32>, %s: f32)
    -> memref<8x16x32xf32> {
  %out = memref.alloc() : memref<8x16x32xf32>
  linalg.generic {indexing_maps = [#id, #bias, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<8x16x32xf32>, memref<32xf32>)
      outs(%out : memref<8x16x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %c : f32
    linalg.yield %r : f32
  }
  hpvm.return %out : memref<8x16x32xf32>
}

// A reduction over the innermost dimension: the rows are split, each row is
// summed whole by one call, in the loop's order.
// CHECK-LABEL: llvm.func internal @__hpvm_loop_rowsum_
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-LABEL: hpvm.leaf @rowsum(
// CHECK: llvm.call @hpvm_rt_parallel_for
hpvm.leaf @rowsum(%x: memref<8x16x32xf32>, %acc: memref<8x16xf32>) -> memref<8x16xf32> {
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<8x16x32xf32>) outs(%acc : memref<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %acc : memref<8x16xf32>
}

// Any linalg op on buffers qualifies, not only generics: a transpose (NCHW to
// NHWC) is split over its first two output dimensions.
// CHECK-LABEL: llvm.func internal @__hpvm_loop_permute_
// CHECK: scf.parallel
// CHECK: memref.load
// CHECK: memref.store
// CHECK-LABEL: hpvm.leaf @permute(
// CHECK-NOT: linalg.transpose
// CHECK: llvm.call @hpvm_rt_parallel_for
hpvm.leaf @permute(%x: memref<1x64x32x32xf32>) -> memref<1x32x32x64xf32> {
  %out = memref.alloc() : memref<1x32x32x64xf32>
  linalg.transpose ins(%x : memref<1x64x32x32xf32>) outs(%out : memref<1x32x32x64xf32>)
      permutation = [0, 2, 3, 1]
  hpvm.return %out : memref<1x32x32x64xf32>
}

// Only dimensions that index every output are split: with the second missing
// from the output (its iterations all write one element), one dimension.
// CHECK-LABEL: hpvm.leaf @first_only(
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK: llvm.call @hpvm_rt_parallel_for(%[[ONE]],
hpvm.leaf @first_only(%x: memref<64x64xf32>, %acc: memref<64xf32>) -> memref<64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%acc : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %acc : memref<64xf32>
}

// The outermost dimension does not index the output: nothing is split.
// CHECK-LABEL: hpvm.leaf @not_in_output(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @not_in_output(%x: memref<64x64xf32>, %acc: memref<64xf32>) -> memref<64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%acc : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %acc : memref<64xf32>
}

// An output also read through another map (a shift in place): the loop order
// matters, nothing is split.
// CHECK-LABEL: hpvm.leaf @shift_in_place(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @shift_in_place(%x: memref<64x64xf32>) -> memref<64x64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %x : memref<64x64xf32>
}

// Too little work for the pool: unchanged.
// CHECK-LABEL: hpvm.leaf @small(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @small(%x: memref<4x4xf32>) -> memref<4x4xf32> {
  %out = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%out : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %out : memref<4x4xf32>
}

// The outermost iterator is a reduction: unchanged.
// CHECK-LABEL: hpvm.leaf @colsum(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @colsum(%x: memref<256x64xf32>, %acc: memref<64xf32>) -> memref<64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<256x64xf32>) outs(%acc : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %acc : memref<64xf32>
}

// Dynamic sizes: unchanged.
// CHECK-LABEL: hpvm.leaf @dynamic(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @dynamic(%x: memref<?x64xf32>, %out: memref<?x64xf32>) -> memref<?x64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%out : memref<?x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %out : memref<?x64xf32>
}

// A leaf with a grid: its instances already run on the pool; unchanged.
// CHECK-LABEL: hpvm.leaf @gridded(
// CHECK: linalg.generic
// CHECK-NOT: hpvm_rt_parallel_for
// CHECK: hpvm.return
hpvm.leaf @gridded(%x: memref<64x64xf32>, %out: memref<64x64xf32>) -> memref<64x64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  hpvm.return %out : memref<64x64xf32>
}
hpvm.internal @root(%x: memref<64x64xf32>, %out: memref<64x64xf32>) -> memref<64x64xf32> {
  %c4 = arith.constant 4 : index
  %n = hpvm.create_node @gridded [%c4] : !hpvm.node
  hpvm.bind_in %x -> %n[0] : memref<64x64xf32>
  hpvm.bind_in %out -> %n[1] : memref<64x64xf32>
  hpvm.bind_out %n[0] -> 0
}

// LLVM: llvm.func internal @__hpvm_loop_scale_
// LLVM: llvm.fmul
// LLVM: llvm.call @hpvm_rt_parallel_for
