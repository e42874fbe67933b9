// The DFG analysis (DataflowGraph, NodeHierarchy): topological order with
// program-order ties, levels of independent siblings, paths, hierarchy depth
// and the uses of each node at its own and its parent's level.
// RUN: hpvm-opt %s --hpvm-test-print-dfg -o /dev/null | FileCheck %s

hpvm.leaf @src() -> (f32, f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f, %f : f32, f32
}
hpvm.leaf @work(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @join(%a: f32, %b: f32) -> (f32) {
  hpvm.return %a : f32
}
hpvm.leaf @alone() {
  hpvm.return
}

// A diamond src -> {work, work} -> join, plus an independent sibling listed
// first in program order but placed by the order where it is ready.
hpvm.internal @diamond(%n: index) -> (f32) {
  %j = hpvm.create_node @join : !hpvm.node
  %s = hpvm.create_node @src : !hpvm.node
  %a = hpvm.create_node @alone [%n] : !hpvm.node
  %l = hpvm.create_node @work : !hpvm.node
  %r = hpvm.create_node @work : !hpvm.node
  hpvm.edge %s[0] -> %l[0] all_to_all
  hpvm.edge %s[1] -> %r[0] all_to_all
  hpvm.edge %l[0] -> %j[0] all_to_all
  hpvm.edge %r[0] -> %j[1] all_to_all
  hpvm.bind_out %j[0] -> 0
}

// A diamond with fan-out: one output port of @fsrc feeds both @fwork
// children and the second @fjoin (a skip connection); the order, levels and
// paths are those of a graph with one edge per consumer.
hpvm.leaf @fsrc() -> (f32) {
  %f = arith.constant 1.0 : f32
  hpvm.return %f : f32
}
hpvm.leaf @fwork(%x: f32) -> (f32) {
  hpvm.return %x : f32
}
hpvm.leaf @fjoin(%a: f32, %b: f32) -> (f32) {
  hpvm.return %a : f32
}
hpvm.internal @fan_out() -> (f32) {
  %s = hpvm.create_node @fsrc : !hpvm.node
  %l = hpvm.create_node @fwork : !hpvm.node
  %r = hpvm.create_node @fwork : !hpvm.node
  %j = hpvm.create_node @fjoin : !hpvm.node
  %k = hpvm.create_node @fjoin : !hpvm.node
  hpvm.edge %s[0] -> %l[0] all_to_all
  hpvm.edge %s[0] -> %r[0] all_to_all
  hpvm.edge %l[0] -> %j[0] all_to_all
  hpvm.edge %r[0] -> %j[1] all_to_all
  hpvm.edge %j[0] -> %k[0] all_to_all
  hpvm.edge %s[0] -> %k[1] all_to_all
  hpvm.bind_out %k[0] -> 0
}

// Two levels above @work: @diamond used as a 2-D tile and launched once.
hpvm.internal @outer(%n: index) -> (f32) {
  %c2 = arith.constant 2 : index
  %d = hpvm.create_node @diamond [%c2, %c2] : !hpvm.node
  hpvm.bind_in %n -> %d[0] : index
  hpvm.bind_out %d[0] -> 0
}

func.func @host(%n: index) -> (f32, f32) {
  %g = hpvm.launch @outer(%n) : (index) -> !hpvm.graph
  %r = hpvm.wait %g : f32
  %h = hpvm.launch @diamond(%n) : (index) -> !hpvm.graph
  %q = hpvm.wait %h : f32
  return %r, %q : f32, f32
}

// CHECK: node @src: leaf, depth 1, uses: create_node(rank 0) in @diamond, parents' uses: hpvm.create_node(rank 2) hpvm.launch(rank 0)
// CHECK: node @work: leaf, depth 1, uses: create_node(rank 0) in @diamond create_node(rank 0) in @diamond, parents' uses: hpvm.create_node(rank 2) hpvm.launch(rank 0)
// CHECK: node @alone: leaf, depth 1, uses: create_node(rank 1) in @diamond,
// CHECK: node @diamond: internal, depth 2, uses: create_node(rank 2) in @outer launch, parents' uses: hpvm.launch(rank 0)
// CHECK-NEXT: order: @src @alone @work (child #3) @work (child #4) @join
// CHECK-NEXT: levels: @join=2 @src=0 @alone=0 @work (child #3)=1 @work (child #4)=1
// CHECK-NEXT: paths: @src->@join @src->@work (child #3) @src->@work (child #4) @work (child #3)->@join @work (child #4)->@join
// CHECK: node @fan_out: internal, depth 2, uses:, parents' uses:
// CHECK-NEXT: order: @fsrc @fwork (child #1) @fwork (child #2) @fjoin (child #3) @fjoin (child #4)
// CHECK-NEXT: levels: @fsrc=0 @fwork (child #1)=1 @fwork (child #2)=1 @fjoin (child #3)=2 @fjoin (child #4)=3
// CHECK-NEXT: paths: @fsrc->@fwork (child #1) @fsrc->@fwork (child #2) @fsrc->@fjoin (child #3) @fsrc->@fjoin (child #4) @fwork (child #1)->@fjoin (child #3) @fwork (child #1)->@fjoin (child #4) @fwork (child #2)->@fjoin (child #3) @fwork (child #2)->@fjoin (child #4) @fjoin (child #3)->@fjoin (child #4)
// CHECK: node @outer: internal, depth 3, uses: launch, parents' uses:{{$}}
// CHECK-NEXT: order: @diamond
// CHECK-NEXT: levels: @diamond=0
// CHECK-NEXT: paths:{{$}}
