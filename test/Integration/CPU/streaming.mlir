// A streaming graph on the CPU: three stages (a replicated scale over one row,
// a single-instance sum, a shift producing the root output) connected by
// streaming edges; 32 items are in flight before the first pop, and the
// outputs come back complete and in order.
// RUN: hpvm-cc %s %S/Inputs/streaming_host.c -o %t
// RUN: %t 32 100 | FileCheck %s
// RUN: %t 1 7 | FileCheck %s --check-prefix=ONE
// CHECK: items=32 n=100 wrong=0
// ONE: items=1 n=7 wrong=0

// scaled[k][i] = in[k][i] * gain
hpvm.leaf @scale(%in: memref<?x?xf32>, %scaled: memref<?x?xf32>, %k: index, %gain: f32)
    -> (memref<?x?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%k, %i] : memref<?x?xf32>
  %s = arith.mulf %v, %gain : f32
  memref.store %s, %scaled[%k, %i] : memref<?x?xf32>
  hpvm.return %scaled : memref<?x?xf32>
}
// The sum of row k.
hpvm.leaf @sum(%scaled: memref<?x?xf32>, %k: index, %n: index) -> (f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %scaled[%k, %i] : memref<?x?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  hpvm.return %total : f32
}
hpvm.leaf @shift(%total: f32, %bias: f32) -> (f32) {
  %r = arith.addf %total, %bias : f32
  hpvm.return %r : f32
}
hpvm.internal @rows(%in: memref<?x?xf32>, %scaled: memref<?x?xf32>, %k: index, %n: index,
                    %gain: f32, %bias: f32) -> (f32) {
  %scale = hpvm.create_node @scale [%n] : !hpvm.node
  %sum = hpvm.create_node @sum : !hpvm.node
  %shift = hpvm.create_node @shift : !hpvm.node
  hpvm.bind_in %in -> %scale[0] streaming : memref<?x?xf32>
  hpvm.bind_in %scaled -> %scale[1] streaming : memref<?x?xf32>
  hpvm.bind_in %k -> %scale[2] streaming : index
  hpvm.bind_in %gain -> %scale[3] streaming : f32
  hpvm.edge %scale[0] -> %sum[0] all_to_all streaming
  hpvm.bind_in %k -> %sum[1] streaming : index
  hpvm.bind_in %n -> %sum[2] streaming : index
  hpvm.edge %sum[0] -> %shift[0] all_to_all streaming
  hpvm.bind_in %bias -> %shift[1] streaming : f32
  hpvm.bind_out %shift[0] -> 0 streaming
}

// Pushes rows 0..items-1 (row k with bias k), then pops every result into out.
func.func @run(%in: memref<?x?xf32>, %scaled: memref<?x?xf32>, %out: memref<?xf32>,
               %items: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %gain = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %s = hpvm.launch @rows(%in, %scaled, %c0, %n, %gain, %zero) streaming
      : (memref<?x?xf32>, memref<?x?xf32>, index, index, f32, f32) -> !hpvm.graph
  scf.for %k = %c1 to %items step %c1 {
    %k64 = arith.index_cast %k : index to i64
    %bias = arith.sitofp %k64 : i64 to f32
    hpvm.push %s(%in, %scaled, %k, %n, %gain, %bias)
        : memref<?x?xf32>, memref<?x?xf32>, index, index, f32, f32
  }
  scf.for %k = %c0 to %items step %c1 {
    %r = hpvm.pop %s : f32
    memref.store %r, %out[%k] : memref<?xf32>
  }
  hpvm.wait %s
  return
}
