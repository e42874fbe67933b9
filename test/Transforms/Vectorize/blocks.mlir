// hpvm-vectorize rows=N: block variants (instance coarsening) for
// leaves replicated in two or more dimensions: W lanes of x times N rows of y,
// ops that differ between rows once per row, the others once.
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=4 rows=2 remarks=true" --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: hpvm-opt %s --split-input-file --hpvm-vectorize="lanes=4 rows=1" | FileCheck %s --check-prefix=NOROWS
// NOROWS-NOT: hpvm.block_variant
// NOROWS-NOT: hpvm.rows

// C[y][x] = sum_k A[y][k] * B[k][x]: the load of B (x, not y) is shared by
// both rows, the loads of A (y) and the accumulators are one per row.
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@dot__lanes4)
// REMARK: remark: coarsened: blocks of 4 x 2 instances (@dot__lanes4x2)
// CHECK-LABEL: hpvm.leaf private @dot(
// CHECK-SAME: hpvm.block_variant = @dot__lanes4x2
// CHECK-SAME: hpvm.vector_variant = @dot__lanes4
// CHECK-LABEL: hpvm.leaf private @dot__lanes4x2(
// CHECK-SAME: hpvm.lanes = 4 : i64, hpvm.rows = 2 : i64
// CHECK: %[[Y0:.*]] = hpvm.instance_id y : index
// CHECK: %[[Y:.*]] = hpvm.instance_id y : index
// CHECK: %[[Y1:.*]] = arith.addi %[[Y]], %c1 : index
// CHECK: ^bb1(%{{.*}}: i64, %[[ACC0:.*]]: vector<4xf32>, %[[ACC1:.*]]: vector<4xf32>):
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NOT: llvm.load
// CHECK: %[[B:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.intr.fmuladd(%{{.*}}, %[[B]], %[[ACC0]])
// CHECK: llvm.intr.fmuladd(%{{.*}}, %[[B]], %[[ACC1]])
// CHECK-COUNT-2: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr
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

// Refusals of blocks (the lane variant stays): a branch on y, a leaf that
// does not read y, a 1-D grid (no remark), a leaf without a loop whose loads
// every row shares (nothing to gain).
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@edge__lanes4)
// REMARK: remark: no blocks of 2 rows: a branch on a value that differs between rows
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@flat__lanes4)
// REMARK: remark: no blocks of 2 rows: its instances do not read their y id
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@line__lanes4)
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@plain__lanes4)
// REMARK: remark: no blocks of 2 rows: no loop loads a value that every row needs
// REMARK-NOT: coarsened
// CHECK-NOT: hpvm.rows
hpvm.leaf private @edge(%out: !llvm.ptr, %n: i64) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %x64 = arith.index_cast %x : index to i64
  %y64 = arith.index_cast %y : index to i64
  %in = llvm.icmp "slt" %y64, %n : i64
  llvm.cond_br %in, ^body, ^done
^body:
  %p = llvm.getelementptr %out[%x64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %y64, %p : i64, !llvm.ptr
  llvm.br ^done
^done:
  hpvm.return
}
hpvm.leaf private @flat(%out: !llvm.ptr) {
  %x = hpvm.instance_id x : index
  %x64 = arith.index_cast %x : index to i64
  %p = llvm.getelementptr %out[%x64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %x64, %p : i64, !llvm.ptr
  hpvm.return
}
hpvm.leaf private @line(%out: !llvm.ptr) {
  %x = hpvm.instance_id x : index
  %x64 = arith.index_cast %x : index to i64
  %p = llvm.getelementptr %out[%x64] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %x64, %p : i64, !llvm.ptr
  hpvm.return
}
hpvm.leaf private @plain(%out: !llvm.ptr, %n: i64) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %x64 = arith.index_cast %x : index to i64
  %y64 = arith.index_cast %y : index to i64
  %row = llvm.mul %y64, %n : i64
  %i = llvm.add %row, %x64 : i64
  %p = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %y64, %p : i64, !llvm.ptr
  hpvm.return
}
hpvm.internal @root(%out: !llvm.ptr, %n: i64, %nx: index, %ny: index) {
  %pl = hpvm.create_node @plain [%nx, %ny] : !hpvm.node
  hpvm.bind_in %out -> %pl[0] : !llvm.ptr
  hpvm.bind_in %n -> %pl[1] : i64
  %e = hpvm.create_node @edge [%nx, %ny] : !hpvm.node
  hpvm.bind_in %out -> %e[0] : !llvm.ptr
  hpvm.bind_in %n -> %e[1] : i64
  %f = hpvm.create_node @flat [%nx, %ny] : !hpvm.node
  hpvm.bind_in %out -> %f[0] : !llvm.ptr
  %l = hpvm.create_node @line [%nx] : !hpvm.node
  hpvm.bind_in %out -> %l[0] : !llvm.ptr
}

// -----

// A leaf that passes its buffer on as an output (HPVM-C's
// __hpvm__return(2, c, bytes_c), for an edge to the next stage): the
// output is one value for every instance, so blocks are built; the block
// variant returns it as the lane variant does. A computed output refuses.
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@passes__lanes4)
// REMARK: remark: coarsened: blocks of 4 x 2 instances (@passes__lanes4x2)
// REMARK: remark: vectorized: 4 instances along x run as vector lanes (@computes__lanes4)
// REMARK: remark: no blocks of 2 rows: an output is computed (only inputs passed on are one value for every block of rows)
// CHECK-LABEL: hpvm.leaf private @passes(
// CHECK-SAME: hpvm.block_variant = @passes__lanes4x2
// CHECK-LABEL: hpvm.leaf private @passes__lanes4x2(
// CHECK-SAME: %[[C:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[BYTES:[^:]*]]: i64) -> (i1, !llvm.ptr, i64)
// CHECK-SAME: hpvm.rows = 2
// CHECK: hpvm.return %true{{.*}}, %[[C]], %[[BYTES]] : i1, !llvm.ptr, i64
// CHECK-LABEL: hpvm.leaf private @computes(
// CHECK-NOT: hpvm.block_variant
// CHECK-SAME: {
hpvm.leaf private @passes(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i64, %n: i64, %bytes: i64) -> (!llvm.ptr, i64) {
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
  hpvm.return %c, %bytes : !llvm.ptr, i64
}
hpvm.leaf private @computes(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i64, %n: i64, %bytes: i64) -> (i64) {
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
  %half = llvm.lshr %bytes, %one : i64
  hpvm.return %half : i64
}
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %k: i64, %n: i64, %bytes: i64, %nx: index, %ny: index) -> (!llvm.ptr, i64, i64) {
  %p = hpvm.create_node @passes [%nx, %ny] : !hpvm.node
  %q = hpvm.create_node @computes [%nx, %ny] : !hpvm.node
  hpvm.bind_in %a -> %p[0] : !llvm.ptr
  hpvm.bind_in %b -> %p[1] : !llvm.ptr
  hpvm.bind_in %c -> %p[2] : !llvm.ptr
  hpvm.bind_in %k -> %p[3] : i64
  hpvm.bind_in %n -> %p[4] : i64
  hpvm.bind_in %bytes -> %p[5] : i64
  hpvm.bind_in %a -> %q[0] : !llvm.ptr
  hpvm.bind_in %b -> %q[1] : !llvm.ptr
  hpvm.bind_in %c -> %q[2] : !llvm.ptr
  hpvm.bind_in %k -> %q[3] : i64
  hpvm.bind_in %n -> %q[4] : i64
  hpvm.bind_in %bytes -> %q[5] : i64
  hpvm.bind_out %p[0] -> 0
  hpvm.bind_out %p[1] -> 1
  hpvm.bind_out %q[0] -> 2
}

// -----

// Two returns passing on different inputs: the output is not one input in every
// instance, so it counts as computed.
// REMARK: remark: no blocks of 2 rows: an output is computed (only inputs passed on are one value for every block of rows)
// CHECK-LABEL: hpvm.leaf private @either(
// CHECK-NOT: hpvm.block_variant
// CHECK-SAME: {
hpvm.leaf private @either(%a: !llvm.ptr, %b: !llvm.ptr, %k: i64, %n: i64) -> (!llvm.ptr) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %fzero = llvm.mlir.constant(0.0 : f32) : f32
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %x64 = arith.index_cast %x : index to i64
  %y64 = arith.index_cast %y : index to i64
  llvm.br ^loop(%zero, %fzero : i64, f32)
^loop(%i: i64, %acc: f32):
  %brow = llvm.mul %i, %n : i64
  %bidx = llvm.add %brow, %x64 : i64
  %pb = llvm.getelementptr %b[%bidx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vb = llvm.load %pb {alignment = 4 : i64} : !llvm.ptr -> f32
  %next = llvm.fadd %acc, %vb : f32
  %i1 = llvm.add %i, %one : i64
  %more = llvm.icmp "slt" %i1, %k : i64
  llvm.cond_br %more, ^loop(%i1, %next : i64, f32), ^exit
^exit:
  %row = llvm.mul %y64, %n : i64
  %idx = llvm.add %row, %x64 : i64
  %pa = llvm.getelementptr %a[%idx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %next, %pa {alignment = 4 : i64} : f32, !llvm.ptr
  %big = llvm.icmp "sgt" %k, %n : i64
  llvm.cond_br %big, ^first, ^second
^first:
  hpvm.return %a : !llvm.ptr
^second:
  hpvm.return %b : !llvm.ptr
}
hpvm.internal @root(%a: !llvm.ptr, %b: !llvm.ptr, %k: i64, %n: i64, %nx: index, %ny: index) -> (!llvm.ptr) {
  %e = hpvm.create_node @either [%nx, %ny] : !hpvm.node
  hpvm.bind_in %a -> %e[0] : !llvm.ptr
  hpvm.bind_in %b -> %e[1] : !llvm.ptr
  hpvm.bind_in %k -> %e[2] : i64
  hpvm.bind_in %n -> %e[3] : i64
  hpvm.bind_out %e[0] -> 0
}
