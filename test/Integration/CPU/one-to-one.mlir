// one_to_one edges between replicated nodes carry one value per instance:
// instance i of the sink receives instance i's output, leaf to leaf (2-D) and
// leaf to a replicated internal node whose instances bind it to their child.
// RUN: hpvm-cc %s %S/Inputs/one_to_one_host.c -o %t
// RUN: %t 37 5 | FileCheck %s
// RUN: %t 1 1 | FileCheck %s --check-prefix=ONE
// CHECK: rows=37 cols=5 wrong=0
// ONE: rows=1 cols=1 wrong=0

// v[y][x] = in[y][x] * in[y][x], one value per instance.
hpvm.leaf @square(%in: memref<?x?xf32>) -> (f32) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %v = memref.load %in[%y, %x] : memref<?x?xf32>
  %s = arith.mulf %v, %v : f32
  hpvm.return %s : f32
}
// out[y][x] = v + x (v from the same instance of @square).
hpvm.leaf @store(%v: f32, %out: memref<?x?xf32>) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %xi = arith.index_cast %x : index to i64
  %xf = arith.sitofp %xi : i64 to f32
  %r = arith.addf %v, %xf : f32
  memref.store %r, %out[%y, %x] : memref<?x?xf32>
  hpvm.return
}
// Per row: the row's value from @row_value reaches a tile of @fill instances.
hpvm.leaf @row_value(%in: memref<?x?xf32>) -> (f32) {
  %y = hpvm.instance_id x : index
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%y, %c0] : memref<?x?xf32>
  hpvm.return %v : f32
}
hpvm.leaf @fill(%v: f32, %rows: memref<?x?xf32>) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id x level 1 : index
  memref.store %v, %rows[%y, %x] : memref<?x?xf32>
  hpvm.return
}
hpvm.internal @row_tile(%v: f32, %rows: memref<?x?xf32>, %cols: index) {
  %f = hpvm.create_node @fill [%cols] : !hpvm.node
  hpvm.bind_in %v -> %f[0] : f32
  hpvm.bind_in %rows -> %f[1] : memref<?x?xf32>
}
hpvm.internal @root(%in: memref<?x?xf32>, %out: memref<?x?xf32>, %rowsOut: memref<?x?xf32>,
                    %rows: index, %cols: index) {
  %sq = hpvm.create_node @square [%cols, %rows] : !hpvm.node
  %st = hpvm.create_node @store [%cols, %rows] : !hpvm.node
  hpvm.bind_in %in -> %sq[0] : memref<?x?xf32>
  hpvm.edge %sq[0] -> %st[0] one_to_one
  hpvm.bind_in %out -> %st[1] : memref<?x?xf32>
  %rv = hpvm.create_node @row_value [%rows] : !hpvm.node
  %rt = hpvm.create_node @row_tile [%rows] : !hpvm.node
  hpvm.bind_in %in -> %rv[0] : memref<?x?xf32>
  hpvm.edge %rv[0] -> %rt[0] one_to_one
  hpvm.bind_in %rowsOut -> %rt[1] : memref<?x?xf32>
  hpvm.bind_in %cols -> %rt[2] : index
}
func.func @run(%in: memref<?x?xf32>, %out: memref<?x?xf32>, %rowsOut: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %in, %c0 : memref<?x?xf32>
  %cols = memref.dim %in, %c1 : memref<?x?xf32>
  %g = hpvm.launch @root(%in, %out, %rowsOut, %rows, %cols)
      : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> !hpvm.graph
  hpvm.wait %g
  return
}
