// hpvm-tile-nodes refusals: each is a remark saying why, and the program is
// left as it was; option errors end the pass with a diagnostic.
// RUN: hpvm-opt %s --split-input-file --hpvm-tile-nodes="nodes=node sizes=4" --verify-diagnostics | FileCheck %s
// Without a node list, refused replicated leaves are explained too, and
// non-replicated children and internal nodes are no candidates.
// RUN: hpvm-opt %s --split-input-file --hpvm-tile-nodes="sizes=4" 2>&1 | FileCheck %s --check-prefix=ALL
// ALL-NOT: it is not a leaf
// ALL-NOT: it is not replicated
// ALL-NOT: no hpvm.create_node
// ALL: not tiled: the grid has rank 2 but 1 tile size was given
// ALL: not tiled: the leaf has a barrier
//
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="nodes=node" 2>&1 | FileCheck %s --check-prefix=NOSIZES
// NOSIZES: error: hpvm-tile-nodes: expected tile sizes, as sizes=<x>[,<y>[,<z>]]
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="sizes=4,0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: hpvm-tile-nodes: tile sizes must be positive, found 0
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="sizes=1,2,3,4" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: hpvm-tile-nodes: expected at most 3 tile sizes, found 4
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="sizes=4 scratch=memref<4xf32>" 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: hpvm-tile-nodes: expected an integer, index or float scratch element type, found 'memref<4xf32>'
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="sizes=4 scratch=notatype" 2>&1 | FileCheck %s --check-prefix=TYPE2
// TYPE2: error: hpvm-tile-nodes: expected an integer, index or float scratch element type, found 'notatype'
// RUN: not hpvm-opt %s --split-input-file --hpvm-tile-nodes="nodes=missing sizes=4" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: hpvm-tile-nodes: no node definition named @missing

// CHECK-LABEL: hpvm.internal @node(
hpvm.leaf @leaf() {
  hpvm.return
}
hpvm.internal @node() {
  %c8 = arith.constant 8 : index
  %l = hpvm.create_node @leaf [%c8] : !hpvm.node
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not tiled: it is not a leaf (only replicated leaves are tiled)}}
  %i = hpvm.create_node @node [%n] : !hpvm.node
}

// -----

// CHECK-LABEL: hpvm.leaf @node(
hpvm.leaf @node() {
  hpvm.return
}
hpvm.internal @root() {
  // expected-remark @+1 {{not tiled: it is not replicated (a single instance has nothing to tile)}}
  %l = hpvm.create_node @node : !hpvm.node
}

// -----

// CHECK: hpvm.create_node @node [%{{.*}}, %{{.*}}]
hpvm.leaf @node() {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not tiled: the grid has rank 2 but 1 tile size was given}}
  %l = hpvm.create_node @node [%n, %n] : !hpvm.node
}

// -----

// CHECK: hpvm.create_node @node [
hpvm.leaf @node() {
  hpvm.barrier
  hpvm.return
}
hpvm.internal @root(%n: index) {
  // expected-remark @+1 {{not tiled: the leaf has a barrier (after tiling it would wait only for the instances of one tile)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
}

// -----

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @node(%v: f32) {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  %p = hpvm.create_node @producer [%n] : !hpvm.node
  // expected-remark @+1 {{not tiled: a one_to_one edge feeds it (tiling changes its grid)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
  hpvm.edge %p[0] -> %l[0] one_to_one
}

// -----

hpvm.leaf @node() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @consumer(%v: f32) {
  hpvm.return
}
hpvm.internal @root() {
  %c8 = arith.constant 8 : index
  // expected-remark @+1 {{not tiled: a one_to_one edge leaves it (tiling changes its grid)}}
  %l = hpvm.create_node @node [%c8] : !hpvm.node
  %c = hpvm.create_node @consumer [%c8] : !hpvm.node
  hpvm.edge %l[0] -> %c[0] one_to_one
}

// -----

hpvm.leaf @producer() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @node(%v: f32) {
  hpvm.return
}
hpvm.internal @root(%n: index) {
  %p = hpvm.create_node @producer : !hpvm.node
  // expected-remark @+1 {{not tiled: a streaming edge feeds it (streaming stages are not tiled)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
  hpvm.edge %p[0] -> %l[0] all_to_all streaming
}

// -----

hpvm.leaf @node(%v: f32) {
  hpvm.return
}
hpvm.internal @root(%v: f32, %n: index) {
  // expected-remark @+1 {{not tiled: a streaming bind_in feeds it (streaming stages are not tiled)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
  hpvm.bind_in %v -> %l[0] streaming : f32
}

// -----

hpvm.leaf @node() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root(%n: index) -> (f32) {
  // expected-remark @+1 {{not tiled: the last tile may be partial and the leaf computes an output (its out-of-range instances would produce no value; only inputs passed on are one)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
  hpvm.bind_out %l[0] -> 0
}

// -----

// Constant extent 10 is not a multiple of 4 either.
hpvm.leaf @node() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.internal @root() -> (f32) {
  %c10 = arith.constant 10 : index
  // expected-remark @+1 {{not tiled: the last tile may be partial and the leaf computes an output}}
  %l = hpvm.create_node @node [%c10] : !hpvm.node
  hpvm.bind_out %l[0] -> 0
}

// -----

hpvm.leaf @node(%c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  hpvm.return
^b:
  hpvm.return
}
hpvm.internal @root(%c: i1, %n: index) {
  // expected-remark @+1 {{not tiled: the last tile may be partial and the leaf has several blocks (the guard needs one)}}
  %l = hpvm.create_node @node [%n] : !hpvm.node
  hpvm.bind_in %c -> %l[0] : i1
}

// -----

// The extent comes from an op with two results, which the leaf does not recompute.
hpvm.leaf @node() {
  hpvm.return
}
hpvm.internal @root(%a: index, %b: index) {
  %sum, %overflow = arith.addui_extended %a, %b : index, i1
  // expected-remark @+1 {{not tiled: the extent in dimension 0 is not computed from constants and the parent's inputs}}
  %l = hpvm.create_node @node [%sum] : !hpvm.node
}

// -----

// expected-remark @+1 {{not tiled: no hpvm.create_node instantiates @node}}
hpvm.leaf @node() {
  hpvm.return
}
