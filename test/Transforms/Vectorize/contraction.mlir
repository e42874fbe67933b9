// hpvm-vectorize's contractions: a leaf replicated in x and y whose instances each
// sum products in a loop gets a plan (checks, then the runtime's packed contraction into a
// buffer) and a sums variant (the loop replaced by a load of its sum).
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=4 rows=1 remarks=true" --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=4 contractions=false" | FileCheck %s --check-prefix=OFF

// C[y][x] = sum_i A[y * k + i] * B[i * n + x] with int indices, as clang -O2 gives it
// (rotated, guarded loop; the x index sign-extended through shl 32 / ashr exact 30).
// REMARK: remark: contraction: every instance's sum computed at once (@dot__sums_plan, then @dot__sums)
// CHECK-LABEL: hpvm.leaf @dot(
// CHECK-SAME: hpvm.contraction_plan = @dot__sums_plan
// CHECK-SAME: hpvm.contraction_variant = @dot__sums
// The step: the leaf's own multiply-add.
// CHECK: llvm.func private @dot__sums_step(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32) -> f32
// CHECK-NEXT: %[[S:.*]] = llvm.intr.fmuladd(%[[A]], %[[B]], %[[ACC]])
// CHECK-NEXT: llvm.return %[[S]]
// The plan: the leaf's inputs and the grid (x, y, tiles x, tiles y); the 32-bit index
// checked against wrapping, coefficients with overflow checks; null when it declines.
// CHECK: llvm.func private @dot__sums_plan({{.*}}, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) -> !llvm.ptr
// CHECK: "llvm.intr.smul.with.overflow"
// CHECK: llvm.mlir.constant(-2147483648 : i64)
// CHECK: llvm.mlir.constant(2147483647 : i64)
// CHECK: llvm.cond_br
// Then whether the runtime finds the size worth it (rows, cols, the trip count).
// CHECK: %[[PAYS:.*]] = llvm.call @hpvm_rt_contract_pays(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64) -> i32
// CHECK: llvm.icmp "eq" %[[PAYS]]
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: %[[STEP:.*]] = llvm.mlir.addressof @dot__sums_step
// CHECK: llvm.call @hpvm_rt_contract_f32({{.*}}, %[[STEP]], {{.*}}) : (!llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, f32, !llvm.ptr, !llvm.ptr, i64) -> i32
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// The sums variant: two more inputs, no loop, the sum loaded at (tile x * w + x, ...).
// CHECK-LABEL: hpvm.leaf private @dot__sums(
// CHECK-SAME: %[[SUMS:[a-z0-9]+]]: !llvm.ptr, %[[ROW:[a-z0-9]+]]: i64)
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: hpvm.instance_id x level 1
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[SUMS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[SUM:.*]] = llvm.load %[[AT]] : !llvm.ptr -> f32
// CHECK: llvm.br ^{{.*}}(%[[SUM]] : f32)
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: hpvm.return
// Then lanes for both.
// CHECK: hpvm.leaf private @dot__sums__lanes4
// OFF-NOT: contraction
// OFF-NOT: __sums
hpvm.leaf @dot(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32) {
  %c0_i32 = llvm.mlir.constant(0 : i32) : i32
  %zero = llvm.mlir.constant(0.000000e+00 : f32) : f32
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %c30 = llvm.mlir.constant(30 : i64) : i64
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %tx = hpvm.instance_id x level 1 : index
  %txi = arith.index_cast %tx : index to i64
  %w = hpvm.num_instances x : index
  %wi = arith.index_cast %w : index to i64
  %xs = llvm.mul %wi, %txi overflow<nsw> : i64
  %lx = hpvm.instance_id x : index
  %lxi = arith.index_cast %lx : index to i64
  %x = llvm.add %xs, %lxi overflow<nsw> : i64
  %ty = hpvm.instance_id y level 1 : index
  %tyi = arith.index_cast %ty : index to i64
  %h = hpvm.num_instances y : index
  %hi = arith.index_cast %h : index to i64
  %ys = llvm.mul %hi, %tyi overflow<nsw> : i64
  %ly = hpvm.instance_id y : index
  %lyi = arith.index_cast %ly : index to i64
  %y = llvm.add %ys, %lyi overflow<nsw> : i64
  %y32 = llvm.trunc %y : i64 to i32
  %any = llvm.icmp "sgt" %k, %c0_i32 : i32
  llvm.cond_br %any, ^pre, ^done(%zero : f32)
^pre:
  %row = llvm.mul %k, %y32 overflow<nsw> : i32
  %row64 = llvm.sext %row : i32 to i64
  %n64 = llvm.sext %n : i32 to i64
  %xshl = llvm.shl %x, %c32 : i64
  %trip = llvm.zext nneg %k : i32 to i64
  %arow = llvm.getelementptr %a[%row64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %xbytes = llvm.ashr exact %xshl, %c30 : i64
  %bcol = llvm.getelementptr %b[%xbytes] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.br ^loop(%c0, %zero : i64, f32)
^done(%sum: f32):
  %x32 = llvm.trunc %x : i64 to i32
  %cy = llvm.mul %n, %y32 overflow<nsw> : i32
  %ci = llvm.add %cy, %x32 overflow<nsw> : i32
  %ci64 = llvm.sext %ci : i32 to i64
  %cat = llvm.getelementptr inbounds %c[%ci64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
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
  llvm.cond_br %stop, ^done(%next : f32), ^loop(%i1, %next : i64, f32)
}
hpvm.internal @tile(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32) {
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %node = hpvm.create_node @dot [%c8, %c4] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %b -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i32
  hpvm.bind_in %n -> %node[4] : i32
}

// -----

// One grid of C's elements (no tiles), 64-bit indices from 32-bit ids, as clang -O3 gives
// GPU-style code: the exit block takes the store's offset and stride as block arguments,
// from the guard's other edge and from the loop, whose values are the preheader's. The sums
// variant keeps the preheader (it only computes) and goes from it to the load.
// REMARK: remark: contraction: every instance's sum computed at once (@flat__sums_plan, then @flat__sums)
// CHECK-LABEL: hpvm.leaf @flat(
// CHECK-SAME: hpvm.contraction_plan = @flat__sums_plan
// CHECK-LABEL: hpvm.leaf private @flat__sums(
// CHECK: llvm.cond_br %{{.*}}, ^[[PRE:bb[0-9]+]], ^[[OTHER:bb[0-9]+]]
// CHECK: ^[[OTHER]]:
// CHECK: llvm.br ^[[DONE:bb[0-9]+]](
// CHECK: ^[[PRE]]:
// CHECK: %[[STRIDE:.*]] = llvm.sext
// CHECK: %[[OFFSET:.*]] = llvm.ashr exact
// CHECK: llvm.br ^[[LOAD:bb[0-9]+]]
// CHECK: ^[[DONE]](
// CHECK: llvm.store
// CHECK: ^[[LOAD]]:
// CHECK: %[[SUM:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.br ^[[DONE]](%[[OFFSET]], %[[STRIDE]], %[[SUM]] : i64, i64, f32)
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: hpvm.return
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

// -----

// A loop that stores: no contraction (the leaf still gets lanes).
// REMARK: remark: no contraction: the loop does more than sum products
// CHECK-LABEL: hpvm.leaf @stores(
// CHECK-NOT: hpvm.contraction_variant
hpvm.leaf @stores(%a: !llvm.ptr, %k: i64) {
  %zero = llvm.mlir.constant(0.000000e+00 : f32) : f32
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %lx = hpvm.instance_id x : index
  %x = arith.index_cast %lx : index to i64
  %ly = hpvm.instance_id y : index
  %y = arith.index_cast %ly : index to i64
  %any = llvm.icmp "sgt" %k, %c0 : i64
  llvm.cond_br %any, ^loop(%c0, %zero : i64, f32), ^done(%zero : f32)
^loop(%i: i64, %acc: f32):
  %xi = llvm.add %x, %i : i64
  %at = llvm.getelementptr %a[%xi] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %at : !llvm.ptr -> f32
  %yi = llvm.add %y, %i : i64
  %bt = llvm.getelementptr %a[%yi] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %w = llvm.load %bt : !llvm.ptr -> f32
  llvm.store %zero, %at : f32, !llvm.ptr
  %next = llvm.intr.fmuladd(%v, %w, %acc) : (f32, f32, f32) -> f32
  %i1 = llvm.add %i, %c1 : i64
  %stop = llvm.icmp "eq" %i1, %k : i64
  llvm.cond_br %stop, ^done(%next : f32), ^loop(%i1, %next : i64, f32)
^done(%sum: f32):
  %out = llvm.getelementptr %a[%x] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %sum, %out : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @tile(%a: !llvm.ptr, %k: i64) {
  %c8 = arith.constant 8 : index
  %node = hpvm.create_node @stores [%c8, %c8] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %k -> %node[1] : i64
}

// -----

// An operand at A[x * i]: its address is no affine function of the ids and the counter.
// REMARK: remark: no contraction: a factor's address is not an affine function of the instance ids and the loop counter
// CHECK-LABEL: hpvm.leaf @product(
// CHECK-NOT: hpvm.contraction_variant
hpvm.leaf @product(%a: !llvm.ptr, %idx: !llvm.ptr, %c: !llvm.ptr, %k: i64) {
  %zero = llvm.mlir.constant(0.000000e+00 : f32) : f32
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %lx = hpvm.instance_id x : index
  %x = arith.index_cast %lx : index to i64
  %ly = hpvm.instance_id y : index
  %y = arith.index_cast %ly : index to i64
  %any = llvm.icmp "sgt" %k, %c0 : i64
  llvm.cond_br %any, ^loop(%c0, %zero : i64, f32), ^done(%zero : f32)
^loop(%i: i64, %acc: f32):
  %xp = llvm.mul %x, %i : i64
  %at = llvm.getelementptr %a[%xp] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %at : !llvm.ptr -> f32
  %yi = llvm.add %y, %i : i64
  %bt = llvm.getelementptr %a[%yi] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %w = llvm.load %bt : !llvm.ptr -> f32
  %next = llvm.intr.fmuladd(%v, %w, %acc) : (f32, f32, f32) -> f32
  %i1 = llvm.add %i, %c1 : i64
  %stop = llvm.icmp "eq" %i1, %k : i64
  llvm.cond_br %stop, ^done(%next : f32), ^loop(%i1, %next : i64, f32)
^done(%sum: f32):
  %out = llvm.getelementptr %c[%x] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %sum, %out : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @tile(%a: !llvm.ptr, %idx: !llvm.ptr, %c: !llvm.ptr, %k: i64) {
  %c8 = arith.constant 8 : index
  %node = hpvm.create_node @product [%c8, %c8] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %idx -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i64
}

// -----

// A leaf that passes its buffer on as outputs (HPVM-C's __hpvm__return(2, c, bytes)
// for an edge): still a contraction; the sums variant returns the same inputs. The
// lowering takes such outputs from the node's inputs.
// REMARK: remark: contraction: every instance's sum computed at once (@passes__sums_plan, then @passes__sums)
// CHECK-LABEL: hpvm.leaf @passes(
// CHECK-SAME: -> (!llvm.ptr, i64)
// CHECK-SAME: hpvm.contraction_plan = @passes__sums_plan
// CHECK-LABEL: hpvm.leaf private @passes__sums(
// CHECK-SAME: %[[C:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32, %[[BYTES:[a-z0-9]+]]: i64, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64) -> (!llvm.ptr, i64)
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: hpvm.return %[[C]], %[[BYTES]] : !llvm.ptr, i64
hpvm.leaf @passes(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32, %bytes: i64) -> (!llvm.ptr, i64) {
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
  hpvm.return %c, %bytes : !llvm.ptr, i64
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
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32, %bytes: i64, %cols: index, %rows: index) -> (!llvm.ptr, i64) {
  %node = hpvm.create_node @passes [%cols, %rows] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %b -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i32
  hpvm.bind_in %n -> %node[4] : i32
  hpvm.bind_in %bytes -> %node[5] : i64
  hpvm.bind_out %node[0] -> 0
  hpvm.bind_out %node[1] -> 1
}

// -----

// An output computed by the instances (here an offset): no contraction, since only
// outputs that are inputs passed on are known without running the instances.
// REMARK: remark: no contraction: an output is computed (only inputs passed on are known without running the instances)
// CHECK-LABEL: hpvm.leaf @computes(
// CHECK-NOT: hpvm.contraction_plan
// CHECK-SAME: {
hpvm.leaf @computes(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32, %bytes: i64) -> (i64) {
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
  hpvm.return %off : i64
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
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %n: i32, %bytes: i64, %cols: index, %rows: index) -> (i64) {
  %node = hpvm.create_node @computes [%cols, %rows] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %b -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i32
  hpvm.bind_in %n -> %node[4] : i32
  hpvm.bind_in %bytes -> %node[5] : i64
  hpvm.bind_out %node[0] -> 0
}
