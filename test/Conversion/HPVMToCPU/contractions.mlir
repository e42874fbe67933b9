// convert-hpvm-to-cpu runs a contraction (hpvm-vectorize's plan and sums variant)
// for a 2-D leaf grid that is not tiled: when the parent runs as one instance (its frame's x
// and y extents are 1), the plan gets the grid with tiles 1 x 1; a buffer back means the
// sums variant runs over the grid (with the buffer and the row length) and the buffer is
// freed; null (declined, or a parent of several instances) runs the leaf as it is.
// RUN: hpvm-opt %s --hpvm-vectorize="lanes=4 rows=1" --convert-hpvm-to-cpu | FileCheck %s
// RUN: hpvm-opt %s --hpvm-vectorize="lanes=4 contractions=false" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func private @__hpvm_internal_root(
// CHECK-SAME: %[[A:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: !llvm.ptr, %[[C:[a-z0-9]+]]: !llvm.ptr, %[[K:[a-z0-9]+]]: i32, %[[N:[a-z0-9]+]]: i32, %[[COLS:[a-z0-9]+]]: index, %[[ROWS:[a-z0-9]+]]: index, %[[FRAME:[a-z0-9]+]]: !llvm.ptr)
// The frame is { i64 ids[3], i64 extents[3], ptr parent }: extents x and y are words 3 and 4.
// CHECK: %[[XAT:.*]] = llvm.getelementptr %[[FRAME]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[XEXT:.*]] = llvm.load %[[XAT]] : !llvm.ptr -> i64
// CHECK: %[[XONE:.*]] = llvm.icmp "eq" %[[XEXT]], %[[ONE:[0-9]+]] : i64
// CHECK: %[[YAT:.*]] = llvm.getelementptr %[[FRAME]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[YEXT:.*]] = llvm.load %[[YAT]] : !llvm.ptr -> i64
// CHECK: %[[YONE:.*]] = llvm.icmp "eq" %[[YEXT]], %[[ONE]]
// CHECK: %[[SINGLE:.*]] = llvm.and %[[XONE]], %[[YONE]]
// CHECK: %[[BUFFER:.*]] = scf.if %[[SINGLE]] -> (!llvm.ptr) {
// CHECK: %[[W:.*]] = arith.index_cast %[[COLS]] : index to i64
// CHECK: %[[H:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[PLANNED:.*]] = llvm.call @flat__sums_plan(%[[A]], %[[B]], %[[C]], %[[K]], %[[N]], %[[W]], %[[H]], %[[ONE]], %[[ONE]])
// CHECK: scf.yield %[[PLANNED]]
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : !llvm.ptr
// CHECK: %[[DECLINED:.*]] = llvm.icmp "eq" %[[BUFFER]], %{{.*}} : !llvm.ptr
// CHECK: scf.if %[[DECLINED]] {
// CHECK: %[[LEAF:.*]] = llvm.mlir.addressof @__hpvm_range_flat_2
// CHECK: llvm.call @hpvm_rt_parallel_for(%{{.*}}, %[[EXTENTS:.*]], %[[LEAF]], %{{.*}})
// CHECK: } else {
// CHECK: %[[ROW:.*]] = arith.index_cast %[[COLS]] : index to i64
// CHECK: llvm.store %[[BUFFER]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %[[ROW]], %{{.*}} : i64, !llvm.ptr
// CHECK: %[[SUMS:.*]] = llvm.mlir.addressof @__hpvm_range_flat__sums_2
// CHECK: llvm.call @hpvm_rt_parallel_for(%{{.*}}, %[[EXTENTS]], %[[SUMS]], %{{.*}})
// CHECK: llvm.call @_mlir_memref_to_llvm_free(%[[BUFFER]])
// CHECK: return
// OFF-NOT: sums_plan

hpvm.leaf @flat(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32) {
  %c0_i32 = llvm.mlir.constant(0 : i32) : i32
  %zero = llvm.mlir.constant(0.000000e+00 : f32) : f32
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %c30 = llvm.mlir.constant(30 : i64) : i64
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %lx = hpvm.instance_id x : index
  %x = arith.index_cast %lx : index to i64
  %ly = hpvm.instance_id y : index
  %y = arith.index_cast %ly : index to i64
  %any = llvm.icmp "sgt" %k, %c0_i32 : i32
  %yshl = llvm.shl %y, %c32 : i64
  %row = llvm.ashr exact %yshl, %c32 : i64
  llvm.cond_br %any, ^pre, ^skip
^skip:
  %n0 = llvm.sext %n : i32 to i64
  %xshl0 = llvm.shl %x, %c32 : i64
  %xbytes0 = llvm.ashr exact %xshl0, %c30 : i64
  llvm.br ^done(%xbytes0, %n0, %zero : i64, i64, f32)
^pre:
  %trip = llvm.zext nneg %k : i32 to i64
  %rowk = llvm.mul %row, %trip overflow<nsw> : i64
  %arow = llvm.getelementptr %a[%rowk] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %n64 = llvm.sext %n : i32 to i64
  %xshl = llvm.shl %x, %c32 : i64
  %xbytes = llvm.ashr exact %xshl, %c30 : i64
  %bcol = llvm.getelementptr %b[%xbytes] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.br ^loop(%c0, %zero : i64, f32)
^done(%off: i64, %stride: i64, %sum: f32):
  %crow = llvm.mul %row, %stride overflow<nsw> : i64
  %cr = llvm.getelementptr %c[%crow] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %cat = llvm.getelementptr %cr[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.store %sum, %cat : f32, !llvm.ptr
  hpvm.return
^loop(%i: i64, %acc: f32):
  %aat = llvm.getelementptr %arow[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %av = llvm.load %aat : !llvm.ptr -> f32
  %boff = llvm.mul %i, %n64 overflow<nsw> : i64
  %bat = llvm.getelementptr %bcol[%boff] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %bv = llvm.load %bat : !llvm.ptr -> f32
  %next = llvm.intr.fmuladd(%av, %bv, %acc) : (f32, f32, f32) -> f32
  %i1 = llvm.add %i, %c1 overflow<nsw, nuw> : i64
  %stop = llvm.icmp "eq" %i1, %trip : i64
  llvm.cond_br %stop, ^done(%xbytes, %n64, %next : i64, i64, f32), ^loop(%i1, %next : i64, f32)
}
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32, %cols: index, %rows: index) {
  %node = hpvm.create_node @flat [%cols, %rows] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %b -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i32
  hpvm.bind_in %n -> %node[4] : i32
}


// Two such grids side by side (independent siblings run as task-graph nodes): each runs
// through a task function that calls its plan, not through its bare range function.
// CHECK-LABEL: func.func private @__hpvm_internal_pair(
// CHECK: llvm.call @hpvm_rt_graph_create
// CHECK-COUNT-2: llvm.call @hpvm_rt_graph_add_node(
// CHECK-NOT: llvm.call @hpvm_rt_graph_add_grid
// CHECK: llvm.call @hpvm_rt_graph_run
// CHECK-LABEL: llvm.func internal @__hpvm_task_flat
// CHECK: llvm.call @flat__sums_plan(
hpvm.internal @pair(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %d: !llvm.ptr, %k: i32, %n: i32, %cols: index, %rows: index) {
  %one = hpvm.create_node @flat [%cols, %rows] : !hpvm.node
  hpvm.bind_in %a -> %one[0] : !llvm.ptr
  hpvm.bind_in %b -> %one[1] : !llvm.ptr
  hpvm.bind_in %c -> %one[2] : !llvm.ptr
  hpvm.bind_in %k -> %one[3] : i32
  hpvm.bind_in %n -> %one[4] : i32
  %two = hpvm.create_node @flat [%cols, %rows] : !hpvm.node
  hpvm.bind_in %a -> %two[0] : !llvm.ptr
  hpvm.bind_in %b -> %two[1] : !llvm.ptr
  hpvm.bind_in %d -> %two[2] : !llvm.ptr
  hpvm.bind_in %k -> %two[3] : i32
  hpvm.bind_in %n -> %two[4] : i32
}
