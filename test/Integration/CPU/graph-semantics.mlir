// Graph semantics on the CPU: a 3-level hierarchy with level-1 instance ids,
// a replicated leaf whose output leaves through bind_out and an all_to_all
// edge, a leaf with two outputs, root outputs read back after wait, repeated
// launches, and a runtime error reported at its source line.
// RUN: hpvm-cc %s %S/Inputs/graph_semantics_host.c -o %t
// RUN: %t 1000 | FileCheck %s
// RUN: %t 5 | FileCheck %s --check-prefix=SMALL
// RUN: not %t 7 twice 2>&1 | FileCheck %s --check-prefix=ERROR
// CHECK: n=1000 launches=2 count=2000 sum=499500 data=ok out=ok
// SMALL: n=5 launches=2 count=10 sum=10 data=ok out=ok
// ERROR: hpvm: error: {{.*}}graph-semantics.mlir:[[@LINE+69]]:5: hpvm.track of a buffer: ALREADY_EXISTS

// data[g] = g for the global index g = tile * 8 + lane (the last tile is partial).
hpvm.leaf @fill_leaf(%data: memref<?xf32>, %n: index) -> (memref<?xf32>) {
  %lane = hpvm.instance_id x : index
  %tile = hpvm.instance_id x level 1 : index
  %width = hpvm.num_instances x : index
  %base = arith.muli %tile, %width : index
  %g = arith.addi %base, %lane : index
  %inside = arith.cmpi ult, %g, %n : index
  scf.if %inside {
    %i = arith.index_cast %g : index to i64
    %f = arith.sitofp %i : i64 to f32
    memref.store %f, %data[%g] : memref<?xf32>
  }
  hpvm.return %data : memref<?xf32>
}
hpvm.internal @fill_tile(%data: memref<?xf32>, %n: index) -> (memref<?xf32>) {
  %c8 = arith.constant 8 : index
  %lanes = hpvm.create_node @fill_leaf [%c8] : !hpvm.node
  hpvm.bind_in %data -> %lanes[0] : memref<?xf32>
  hpvm.bind_in %n -> %lanes[1] : index
  hpvm.bind_out %lanes[0] -> 0
}
// Two outputs: the sum and the count of the filled buffer.
hpvm.leaf @reduce(%data: memref<?xf32>, %n: index) -> (f32, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %data[%i] : memref<?xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %count = arith.index_cast %n : index to i64
  hpvm.return %sum, %count : f32, i64
}
hpvm.leaf @offset(%data: memref<?xf32>, %out: memref<?xf32>, %sum: f32) {
  %i = hpvm.instance_id x : index
  %v = memref.load %data[%i] : memref<?xf32>
  %r = arith.addf %v, %sum : f32
  memref.store %r, %out[%i] : memref<?xf32>
  hpvm.return
}
hpvm.internal @root(%data: memref<?xf32>, %out: memref<?xf32>, %n: index, %tiles: index)
    -> (i64, f32) {
  %fill = hpvm.create_node @fill_tile [%tiles] : !hpvm.node
  %reduce = hpvm.create_node @reduce : !hpvm.node
  %offset = hpvm.create_node @offset [%n] : !hpvm.node
  hpvm.bind_in %data -> %fill[0] : memref<?xf32>
  hpvm.bind_in %n -> %fill[1] : index
  hpvm.edge %fill[0] -> %reduce[0] all_to_all
  hpvm.bind_in %n -> %reduce[1] : index
  hpvm.bind_in %data -> %offset[0] : memref<?xf32>
  hpvm.bind_in %out -> %offset[1] : memref<?xf32>
  hpvm.edge %reduce[0] -> %offset[2] all_to_all
  hpvm.bind_out %reduce[1] -> 0
  hpvm.bind_out %reduce[0] -> 1
}

// Launches the graph twice and returns the sum of both counts; *sum gets the last sum.
func.func @run(%data: memref<?xf32>, %out: memref<?xf32>, %n: index, %sum: memref<1xf32>,
               %trackTwice: i1) -> i64 {
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %n7 = arith.addi %n, %c7 : index
  %tiles = arith.divui %n7, %c8 : index
  hpvm.track %data : memref<?xf32>
  scf.if %trackTwice {
    hpvm.track %data : memref<?xf32>
  }
  %g1 = hpvm.launch @root(%data, %out, %n, %tiles)
      : (memref<?xf32>, memref<?xf32>, index, index) -> !hpvm.graph
  %count1, %sum1 = hpvm.wait %g1 : i64, f32
  %g2 = hpvm.launch @root(%data, %out, %n, %tiles)
      : (memref<?xf32>, memref<?xf32>, index, index) -> !hpvm.graph
  %count2, %sum2 = hpvm.wait %g2 : i64, f32
  hpvm.request %data : memref<?xf32>
  hpvm.untrack %data : memref<?xf32>
  %c0 = arith.constant 0 : index
  memref.store %sum2, %sum[%c0] : memref<1xf32>
  %total = arith.addi %count1, %count2 : i64
  return %total : i64
}
