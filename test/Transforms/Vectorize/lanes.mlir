// hpvm-vectorize: the lane variants of imported-C leaves (the llvm
// dialect in blocks), one rule per case, with 8 lanes.
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=8 remarks=true" --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// Consecutive accesses (the x id, widened to i64, as the GEP index) are
// vector loads and stores; a uniform value is one scalar.
// REMARK: remark: vectorized: 8 instances along x run as vector lanes (@axpy__lanes8)
// CHECK-LABEL: hpvm.leaf private @axpy(
// CHECK-SAME: hpvm.vector_variant = @axpy__lanes8
// CHECK-LABEL: hpvm.leaf private @axpy__lanes8(
// CHECK-SAME: %[[A:[^:]*]]: f32, %[[X:[^:]*]]: !llvm.ptr, %[[Y:[^:]*]]: !llvm.ptr) -> i1
// CHECK-SAME: hpvm.lanes = 8 : i64
// CHECK: %[[VA:.*]] = vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK: %[[I:.*]] = hpvm.instance_id x : index
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[PX:.*]] = llvm.getelementptr inbounds %[[X]][%[[I64]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[VX:.*]] = llvm.load %[[PX]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: %[[PY:.*]] = llvm.getelementptr inbounds %[[Y]][%[[I64]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[VY:.*]] = llvm.load %[[PY]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: %[[R:.*]] = llvm.intr.fmuladd(%[[VA]], %[[VX]], %[[VY]]) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.store %[[R]], %[[PY]] {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: hpvm.return %true : i1
hpvm.leaf private @axpy(%a: f32, %x: !llvm.ptr, %y: !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %px = llvm.getelementptr inbounds %x[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vx = llvm.load %px {alignment = 4 : i64} : !llvm.ptr -> f32
  %py = llvm.getelementptr inbounds %y[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vy = llvm.load %py {alignment = 4 : i64} : !llvm.ptr -> f32
  %r = llvm.intr.fmuladd(%a, %vx, %vy) : (f32, f32, f32) -> f32
  llvm.store %r, %py {alignment = 4 : i64} : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%a: f32, %x: !llvm.ptr, %y: !llvm.ptr, %n: index) {
  %node = hpvm.create_node @axpy [%n] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : f32
  hpvm.bind_in %x -> %node[1] : !llvm.ptr
  hpvm.bind_in %y -> %node[2] : !llvm.ptr
}

// -----

// An index loaded per lane gathers; a store at a uniform address keeps the
// last lane's value; a strided column (x * n) scatters.
// CHECK-LABEL: hpvm.leaf private @gather__lanes8(
// CHECK: %[[IDX:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xi32>
// CHECK: %[[WIDE:.*]] = llvm.sext %[[IDX]] : vector<8xi32> to vector<8xi64>
// CHECK: %[[PTRS:.*]] = llvm.getelementptr %{{.*}}[%[[WIDE]]] : (!llvm.ptr, vector<8xi64>) -> vector<8x!llvm.ptr>, f32
// CHECK: %[[G:.*]] = llvm.intr.masked.gather %[[PTRS]], %{{.*}} {alignment = 4 : i32} : (vector<8x!llvm.ptr>, vector<8xi1>) -> vector<8xf32>
// CHECK: %[[LAST:.*]] = vector.extract %[[G]][7] : f32 from vector<8xf32>
// CHECK: llvm.store %[[LAST]], %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: llvm.intr.masked.scatter %[[G]], %{{.*}}, %{{.*}} {alignment = 4 : i32} : vector<8xf32>, vector<8xi1> into vector<8x!llvm.ptr>
hpvm.leaf private @gather(%idx: !llvm.ptr, %in: !llvm.ptr, %last: !llvm.ptr, %out: !llvm.ptr, %n: i64) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %pi = llvm.getelementptr %idx[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %k = llvm.load %pi {alignment = 4 : i64} : !llvm.ptr -> i32
  %k64 = llvm.sext %k : i32 to i64
  %pk = llvm.getelementptr %in[%k64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %pk {alignment = 4 : i64} : !llvm.ptr -> f32
  llvm.store %v, %last {alignment = 4 : i64} : f32, !llvm.ptr
  %col = llvm.mul %i64, %n : i64
  %po = llvm.getelementptr %out[%col] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %po {alignment = 4 : i64} : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%idx: !llvm.ptr, %in: !llvm.ptr, %last: !llvm.ptr, %out: !llvm.ptr, %n: i64, %m: index) {
  %node = hpvm.create_node @gather [%m] : !hpvm.node
  hpvm.bind_in %idx -> %node[0] : !llvm.ptr
  hpvm.bind_in %in -> %node[1] : !llvm.ptr
  hpvm.bind_in %last -> %node[2] : !llvm.ptr
  hpvm.bind_in %out -> %node[3] : !llvm.ptr
  hpvm.bind_in %n -> %node[4] : i64
}

// -----

// A bound check (divergent) before any store: all lanes in, all out, or the
// variant returns false; the sign extension of the 32-bit index checks its
// first lane against the last value that cannot wrap (2^31 - 1 - 7).
// CHECK-LABEL: hpvm.leaf private @guarded__lanes8(
// CHECK: %[[C:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[ALL:.*]] = vector.reduction <and>, %[[C]] : vector<8xi1> into i1
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[C]] : vector<8xi1> into i1
// CHECK: llvm.cond_br %[[ALL]], ^[[IN:bb[0-9]+]], ^[[MIXED:bb[0-9]+]]
// CHECK-NEXT: ^[[MIXED]]:
// CHECK-NEXT: llvm.cond_br %[[ANY]], ^[[BAIL:bb[0-9]+]], ^[[DONE:bb[0-9]+]]
// CHECK-NEXT: ^[[IN]]:
// CHECK-NEXT: %[[BOUND:.*]] = arith.constant 2147483640 : i32
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi sle, %{{.*}}, %[[BOUND]] : i32
// CHECK-NEXT: llvm.cond_br %[[OK]], ^{{.*}}, ^[[BAIL]]
// CHECK: llvm.store %{{.*}} : vector<8xf32>, !llvm.ptr
// CHECK: ^[[DONE]]:
// CHECK: hpvm.return %true : i1
// CHECK: ^[[BAIL]]:
// CHECK-NEXT: %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT: hpvm.return %[[FALSE]] : i1
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

// -----

// A loop with a uniform trip count stays a loop around vector code: the
// accumulator is a vector block argument, the row of a (uniform) a scalar
// load broadcast, the column of b a vector load.
// CHECK-LABEL: hpvm.leaf private @dot__lanes8(
// CHECK: llvm.br ^[[LOOP:.*]](%{{.*}}, %{{.*}} : i64, vector<8xf32>)
// CHECK: ^[[LOOP]](%[[K:.*]]: i64, %[[ACC:.*]]: vector<8xf32>):
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.cond_br %{{.*}}, ^[[LOOP]](%{{.*}}, %{{.*}} : i64, vector<8xf32>), ^
hpvm.leaf private @dot(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i64, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %fzero = llvm.mlir.constant(0.0 : f32) : f32
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %x64 = arith.index_cast %x : index to i64
  %y64 = arith.index_cast %y : index to i64
  llvm.br ^loop(%zero, %fzero : i64, f32)
^loop(%i: i64, %acc: f32):
  %arow = llvm.mul %y64, %k : i64
  %aidx = llvm.add %arow, %i : i64
  %pa = llvm.getelementptr %a[%aidx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %va = llvm.load %pa {alignment = 4 : i64} : !llvm.ptr -> f32
  %brow = llvm.mul %i, %n : i64
  %bidx = llvm.add %brow, %x64 : i64
  %pb = llvm.getelementptr %b[%bidx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vb = llvm.load %pb {alignment = 4 : i64} : !llvm.ptr -> f32
  %next = llvm.intr.fmuladd(%va, %vb, %acc) : (f32, f32, f32) -> f32
  %i1 = llvm.add %i, %one : i64
  %more = llvm.icmp "slt" %i1, %k : i64
  llvm.cond_br %more, ^loop(%i1, %next : i64, f32), ^exit
^exit:
  %crow = llvm.mul %y64, %n : i64
  %cidx = llvm.add %crow, %x64 : i64
  %pc = llvm.getelementptr %c[%cidx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %next, %pc {alignment = 4 : i64} : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i64, %n: i64, %nx: index, %ny: index) {
  %node = hpvm.create_node @dot [%nx, %ny] : !hpvm.node
  hpvm.bind_in %a -> %node[0] : !llvm.ptr
  hpvm.bind_in %b -> %node[1] : !llvm.ptr
  hpvm.bind_in %c -> %node[2] : !llvm.ptr
  hpvm.bind_in %k -> %node[3] : i64
  hpvm.bind_in %n -> %node[4] : i64
}

// -----

// Atomics run once per lane, in lane order, even with uniform operands.
// CHECK-LABEL: hpvm.leaf private @count__lanes8(
// CHECK-COUNT-8: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr, i32
// CHECK-NOT: llvm.atomicrmw
// CHECK: llvm.store %{{.*}} : vector<8xi32>, !llvm.ptr
// CHECK: hpvm.return
hpvm.leaf private @count(%counter: !llvm.ptr, %out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : i32) : i32
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %old = llvm.atomicrmw add %counter, %one monotonic : !llvm.ptr, i32
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  llvm.store %old, %p {alignment = 4 : i64} : i32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%counter: !llvm.ptr, %out: !llvm.ptr, %m: index) {
  %node = hpvm.create_node @count [%m] : !hpvm.node
  hpvm.bind_in %counter -> %node[0] : !llvm.ptr
  hpvm.bind_in %out -> %node[1] : !llvm.ptr
}

// -----

// After a store, lanes that disagree run both sides under masks: a masked
// store, atomics only in the active lanes, a select where the paths meet;
// when all lanes agree the unmasked blocks run.
// REMARK: remark: vectorized: 8 instances along x run as vector lanes (@late_branch__lanes8)
// CHECK-LABEL: hpvm.leaf private @late_branch__lanes8(
// CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
// CHECK: %[[IN:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<8xi64>
// CHECK: %[[ALL:.*]] = vector.reduction <and>, %[[IN]]
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[IN]]
// CHECK: llvm.cond_br %[[ALL]], ^[[BODY:bb[0-9]+]], ^[[CHECK:bb[0-9]+]]
// CHECK: ^[[CHECK]]:
// CHECK-NEXT: llvm.cond_br %[[ANY]], ^[[MIXED:bb[0-9]+]], ^[[ELSE:bb[0-9]+]]
// CHECK: ^[[MIXED]]:
// CHECK: %[[OUT:.*]] = arith.xori %[[IN]], %{{.*}} : vector<8xi1>
// CHECK: %[[LANE0:.*]] = vector.extract %[[OUT]][0] : i1 from vector<8xi1>
// CHECK: llvm.cond_br %[[LANE0]], ^[[ATOMIC:bb[0-9]+]], ^
// CHECK: ^[[ATOMIC]]:
// CHECK: llvm.atomicrmw add
// CHECK-COUNT-7: llvm.atomicrmw add
// CHECK: llvm.intr.masked.store %{{.*}}, %{{.*}}, %[[IN]] {alignment = 8 : i32} : vector<8xi64>, vector<8xi1> into !llvm.ptr
// CHECK: %[[MERGED:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi64>
// CHECK: llvm.br ^[[JOIN:bb[0-9]+]](%[[MERGED]] : vector<8xi64>)
// CHECK: ^[[BODY]]:
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<8xi64>, !llvm.ptr
// CHECK: ^[[JOIN]](%[[R:.*]]: vector<8xi64>):
hpvm.leaf private @late_branch(%out: !llvm.ptr, %count: !llvm.ptr, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  llvm.store %zero, %count : i64, !llvm.ptr
  %in = llvm.icmp "slt" %i64, %n : i64
  llvm.cond_br %in, ^body, ^other
^body:
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %i64, %p : i64, !llvm.ptr
  llvm.br ^done(%i64 : i64)
^other:
  %old = llvm.atomicrmw add %count, %i64 monotonic : !llvm.ptr, i64
  llvm.br ^done(%old : i64)
^done(%r: i64):
  %q = llvm.getelementptr %out[%r] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %zero, %q : i64, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %count: !llvm.ptr, %n: i64, %m: index) {
  %node = hpvm.create_node @late_branch [%m] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %count -> %node[1] : !llvm.ptr
  hpvm.bind_in %n -> %node[2] : i64
}

// -----

// Under a mask, a uniform load runs only when some lane is active, and
// inactive lanes divide by 1.
// CHECK-LABEL: hpvm.leaf private @masked_ops__lanes8(
// CHECK: ^[[MIXED:bb[0-9]+]]:
// CHECK: %[[SOME:.*]] = vector.reduction <or>, %[[MASK:.*]] : vector<8xi1> into i1
// CHECK: llvm.cond_br %[[SOME]], ^[[LOAD:bb[0-9]+]], ^[[AFTER:bb[0-9]+]](%{{.*}} : i64)
// CHECK: ^[[LOAD]]:
// CHECK-NEXT: %[[D:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT: llvm.br ^[[AFTER]](%[[D]] : i64)
// CHECK: ^[[AFTER]](%[[DIVISOR:.*]]: i64):
// CHECK: %[[SAFE:.*]] = arith.select %[[MASK]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi64>
// CHECK: llvm.sdiv %{{.*}}, %[[SAFE]] : vector<8xi64>
hpvm.leaf private @masked_ops(%out: !llvm.ptr, %dp: !llvm.ptr, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  llvm.store %zero, %out : i64, !llvm.ptr
  %in = llvm.icmp "slt" %i64, %n : i64
  llvm.cond_br %in, ^body, ^done
^body:
  %d = llvm.load %dp : !llvm.ptr -> i64
  %dd = llvm.add %d, %i64 : i64
  %q = llvm.sdiv %i64, %dd : i64
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %q, %p : i64, !llvm.ptr
  llvm.br ^done
^done:
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %dp: !llvm.ptr, %n: i64, %m: index) {
  %node = hpvm.create_node @masked_ops [%m] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %dp -> %node[1] : !llvm.ptr
  hpvm.bind_in %n -> %node[2] : i64
}

// -----

// Memory private to each instance (llvm.alloca) holds every lane's copy,
// element j of lane l at j * 8 + l: a constant index is a vector access, an
// index that differs between lanes a gather or scatter.
// CHECK-LABEL: hpvm.leaf private @private__lanes8(
// CHECK: %[[COUNT:.*]] = arith.constant 8 : i64
// CHECK: %[[COPY:.*]] = llvm.alloca %[[COUNT]] x !llvm.array<4 x f32> {alignment = 16 : i64} : (i64) -> !llvm.ptr
// CHECK: llvm.intr.lifetime.start %[[COPY]] : !llvm.ptr
// CHECK: %[[AT2:.*]] = llvm.getelementptr %[[COPY]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.store %{{.*}}, %[[AT2]] {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: %[[PTRS:.*]] = llvm.getelementptr %[[COPY]][%{{.*}}] : (!llvm.ptr, vector<8xi64>) -> vector<8x!llvm.ptr>, i8
// CHECK: llvm.intr.masked.gather %[[PTRS]]
// CHECK: llvm.intr.lifetime.end %[[COPY]] : !llvm.ptr
hpvm.leaf private @private(%in: !llvm.ptr, %out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %three = llvm.mlir.constant(3 : i64) : i64
  %eight = llvm.mlir.constant(8 : i64) : i64
  %f = llvm.alloca %one x !llvm.array<4 x f32> {alignment = 16 : i64} : (i64) -> !llvm.ptr
  llvm.intr.lifetime.start %f : !llvm.ptr
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %pin = llvm.getelementptr %in[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %pin {alignment = 4 : i64} : !llvm.ptr -> f32
  %at2 = llvm.getelementptr inbounds %f[%eight] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.store %v, %at2 {alignment = 4 : i64} : f32, !llvm.ptr
  %k = llvm.and %i64, %three : i64
  %atk = llvm.getelementptr %f[0, %k] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<4 x f32>
  %w = llvm.load %atk {alignment = 4 : i64} : !llvm.ptr -> f32
  %pout = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %w, %pout {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.intr.lifetime.end %f : !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%in: !llvm.ptr, %out: !llvm.ptr, %m: index) {
  %node = hpvm.create_node @private [%m] : !hpvm.node
  hpvm.bind_in %in -> %node[0] : !llvm.ptr
  hpvm.bind_in %out -> %node[1] : !llvm.ptr
}

// -----

// Outputs (equal in every instance) come from lane 0; a declined group
// returns placeholders.
// REMARK: remark: vectorized: 8 instances along x run as vector lanes (@with_output__lanes8)
// CHECK-LABEL: hpvm.leaf private @with_output__lanes8(
// CHECK-SAME: -> (i1, i64, index)
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: hpvm.return %[[TRUE]], %{{.*}}, %{{.*}} : i1, i64, index
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[P:.*]] = llvm.mlir.poison : i64
// CHECK: %[[Z:.*]] = arith.constant 0 : index
// CHECK: hpvm.return %[[FALSE]], %[[P]], %[[Z]] : i1, i64, index
hpvm.leaf private @with_output(%in: i64, %out: !llvm.ptr) -> (i64, index) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %in, %p : i64, !llvm.ptr
  %n = hpvm.num_instances x : index
  hpvm.return %in, %n : i64, index
}
hpvm.internal @root(%n: i64, %out: !llvm.ptr, %m: index) -> (i64, index) {
  %d = hpvm.create_node @with_output [%m] : !hpvm.node
  hpvm.bind_in %n -> %d[0] : i64
  hpvm.bind_in %out -> %d[1] : !llvm.ptr
  hpvm.bind_out %d[0] -> 0
  hpvm.bind_out %d[1] -> 1
}

// -----

// x & (2^k - 1) keeps x's lanes consecutive while they do not cross a multiple
// of 2^k: the first lane's low bits are checked against 2^k - 1 - spread
// (2^31 - 1 - 7), the access is one vector. A mask of other bits (6) varies.
// CHECK-LABEL: hpvm.leaf private @low_bits__lanes8(
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[BOUND:.*]] = arith.constant 2147483640 : i64
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi ule, %[[LOW]], %[[BOUND]] : i64
// CHECK-NEXT: llvm.cond_br %[[OK]]
// CHECK: llvm.intr.masked.gather
// CHECK: llvm.store %{{.*}} : vector<8xf32>, !llvm.ptr
hpvm.leaf private @low_bits(%out: !llvm.ptr, %in: !llvm.ptr) {
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %m = llvm.mlir.constant(2147483647 : i64) : i64
  %k = llvm.and %i64, %m : i64
  %six = llvm.mlir.constant(6 : i64) : i64
  %h = llvm.and %i64, %six : i64
  %q = llvm.getelementptr %in[%h] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %q {alignment = 4 : i64} : !llvm.ptr -> f32
  %p = llvm.getelementptr %out[%k] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %p {alignment = 4 : i64} : f32, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %in: !llvm.ptr, %m: index) {
  %node = hpvm.create_node @low_bits [%m] : !hpvm.node
  hpvm.bind_in %out -> %node[0] : !llvm.ptr
  hpvm.bind_in %in -> %node[1] : !llvm.ptr
}


// -----

// Refusals, each with its reason; the leaves stay as they are.
// REMARK: remark: not vectorized: a branch that differs between instances after a store or call, around a loop (masks cover branches whose paths meet again without a loop)
// REMARK: note: here
// REMARK: remark: not vectorized: a local variable or array is used other than by loads and stores of one size (its address escapes, or it is reinterpreted)
// REMARK: remark: not vectorized: its instances do not read their x id
// CHECK-NOT: __lanes
hpvm.leaf private @late_loop(%out: !llvm.ptr, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  llvm.store %zero, %out : i64, !llvm.ptr
  llvm.br ^loop(%zero : i64)
^loop(%k: i64):
  %p = llvm.getelementptr %out[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %i64, %p : i64, !llvm.ptr
  %k1 = llvm.add %k, %one : i64
  %more = llvm.icmp "slt" %k1, %i64 : i64
  llvm.cond_br %more, ^loop(%k1 : i64), ^done
^done:
  hpvm.return
}
hpvm.leaf private @local_array(%out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %slot = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  llvm.store %i64, %slot : i64, !llvm.ptr
  llvm.store %slot, %out : !llvm.ptr, !llvm.ptr
  hpvm.return
}
hpvm.leaf private @same_work(%out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.store %one, %out : i64, !llvm.ptr
  hpvm.return
}
// REMARK: remark: not vectorized: 'memref.load' (leaves of memrefs and structured ops run tiles in lock-step instead: vectorize-tiles)
hpvm.leaf private @structured(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  memref.store %v, %a[%i] : memref<?xf32>
  hpvm.return
}
// REMARK: remark: not vectorized: not profitable: a loop whose trip count differs between instances gathers (about the cost of the scalar loads, plus a check per step)
hpvm.leaf private @ragged(%len: !llvm.ptr, %idx: !llvm.ptr, %v: !llvm.ptr, %out: !llvm.ptr) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %fzero = llvm.mlir.constant(0.0 : f32) : f32
  %i = hpvm.instance_id x : index
  %i64 = arith.index_cast %i : index to i64
  %pl = llvm.getelementptr %len[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %n = llvm.load %pl : !llvm.ptr -> i64
  llvm.br ^loop(%zero, %fzero : i64, f32)
^loop(%k: i64, %acc: f32):
  %pi = llvm.getelementptr %idx[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %j = llvm.load %pi : !llvm.ptr -> i64
  %jj = llvm.mul %j, %i64 : i64
  %pv = llvm.getelementptr %v[%jj] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.load %pv : !llvm.ptr -> f32
  %sum = llvm.fadd %acc, %x : f32
  %k1 = llvm.add %k, %one : i64
  %more = llvm.icmp "slt" %k1, %n : i64
  llvm.cond_br %more, ^loop(%k1, %sum : i64, f32), ^done
^done:
  %po = llvm.getelementptr %out[%i64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %sum, %po : f32, !llvm.ptr
  hpvm.return
}
// Not replicated: no variant, no remark.
// REMARK-NOT: remark
hpvm.leaf private @single(%out: !llvm.ptr, %v: i64) {
  llvm.store %v, %out : i64, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %n: i64, %m: index, %buf: memref<?xf32>) {
  %a = hpvm.create_node @late_loop [%m] : !hpvm.node
  hpvm.bind_in %out -> %a[0] : !llvm.ptr
  hpvm.bind_in %n -> %a[1] : i64
  %b = hpvm.create_node @local_array [%m] : !hpvm.node
  hpvm.bind_in %out -> %b[0] : !llvm.ptr
  %c = hpvm.create_node @same_work [%m] : !hpvm.node
  hpvm.bind_in %out -> %c[0] : !llvm.ptr
  %g = hpvm.create_node @ragged [%m] : !hpvm.node
  hpvm.bind_in %out -> %g[0] : !llvm.ptr
  hpvm.bind_in %out -> %g[1] : !llvm.ptr
  hpvm.bind_in %out -> %g[2] : !llvm.ptr
  hpvm.bind_in %out -> %g[3] : !llvm.ptr
  %f = hpvm.create_node @structured [%m] : !hpvm.node
  hpvm.bind_in %buf -> %f[0] : memref<?xf32>
  %e = hpvm.create_node @single : !hpvm.node
  hpvm.bind_in %out -> %e[0] : !llvm.ptr
  hpvm.bind_in %n -> %e[1] : i64
}
