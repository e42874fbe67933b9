// hpvm-tile-nodes: applied cases, one RUN line per option set: dynamic
// (non-divisible) 1-D, divisible and non-divisible constant 2-D, 3-D with
// extents computed in the parent, the scratch allocation node, outputs, and
// named nodes against all replicated leaves.
// RUN: split-file %s %t
// RUN: hpvm-opt %t/dynamic-1d.mlir --hpvm-tile-nodes="sizes=64" | FileCheck %s --check-prefix=DYN
// RUN: hpvm-opt %t/dynamic-1d.mlir --hpvm-tile-nodes="sizes=64 scratch=f32" | FileCheck %s --check-prefix=SCRATCH
// RUN: hpvm-opt %t/const-2d.mlir --hpvm-tile-nodes="sizes=64,4" | FileCheck %s --check-prefix=DIV
// RUN: hpvm-opt %t/const-2d.mlir --hpvm-tile-nodes="sizes=48,3" | FileCheck %s --check-prefix=PART
// RUN: hpvm-opt %t/computed-3d.mlir --hpvm-tile-nodes="sizes=8,4,2" | FileCheck %s --check-prefix=THREE
// RUN: hpvm-opt %t/computed-3d.mlir --hpvm-tile-nodes="sizes=8,4,2 scratch=i32" | FileCheck %s --check-prefix=THREE-SCRATCH
// RUN: hpvm-opt %t/outputs.mlir --hpvm-tile-nodes="sizes=16" | FileCheck %s --check-prefix=OUT
// RUN: hpvm-opt %t/passed-on.mlir --hpvm-tile-nodes="sizes=64" | FileCheck %s --check-prefix=PASSED
// RUN: hpvm-opt %t/several.mlir --hpvm-tile-nodes="nodes=second sizes=4" | FileCheck %s --check-prefix=NAMED
// RUN: hpvm-opt %t/several.mlir --hpvm-tile-nodes="sizes=4" | FileCheck %s --check-prefix=ALL
// The results verify and lower to LLVM.
// RUN: hpvm-opt %t/computed-3d.mlir --hpvm-tile-nodes="sizes=8,4,2 scratch=f32" --hpvm-lower-to-llvm-pipeline -o /dev/null
// RUN: hpvm-opt %t/dynamic-1d.mlir --hpvm-tile-nodes="sizes=64" --hpvm-lower-to-llvm-pipeline -o /dev/null

//--- dynamic-1d.mlir
// A 1-D grid of %n instances: ceil(n / 64) tiles, the last one guarded; the
// leaf receives %n to compute its global id bound; targets and access
// attributes are kept.
// DYN-LABEL: hpvm.leaf @vadd_tile(
// DYN-SAME: %[[A:[^:]*]]: memref<?xf32> {hpvm.access = #hpvm.access<in>}, %{{[^:]*}}: memref<?xf32> {hpvm.access = #hpvm.access<in>}, %[[C:[^:]*]]: memref<?xf32> {hpvm.access = #hpvm.access<out>}, %[[N:[^:]*]]: index)
// DYN-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// DYN-NEXT: %[[T:.*]] = hpvm.instance_id x level 1 : index
// DYN-NEXT: %[[L:.*]] = hpvm.instance_id x : index
// DYN-NEXT: %[[S:.*]] = arith.constant 64 : index
// DYN-NEXT: %[[B:.*]] = arith.muli %[[T]], %[[S]] : index
// DYN-NEXT: %[[G:.*]] = arith.addi %[[B]], %[[L]] : index
// DYN-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[G]], %[[N]] : index
// DYN-NEXT: scf.if %[[IN]] {
// DYN-NEXT: %[[X:.*]] = memref.load %[[A]][%[[G]]]
// DYN: %[[R:.*]] = hpvm.instance_id x level 2 : index
// DYN: memref.store %{{.*}}, %[[C]][%[[R]]]
// DYN-NEXT: }
// DYN-NEXT: hpvm.return
// DYN-LABEL: hpvm.internal @vadd_tiles(
// DYN-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// DYN-NEXT: %[[C64:.*]] = arith.constant 64 : index
// DYN-NEXT: %[[L:.*]] = hpvm.create_node @vadd_tile [%[[C64]]] : !hpvm.node
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[L]][0]
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[L]][1]
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[L]][2]
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[L]][3] : index
// DYN-NEXT: }
// DYN-LABEL: hpvm.internal @root(
// DYN-SAME: %[[RN:[^:]*]]: index)
// DYN-NEXT: %[[C63:.*]] = arith.constant 63 : index
// DYN-NEXT: %[[UP:.*]] = arith.addi %[[RN]], %[[C63]] : index
// DYN-NEXT: %[[C64:.*]] = arith.constant 64 : index
// DYN-NEXT: %[[COUNT:.*]] = arith.divui %[[UP]], %[[C64]] : index
// DYN-NEXT: %[[TL:.*]] = hpvm.create_node @vadd_tiles [%[[COUNT]]] : !hpvm.node
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[TL]][0]
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[TL]][1]
// DYN-NEXT: hpvm.bind_in %{{.*}} -> %[[TL]][2]
// DYN-NEXT: hpvm.bind_in %[[RN]] -> %[[TL]][3] : index
// DYN-NEXT: }
// DYN-NOT: @vadd(
//
// SCRATCH-LABEL: hpvm.leaf @vadd_tile(
// SCRATCH-SAME: %{{[^:]*}}: index, %{{[^:]*}}: memref<64xf32>)
// SCRATCH-LABEL: hpvm.leaf @vadd_scratch() -> memref<64xf32>
// SCRATCH-SAME: attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]}
// SCRATCH-NEXT: %[[M:.*]] = hpvm.alloc() : memref<64xf32>
// SCRATCH-NEXT: hpvm.return %[[M]] : memref<64xf32>
// SCRATCH-LABEL: hpvm.internal @vadd_tiles(
// SCRATCH: %[[A:.*]] = hpvm.create_node @vadd_scratch : !hpvm.node
// SCRATCH-NEXT: %[[L:.*]] = hpvm.create_node @vadd_tile [%{{.*}}] : !hpvm.node
// SCRATCH: hpvm.bind_in %{{.*}} -> %[[L]][3] : index
// SCRATCH-NEXT: hpvm.edge %[[A]][0] -> %[[L]][4] all_to_all
hpvm.leaf @vadd(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                %b: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                %c: memref<?xf32> {hpvm.access = #hpvm.access<out>})
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %x = memref.load %a[%i] : memref<?xf32>
  %y = memref.load %b[%i] : memref<?xf32>
  %s = arith.addf %x, %y : f32
  %r = hpvm.instance_id x level 1 : index
  memref.store %s, %c[%r] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %leaf = hpvm.create_node @vadd [%n] : !hpvm.node
  hpvm.bind_in %a -> %leaf[0] : memref<?xf32>
  hpvm.bind_in %b -> %leaf[1] : memref<?xf32>
  hpvm.bind_in %c -> %leaf[2] : memref<?xf32>
}

//--- const-2d.mlir
// A 128x8 grid. Sizes 64,4 divide it: 2x2 tiles, no guard, and
// num_instances becomes the constant extent. Sizes 48,3 do not: 3x3 tiles
// and a guard on both dimensions.
// DIV-LABEL: hpvm.leaf @grid_tile(
// DIV-NEXT: %[[TX:.*]] = hpvm.instance_id x level 1 : index
// DIV-NEXT: %[[LX:.*]] = hpvm.instance_id x : index
// DIV-NEXT: %[[SX:.*]] = arith.constant 64 : index
// DIV-NEXT: %[[BX:.*]] = arith.muli %[[TX]], %[[SX]] : index
// DIV-NEXT: %[[GX:.*]] = arith.addi %[[BX]], %[[LX]] : index
// DIV-NEXT: %[[NX:.*]] = arith.constant 128 : index
// DIV-NEXT: %[[TY:.*]] = hpvm.instance_id y level 1 : index
// DIV-NEXT: %[[LY:.*]] = hpvm.instance_id y : index
// DIV-NEXT: %[[SY:.*]] = arith.constant 4 : index
// DIV-NEXT: %[[BY:.*]] = arith.muli %[[TY]], %[[SY]] : index
// DIV-NEXT: %[[GY:.*]] = arith.addi %[[BY]], %[[LY]] : index
// DIV-NEXT: %[[ROW:.*]] = arith.muli %[[GY]], %[[NX]] : index
// DIV-NEXT: %[[I:.*]] = arith.addi %[[ROW]], %[[GX]] : index
// DIV-NEXT: %[[ONE:.*]] = arith.constant 1.0
// DIV-NEXT: memref.store %[[ONE]], %{{.*}}[%[[I]]]
// DIV-NEXT: hpvm.return
// DIV-LABEL: hpvm.internal @grid_tiles(
// DIV: hpvm.create_node @grid_tile [%{{.*}}, %{{.*}}] : !hpvm.node
// DIV-LABEL: hpvm.internal @root(
// DIV: %[[C2:.*]] = arith.constant 2 : index
// DIV-NEXT: %[[C2B:.*]] = arith.constant 2 : index
// DIV-NEXT: hpvm.create_node @grid_tiles [%[[C2]], %[[C2B]]] : !hpvm.node
//
// PART-LABEL: hpvm.leaf @grid_tile(
// PART: %[[SX:.*]] = arith.constant 48 : index
// PART: %[[GX:.*]] = arith.addi
// PART-NEXT: %[[NX:.*]] = arith.constant 128 : index
// PART: %[[SY:.*]] = arith.constant 3 : index
// PART: %[[GY:.*]] = arith.addi
// PART-NEXT: %[[NY:.*]] = arith.constant 8 : index
// PART-NEXT: %[[INX:.*]] = arith.cmpi ult, %[[GX]], %[[NX]] : index
// PART-NEXT: %[[INY:.*]] = arith.cmpi ult, %[[GY]], %[[NY]] : index
// PART-NEXT: %[[IN:.*]] = arith.andi %[[INX]], %[[INY]] : i1
// PART-NEXT: scf.if %[[IN]] {
// PART-LABEL: hpvm.internal @grid_tiles(
// PART: %[[C48:.*]] = arith.constant 48 : index
// PART-NEXT: %[[C3:.*]] = arith.constant 3 : index
// PART-NEXT: hpvm.create_node @grid_tile [%[[C48]], %[[C3]]] : !hpvm.node
// PART-LABEL: hpvm.internal @root(
// PART: %[[T3:.*]] = arith.constant 3 : index
// PART-NEXT: %[[T3B:.*]] = arith.constant 3 : index
// PART-NEXT: hpvm.create_node @grid_tiles [%[[T3]], %[[T3B]]] : !hpvm.node
hpvm.leaf @grid(%out: memref<?xf32>) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %nx = hpvm.num_instances x : index
  %row = arith.muli %y, %nx : index
  %i = arith.addi %row, %x : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %out[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%out: memref<?xf32>) {
  %c128 = arith.constant 128 : index
  %c8 = arith.constant 8 : index
  %g = hpvm.create_node @grid [%c128, %c8] : !hpvm.node
  hpvm.bind_in %out -> %g[0] : memref<?xf32>
}

//--- computed-3d.mlir
// A 3-D interior grid whose extents the parent computes from its inputs: the
// tile leaf recomputes them from the parent inputs they read (%nx, %ny, %nz:
// new ports 2-4, even though %nx also feeds port 1).
// THREE-LABEL: hpvm.leaf @interior_tile(
// THREE-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: index, %[[NX:[^:]*]]: index, %[[NY:[^:]*]]: index, %[[NZ:[^:]*]]: index)
// THREE: %[[GX:.*]] = arith.addi
// THREE-NEXT: %[[C2:.*]] = arith.constant 2 : index
// THREE-NEXT: %[[EX:.*]] = arith.subi %[[NX]], %[[C2]] : index
// THREE: %[[GY:.*]] = arith.addi
// THREE-NEXT: %[[EY:.*]] = arith.subi %[[NY]], %[[C2]] : index
// THREE: %[[GZ:.*]] = arith.addi
// THREE-NEXT: %[[EZ:.*]] = arith.divui %[[NZ]], %[[C2]] : index
// THREE-NEXT: %[[INX:.*]] = arith.cmpi ult, %[[GX]], %[[EX]] : index
// THREE-NEXT: %[[INY:.*]] = arith.cmpi ult, %[[GY]], %[[EY]] : index
// THREE-NEXT: %[[INXY:.*]] = arith.andi %[[INX]], %[[INY]] : i1
// THREE-NEXT: %[[INZ:.*]] = arith.cmpi ult, %[[GZ]], %[[EZ]] : index
// THREE-NEXT: %[[IN:.*]] = arith.andi %[[INXY]], %[[INZ]] : i1
// THREE-NEXT: scf.if %[[IN]] {
// THREE-NEXT: hpvm.num_instances z level 2 : index
// THREE-NEXT: %[[PLANE:.*]] = arith.muli %[[EY]], %[[EX]] : index
// THREE-NEXT: arith.muli %[[GZ]], %[[PLANE]] : index
// THREE-NEXT: arith.muli %[[GY]], %[[EX]] : index
// THREE: memref.store
// THREE-LABEL: hpvm.internal @interior_tiles(
// THREE: hpvm.create_node @interior_tile [%{{.*}}, %{{.*}}, %{{.*}}] : !hpvm.node
// THREE-LABEL: hpvm.internal @root(
// THREE-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[RX:[^:]*]]: index, %[[RY:[^:]*]]: index, %[[RZ:[^:]*]]: index)
// THREE: %[[T:.*]] = hpvm.create_node @interior_tiles [%{{.*}}, %{{.*}}, %{{.*}}] : !hpvm.node
// THREE-NEXT: hpvm.bind_in %[[A]] -> %[[T]][0]
// THREE-NEXT: hpvm.bind_in %[[RX]] -> %[[T]][1] : index
// THREE-NEXT: hpvm.bind_in %[[RX]] -> %[[T]][2] : index
// THREE-NEXT: hpvm.bind_in %[[RY]] -> %[[T]][3] : index
// THREE-NEXT: hpvm.bind_in %[[RZ]] -> %[[T]][4] : index
//
// THREE-SCRATCH-LABEL: hpvm.leaf @interior_scratch() -> memref<2x4x8xi32>
// THREE-SCRATCH: hpvm.edge %{{.*}}[0] -> %{{.*}}[5] all_to_all
hpvm.leaf @interior(%out: memref<?xf32>, %nx: index) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %z = hpvm.instance_id z : index
  %ex = hpvm.num_instances x : index
  %ey = hpvm.num_instances y : index
  %zz = hpvm.num_instances z level 1 : index
  %plane = arith.muli %ey, %ex : index
  %zi = arith.muli %z, %plane : index
  %yi = arith.muli %y, %ex : index
  %s = arith.addi %zi, %yi : index
  %i = arith.addi %s, %x : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %out[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%out: memref<?xf32>, %nx: index, %ny: index, %nz: index) {
  %c2 = arith.constant 2 : index
  %ix = arith.subi %nx, %c2 : index
  %iy = arith.subi %ny, %c2 : index
  %iz = arith.divui %nz, %c2 : index
  %g = hpvm.create_node @interior [%ix, %iy, %iz] : !hpvm.node
  hpvm.bind_in %out -> %g[0] : memref<?xf32>
  hpvm.bind_in %nx -> %g[1] : index
}

//--- outputs.mlir
// Outputs are kept when no tile can be partial (constant, divisible
// extents): the tile node binds them out, the outer edges stay.
// OUT-LABEL: hpvm.leaf @sized_tile(
// OUT-SAME: -> i64
// The unused global id is not left behind; no guard.
// OUT-NEXT: %[[N:.*]] = arith.constant 64 : index
// OUT-NEXT: %[[V:.*]] = arith.index_cast %[[N]] : index to i64
// OUT-NEXT: hpvm.return %[[V]] : i64
// OUT-LABEL: hpvm.internal @sized_tiles(
// OUT-SAME: -> i64
// OUT: %[[L:.*]] = hpvm.create_node @sized_tile
// OUT: hpvm.bind_out %[[L]][0] -> 0
// OUT-LABEL: hpvm.internal @root(
// OUT: %[[C4:.*]] = arith.constant 4 : index
// OUT-NEXT: %[[P:.*]] = hpvm.create_node @sized_tiles [%[[C4]]] : !hpvm.node
// OUT-NEXT: %[[Q:.*]] = hpvm.create_node @use : !hpvm.node
// OUT-NEXT: hpvm.edge %[[P]][0] -> %[[Q]][0] all_to_all
// OUT-NEXT: hpvm.bind_out %[[P]][0] -> 0
hpvm.leaf @sized() -> (i64) {
  %n = hpvm.num_instances x : index
  %v = arith.index_cast %n : index to i64
  hpvm.return %v : i64
}
hpvm.leaf @use(%v: i64) {
  hpvm.return
}
hpvm.internal @root() -> (i64) {
  %c64 = arith.constant 64 : index
  %p = hpvm.create_node @sized [%c64] : !hpvm.node
  %q = hpvm.create_node @use : !hpvm.node
  hpvm.edge %p[0] -> %q[0] all_to_all
  hpvm.bind_out %p[0] -> 0
}

//--- passed-on.mlir
// Outputs that are inputs passed on (a buffer returned for an edge) are kept
// with partial tiles too: the guard holds the work, and the return after it
// passes the same inputs on in every instance, in range or not.
// PASSED-LABEL: hpvm.leaf @fill_tile(
// PASSED-SAME: %[[BUF:[^:]*]]: memref<?xf32>, %[[BYTES:[^:]*]]: i64, %{{[^:]*}}: index) -> (memref<?xf32>, i64)
// PASSED: scf.if %{{.*}} {
// PASSED: memref.store
// PASSED-NEXT: }
// PASSED-NEXT: hpvm.return %[[BUF]], %[[BYTES]] : memref<?xf32>, i64
// PASSED-LABEL: hpvm.internal @root(
// PASSED: %[[P:.*]] = hpvm.create_node @fill_tiles
// PASSED: hpvm.edge %[[P]][0] -> %{{.*}}[0] all_to_all
hpvm.leaf @fill(%buf: memref<?xf32>, %bytes: i64) -> (memref<?xf32>, i64) {
  %i = hpvm.instance_id x : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %buf[%i] : memref<?xf32>
  hpvm.return %buf, %bytes : memref<?xf32>, i64
}
hpvm.leaf @use(%buf: memref<?xf32>, %bytes: i64) {
  hpvm.return
}
hpvm.internal @root(%buf: memref<?xf32>, %bytes: i64, %n: index) {
  %p = hpvm.create_node @fill [%n] : !hpvm.node
  hpvm.bind_in %buf -> %p[0] : memref<?xf32>
  hpvm.bind_in %bytes -> %p[1] : i64
  %q = hpvm.create_node @use : !hpvm.node
  hpvm.edge %p[0] -> %q[0] all_to_all
  hpvm.edge %p[1] -> %q[1] all_to_all
}

//--- several.mlir
// Two replicated leaves, a single-instance leaf and an internal child. With
// nodes=second only @second is tiled; without, every replicated leaf child
// is (both children of @first, so @first goes) and the others are no
// candidates (no remark).
// NAMED-LABEL: hpvm.leaf @first(
// NAMED-NOT: hpvm.leaf @first_tile
// NAMED-LABEL: hpvm.leaf @second_tile(
// NAMED-LABEL: hpvm.internal @second_tiles(
// NAMED-LABEL: hpvm.internal @root(
// NAMED: hpvm.create_node @first [
// NAMED: hpvm.create_node @second_tiles [
// NAMED: hpvm.create_node @single : !hpvm.node
// NAMED: hpvm.create_node @inner : !hpvm.node
//
// ALL-NOT: hpvm.leaf @first(
// ALL-LABEL: hpvm.leaf @first_tile_0(
// ALL: arith.cmpi ult, %{{.*}}, %arg0 : index
// ALL-LABEL: hpvm.internal @first_tiles_1(
// ALL-LABEL: hpvm.leaf @first_tile(
// ALL: %[[C3:.*]] = arith.constant 3 : index
// ALL-NEXT: arith.cmpi ult, %{{.*}}, %[[C3]] : index
// ALL-LABEL: hpvm.internal @first_tiles(
// ALL-LABEL: hpvm.leaf @second_tile(
// ALL-LABEL: hpvm.internal @second_tiles(
// ALL-LABEL: hpvm.internal @inner(
// ALL: %[[ONE:.*]] = arith.constant 1 : index
// ALL-NEXT: hpvm.create_node @first_tiles [%[[ONE]]] : !hpvm.node
// ALL-LABEL: hpvm.internal @root(
// ALL: hpvm.create_node @first_tiles_1 [
// ALL: hpvm.create_node @second_tiles [
// ALL: hpvm.create_node @single : !hpvm.node
// ALL: hpvm.create_node @inner : !hpvm.node
hpvm.leaf @first() {
  hpvm.return
}
hpvm.leaf @second() {
  hpvm.return
}
hpvm.leaf @single() {
  hpvm.return
}
hpvm.internal @inner() {
  %c3 = arith.constant 3 : index
  %f = hpvm.create_node @first [%c3] : !hpvm.node
}
hpvm.internal @root(%n: index) {
  %a = hpvm.create_node @first [%n] : !hpvm.node
  %b = hpvm.create_node @second [%n] : !hpvm.node
  %c = hpvm.create_node @single : !hpvm.node
  %d = hpvm.create_node @inner : !hpvm.node
}
