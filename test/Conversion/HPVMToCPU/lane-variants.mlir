// convert-hpvm-to-cpu with lane variants (hpvm-vectorize): a row of
// instances runs in whole groups through the variant, a group the variant
// declines instance by instance, the rest of the row (fewer than W) as one
// group through the remainder variant (a call: it runs once per row), with
// the count after the leaf's inputs, instance by instance when it declines;
// in a plain grid and in a collapsed grid of tiles.
// RUN: hpvm-opt %s --hpvm-vectorize=lanes=4 --convert-hpvm-to-cpu | FileCheck %s
// RUN: hpvm-opt %s --hpvm-vectorize=lanes=4 --convert-hpvm-to-cpu | FileCheck %s --check-prefix=FUNC
// RUN: hpvm-opt %s --convert-hpvm-to-cpu | FileCheck %s --check-prefix=NONE
// NONE-NOT: __lanes

// CHECK-LABEL: llvm.func internal @__hpvm_range_scale_1(
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[COUNT:.*]] = arith.maxsi
// CHECK: %[[GROUPS:.*]] = arith.divui %[[COUNT]], %[[FOUR]] : index
// CHECK: %[[WHOLE:.*]] = arith.muli %[[GROUPS]], %[[FOUR]] : index
// CHECK: %[[FULL:.*]] = arith.addi %[[FROM:.*]], %[[WHOLE]] : index
// CHECK: scf.for %[[X:.*]] = %[[FROM]] to %[[FULL]] step %[[FOUR]] {
// CHECK: %[[RAN:.*]] = func.call @__hpvm_leaf_scale__lanes4(%{{.*}}, %{{.*}}, %[[X]],
// CHECK: scf.if %[[RAN]] {
// CHECK: } else {
// CHECK: scf.for %[[LANE:.*]] = %[[X]] to
// CHECK: func.call @__hpvm_leaf_scale(%{{.*}}, %{{.*}}, %[[LANE]],
// CHECK: %[[LEFT:.*]] = arith.subi %[[TO:.*]], %[[FULL]] : index
// CHECK: %[[SOME:.*]] = arith.cmpi sgt, %[[LEFT]], %{{.*}} : index
// CHECK: scf.if %[[SOME]] {
// CHECK: %[[N:.*]] = arith.index_cast %[[LEFT]] : index to i64
// CHECK: %[[RANREST:.*]] = func.call @__hpvm_leaf_scale__lanes4_masked(%{{.*}}, %{{.*}}, %[[N]], %[[FULL]],
// CHECK: scf.if %[[RANREST]] {
// CHECK: } else {
// CHECK: scf.for %[[REST:.*]] = %[[FULL]] to
// CHECK: func.call @__hpvm_leaf_scale(%{{.*}}, %{{.*}}, %[[REST]],
// CHECK-LABEL: llvm.func internal @__hpvm_collapsed_tiles_scale(
// CHECK: func.call @__hpvm_leaf_scale__lanes4(
// CHECK: func.call @__hpvm_leaf_scale(
// CHECK: func.call @__hpvm_leaf_scale__lanes4_masked(
// CHECK: func.call @__hpvm_leaf_scale(
// CHECK: llvm.return
// FUNC: func.func private @__hpvm_leaf_scale__lanes4_masked(
// FUNC-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: f32, %{{[^:]*}}: i64, %{{[^:]*}}: index
// FUNC-SAME: passthrough = ["noinline"]
hpvm.leaf private @scale(%x: !llvm.ptr, %a: f32) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.getelementptr %x[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  %r = llvm.fmul %v, %a : f32
  llvm.store %r, %p : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @flat(%x: !llvm.ptr, %a: f32, %n: index) {
  %node = hpvm.create_node @scale [%n] : !hpvm.node
  hpvm.bind_in %x -> %node[0] : !llvm.ptr
  hpvm.bind_in %a -> %node[1] : f32
}
hpvm.internal @tiles(%x: !llvm.ptr, %a: f32, %t: index) {
  %c16 = arith.constant 16 : index
  %node = hpvm.create_node @scale [%c16] : !hpvm.node
  hpvm.bind_in %x -> %node[0] : !llvm.ptr
  hpvm.bind_in %a -> %node[1] : f32
}
hpvm.internal @grid(%x: !llvm.ptr, %a: f32, %t: index) {
  %node = hpvm.create_node @tiles [%t] : !hpvm.node
  hpvm.bind_in %x -> %node[0] : !llvm.ptr
  hpvm.bind_in %a -> %node[1] : f32
  hpvm.bind_in %t -> %node[2] : index
}
