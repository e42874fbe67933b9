// Replicated siblings run as grid nodes of one task graph (hpvm_rt_graph_add_grid, no task
// function each): two leaves reading the same values share one range context, a 2-D grid and
// a leaf with an output (published by its first instance) come back right, every grid runs
// once per launch, and HPVM_TRACE names each node as it runs.
// RUN: hpvm-cc %s %S/Inputs/sibling_grids_host.c -o %t
// RUN: env HPVM_TRACE=1 HPVM_NUM_THREADS=2 %t 2>&1 | FileCheck %s
// RUN: env HPVM_NUM_THREADS=1 %t | FileCheck %s --check-prefix=RESULT
// CHECK-DAG: hpvm-trace: double on cpu
// CHECK-DAG: hpvm-trace: increment on cpu
// CHECK-DAG: hpvm-trace: outer on cpu
// CHECK-DAG: hpvm-trace: total on cpu
// CHECK: sibling grids: ok
// RESULT: sibling grids: ok (total 4950, 3 launches)

// out[0][i] = 2 in[i]
hpvm.leaf @double(%in: memref<?xf32>, %out: memref<?x?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%i] : memref<?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %out[%c0, %i] : memref<?x?xf32>
  hpvm.return
}

// out[1][i] = in[i] + 1: the same inputs as @double, so the same range context
hpvm.leaf @increment(%in: memref<?xf32>, %out: memref<?x?xf32>, %n: index) {
  %i = hpvm.instance_id x : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %v = memref.load %in[%i] : memref<?xf32>
  %w = arith.addf %v, %one : f32
  memref.store %w, %out[%c1, %i] : memref<?x?xf32>
  hpvm.return
}

// table[y][x] = x * y over a 2-D grid
hpvm.leaf @outer(%table: memref<?x?xf32>) {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %p = arith.muli %x, %y : index
  %i = arith.index_cast %p : index to i64
  %f = arith.sitofp %i : i64 to f32
  memref.store %f, %table[%y, %x] : memref<?x?xf32>
  hpvm.return
}

// Every instance sums the whole input: the node's output, equal in all of them.
hpvm.leaf @total(%in: memref<?xf32>, %n: index) -> (f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %in[%k] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  hpvm.return %sum : f32
}

hpvm.internal @siblings(%in: memref<?xf32>, %out: memref<?x?xf32>, %table: memref<?x?xf32>,
                        %n: index, %w: index, %h: index) -> (f32) {
  %d = hpvm.create_node @double [%n] : !hpvm.node
  %i = hpvm.create_node @increment [%n] : !hpvm.node
  %o = hpvm.create_node @outer [%w, %h] : !hpvm.node
  %t = hpvm.create_node @total [%n] : !hpvm.node
  hpvm.bind_in %in -> %d[0] : memref<?xf32>
  hpvm.bind_in %out -> %d[1] : memref<?x?xf32>
  hpvm.bind_in %n -> %d[2] : index
  hpvm.bind_in %in -> %i[0] : memref<?xf32>
  hpvm.bind_in %out -> %i[1] : memref<?x?xf32>
  hpvm.bind_in %n -> %i[2] : index
  hpvm.bind_in %table -> %o[0] : memref<?x?xf32>
  hpvm.bind_in %in -> %t[0] : memref<?xf32>
  hpvm.bind_in %n -> %t[1] : index
  hpvm.bind_out %t[0] -> 0
}

func.func @run(%in: memref<?xf32>, %out: memref<?x?xf32>, %table: memref<?x?xf32>,
               %n: index, %w: index, %h: index) -> f32 {
  %g = hpvm.launch @siblings(%in, %out, %table, %n, %w, %h)
      : (memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index, index) -> !hpvm.graph
  %s = hpvm.wait %g : f32
  return %s : f32
}
