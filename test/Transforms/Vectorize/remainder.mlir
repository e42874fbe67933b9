// hpvm-vectorize: the remainder variant of a leaf (the last group of
// a row, n < W instances, n its trailing i64 input) runs the lane variant's
// code with lanes n and up masked off, so that a row or a tile narrower than
// the vectors still runs as lanes.
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=8" | FileCheck %s

// Consecutive accesses are masked loads and stores; a uniform value is one
// scalar load, which lane 0 (always running) needs anyway.
// CHECK-LABEL: hpvm.leaf private @axpy(
// CHECK-SAME: hpvm.remainder_variant = @axpy__lanes8_masked
// CHECK-SAME: hpvm.vector_variant = @axpy__lanes8
// CHECK-LABEL: hpvm.leaf private @axpy__lanes8_masked(
// CHECK-SAME: %[[A:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: !llvm.ptr, %[[Y:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i64) -> i1
// CHECK-SAME: hpvm.lanes = 8
// CHECK-NEXT: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT: %[[M:.*]] = vector.create_mask %[[NI]] : vector<8xi1>
// CHECK: %[[S:.*]] = llvm.load %[[A]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: %[[VX:.*]] = llvm.intr.masked.load %{{.*}}, %[[M]] {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>) -> vector<8xf32>
// CHECK: %[[VY:.*]] = llvm.intr.masked.load %[[PY:.*]], %[[M]] {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>) -> vector<8xf32>
// CHECK: %[[R:.*]] = llvm.intr.fmuladd(%{{.*}}, %[[VX]], %[[VY]]) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.intr.masked.store %[[R]], %[[PY]], %[[M]] {alignment = 4 : i32} : vector<8xf32>, vector<8xi1> into !llvm.ptr
// CHECK: hpvm.return %true : i1
// CHECK-LABEL: hpvm.leaf private @axpy__lanes8(
// CHECK-NOT: masked
// CHECK: hpvm.return %true : i1
hpvm.leaf private @axpy(%a: !llvm.ptr, %x: !llvm.ptr, %y: !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %s = llvm.load %a {alignment = 4 : i64} : !llvm.ptr -> f32
  %px = llvm.getelementptr inbounds %x[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vx = llvm.load %px {alignment = 4 : i64} : !llvm.ptr -> f32
  %py = llvm.getelementptr inbounds %y[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vy = llvm.load %py {alignment = 4 : i64} : !llvm.ptr -> f32
  %r = llvm.intr.fmuladd(%s, %vx, %vy) : (f32, f32, f32) -> f32
  llvm.store %r, %py {alignment = 4 : i64} : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%a: !llvm.ptr, %x: !llvm.ptr, %y: !llvm.ptr, %n: index) {
  %node = hpvm.create_node @axpy [%n] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %x -> %node[1] : !llvm.ptr
  hpvm.bind_in %y -> %node[2] : !llvm.ptr
}

// -----

// Gathers and scatters take the mask; a store at a uniform address keeps the
// last running lane's value (a masked scatter, lanes in order); a divisor
// loaded per lane is 1 in the lanes that do not run; a call runs in the
// running lanes only.
// CHECK-LABEL: hpvm.leaf private @gather__lanes8_masked(
// CHECK: %[[M:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: %[[IDX:.*]] = llvm.intr.masked.load %{{.*}}, %[[M]] {{.*}} -> vector<8xi32>
// CHECK: %[[G:.*]] = llvm.intr.masked.gather %{{.*}}, %[[M]] {alignment = 4 : i32} : (vector<8x!llvm.ptr>, vector<8xi1>) -> vector<8xf32>
// CHECK: llvm.intr.masked.scatter %[[G]], %{{.*}}, %[[M]] {alignment = 4 : i32} : vector<8xf32>, vector<8xi1> into vector<8x!llvm.ptr>
// CHECK: %[[SAFE:.*]] = arith.select %[[M]], %[[IDX]], %{{.*}} : vector<8xi1>, vector<8xi32>
// CHECK: llvm.sdiv %{{.*}}, %[[SAFE]] : vector<8xi32>
// CHECK: %[[LANE0:.*]] = vector.extract %[[M]][0] : i1 from vector<8xi1>
// CHECK: llvm.cond_br %[[LANE0]]
// CHECK: llvm.call @sink
// CHECK: %[[LANE7:.*]] = vector.extract %[[M]][7] : i1 from vector<8xi1>
// CHECK: llvm.cond_br %[[LANE7]]
// CHECK: llvm.call @sink
llvm.func @sink(i32)
hpvm.leaf private @gather(%idx: !llvm.ptr, %in: !llvm.ptr, %last: !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %pi = llvm.getelementptr %idx[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %k = llvm.load %pi {alignment = 4 : i64} : !llvm.ptr -> i32
  %k64 = llvm.sext %k : i32 to i64
  %pk = llvm.getelementptr %in[%k64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %pk {alignment = 4 : i64} : !llvm.ptr -> f32
  llvm.store %v, %last {alignment = 4 : i64} : f32, !llvm.ptr
  %c = llvm.mlir.constant(100 : i32) : i32
  %q = llvm.sdiv %c, %k : i32
  llvm.call @sink(%q) : (i32) -> ()
  hpvm.return
}
hpvm.internal @root(%idx: !llvm.ptr, %in: !llvm.ptr, %last: !llvm.ptr, %m: index) {
  %node = hpvm.create_node @gather [%m] : !hpvm.node
  hpvm.bind_in %idx -> %node[0] : !llvm.ptr
  hpvm.bind_in %in -> %node[1] : !llvm.ptr
  hpvm.bind_in %last -> %node[2] : !llvm.ptr
}

// -----

// A divergent branch asks the running lanes only: all of them (the others
// counted as agreeing), or any of them; and a masked region starts from
// the running lanes.
// CHECK-LABEL: hpvm.leaf private @guarded__lanes8_masked(
// CHECK: %[[M:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: %[[C:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[OFF:.*]] = arith.xori %[[M]], %{{.*}} : vector<8xi1>
// CHECK: %[[ALLC:.*]] = arith.ori %[[C]], %[[OFF]] : vector<8xi1>
// CHECK: %[[ANYC:.*]] = arith.andi %[[C]], %[[M]] : vector<8xi1>
// CHECK: %[[ALL:.*]] = vector.reduction <and>, %[[ALLC]] : vector<8xi1> into i1
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[ANYC]] : vector<8xi1> into i1
// CHECK: llvm.cond_br %[[ALL]]
hpvm.leaf private @guarded(%out: !llvm.ptr, %n: i32) {
  %i = hpvm.instance_id x : index
  %i32 = arith.index_cast %i : index to i32
  %in = llvm.icmp "slt" %i32, %n : i32
  llvm.cond_br %in, ^body, ^done
^body:
  %i64 = llvm.sext %i32 : i32 to i64
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %f = llvm.sitofp %i32 : i32 to f32
  llvm.store %f, %p {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.br ^done
^done:
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %n: i32, %m: index) {
  %node = hpvm.create_node @guarded [%m] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %n -> %node[1] : i32
}
