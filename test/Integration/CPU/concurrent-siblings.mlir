// Independent siblings run concurrently: each raises its flag, then waits
// (bounded) until it sees the other's. Run one after the other, the first
// would give up and report 0; concurrently both report 1. Their outputs come
// back through the task graph.
// RUN: hpvm-cc %s %S/Inputs/concurrent_siblings_host.c -o %t
// RUN: env HPVM_NUM_THREADS=2 %t | FileCheck %s
// CHECK: both siblings saw each other: 2 of 2

hpvm.leaf @party(%flags: memref<2xi32>, %me: index, %other: index) -> (i32) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %old = memref.atomic_rmw addi %one, %flags[%me] : (i32, memref<2xi32>) -> i32
  %start = arith.constant 0 : i64
  %step = arith.constant 1 : i64
  %limit = arith.constant 1000000000 : i64
  %spins = scf.while (%i = %start) : (i64) -> i64 {
    // An atomic add of 0 is an atomic load the compiler cannot hoist.
    %seen = memref.atomic_rmw addi %zero, %flags[%other] : (i32, memref<2xi32>) -> i32
    %waiting = arith.cmpi eq, %seen, %zero : i32
    %more = arith.cmpi slt, %i, %limit : i64
    %continue = arith.andi %waiting, %more : i1
    scf.condition(%continue) %i : i64
  } do {
  ^bb0(%i: i64):
    %next = arith.addi %i, %step : i64
    scf.yield %next : i64
  }
  %final = memref.atomic_rmw addi %zero, %flags[%other] : (i32, memref<2xi32>) -> i32
  hpvm.return %final : i32
}

hpvm.internal @pair(%flags: memref<2xi32>, %first: index, %second: index) -> (i32, i32) {
  %a = hpvm.create_node @party : !hpvm.node
  %b = hpvm.create_node @party : !hpvm.node
  hpvm.bind_in %flags -> %a[0] : memref<2xi32>
  hpvm.bind_in %first -> %a[1] : index
  hpvm.bind_in %second -> %a[2] : index
  hpvm.bind_in %flags -> %b[0] : memref<2xi32>
  hpvm.bind_in %second -> %b[1] : index
  hpvm.bind_in %first -> %b[2] : index
  hpvm.bind_out %a[0] -> 0
  hpvm.bind_out %b[0] -> 1
}

func.func @run(%flags: memref<2xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = hpvm.launch @pair(%flags, %c0, %c1)
      : (memref<2xi32>, index, index) -> !hpvm.graph
  %x, %y = hpvm.wait %g : i32, i32
  %sum = arith.addi %x, %y : i32
  return %sum : i32
}
