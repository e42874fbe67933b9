// hpvm-check-replication warns where a replicated node's instances cannot
// differ, and stays silent where something lets them differ.
// RUN: hpvm-opt %s --split-input-file --hpvm-check-replication --verify-diagnostics

// The release's spmv shape: a 1-D node whose leaf never asks which instance
// it is; every instance computes the whole product.
// expected-note @+1 {{index the work by the instance id}}
hpvm.leaf @spmv(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %y[%i] : memref<?xf32>
  }
  hpvm.return
}
hpvm.internal @root(%x: memref<?xf32>, %y: memref<?xf32>, %n: index, %k: index) {
  // expected-warning @+1 {{@spmv is replicated over 1 dimension, but its instances cannot differ: nothing in it reads an instance id or count of this level}}
  %s = hpvm.create_node @spmv [%k] : !hpvm.node
  hpvm.bind_in %x -> %s[0] : memref<?xf32>
  hpvm.bind_in %y -> %s[1] : memref<?xf32>
  hpvm.bind_in %n -> %s[2] : index
}

// -----

// A grid of tiles whose leaf reads only its own (level 0) ids: the tiles all
// repeat the same tile; the leaf's own grid is fine.
// expected-note @+1 {{index the work by the instance id}}
hpvm.internal @tile(%a: memref<?xf32>) {
  %c4 = arith.constant 4 : index
  %l = hpvm.create_node @point [%c4] : !hpvm.node
  hpvm.bind_in %a -> %l[0] : memref<?xf32>
}
hpvm.leaf @point(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  memref.store %v, %a[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%a: memref<?xf32>, %t: index) {
  // expected-warning @+1 {{@tile is replicated over 2 dimensions, but its instances cannot differ: nothing in it or below it reads an instance id or count of this level}}
  %g = hpvm.create_node @tile [%t, %t] : !hpvm.node
  hpvm.bind_in %a -> %g[0] : memref<?xf32>
}

// -----

// Silent: the leaf reads its parent's id (level 1) below a replicated tile.
hpvm.internal @tile(%a: memref<?xf32>) {
  %c4 = arith.constant 4 : index
  %l = hpvm.create_node @point [%c4] : !hpvm.node
  hpvm.bind_in %a -> %l[0] : memref<?xf32>
}
hpvm.leaf @point(%a: memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %t = hpvm.instance_id x level 1 : index
  %j = arith.addi %i, %t : index
  %v = memref.load %a[%j] : memref<?xf32>
  memref.store %v, %a[%j] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%a: memref<?xf32>, %t: index) {
  %g = hpvm.create_node @tile [%t] : !hpvm.node
  hpvm.bind_in %a -> %g[0] : memref<?xf32>
}

// -----

// Silent: an atomic ticket makes each instance's work different.
hpvm.leaf @claim(%counter: memref<1xi32>, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %ticket = memref.atomic_rmw addi %one, %counter[%c0] : (i32, memref<1xi32>) -> i32
  %i = arith.index_cast %ticket : i32 to index
  memref.store %ticket, %out[%i] : memref<?xi32>
  hpvm.return
}
hpvm.internal @root(%counter: memref<1xi32>, %out: memref<?xi32>, %n: index) {
  %c = hpvm.create_node @claim [%n] : !hpvm.node
  hpvm.bind_in %counter -> %c[0] : memref<1xi32>
  hpvm.bind_in %out -> %c[1] : memref<?xi32>
}

// -----

// Silent: each instance receives its own value over a one_to_one edge.
hpvm.leaf @make() -> (f32) {
  %i = hpvm.instance_id x : index
  %j = arith.index_cast %i : index to i32
  %f = arith.sitofp %j : i32 to f32
  hpvm.return %f : f32
}
hpvm.leaf @use(%v: f32, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  memref.store %v, %out[%c0] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%out: memref<?xf32>, %n: index) {
  %m = hpvm.create_node @make [%n] : !hpvm.node
  %u = hpvm.create_node @use [%n] : !hpvm.node
  hpvm.edge %m[0] -> %u[0] one_to_one
  hpvm.bind_in %out -> %u[1] : memref<?xf32>
}

// -----

// Silent: a single instance, and a call that may tell instances apart.
hpvm.leaf @once(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf32>
  memref.store %v, %a[%c0] : memref<?xf32>
  hpvm.return
}
hpvm.leaf @draw(%a: memref<?xf32>) {
  %r = func.call @rand() : () -> i32
  %i = arith.index_cast %r : i32 to index
  %c = arith.constant 1.0 : f32
  memref.store %c, %a[%i] : memref<?xf32>
  hpvm.return
}
func.func private @rand() -> i32
hpvm.internal @root(%a: memref<?xf32>, %n: index) {
  %o = hpvm.create_node @once : !hpvm.node
  %d = hpvm.create_node @draw [%n] : !hpvm.node
  hpvm.bind_in %a -> %o[0] : memref<?xf32>
  hpvm.bind_in %a -> %d[0] : memref<?xf32>
}
