// Divergent instances for the lock-step (vector) execution of tiles: varying
// branches with results, divisions under masks, gathers and scatters, a loop
// carrying per-instance values, uniform loads and branches. Tiled by the
// test's RUN lines, run with and without vectorize-tiles.
hpvm.leaf @mix_leaf(%in: memref<?xf32> {hpvm.access = #hpvm.access<in>},
               %idx: memref<?xi32> {hpvm.access = #hpvm.access<in>},
               %out: memref<?xf32> {hpvm.access = #hpvm.access<out>},
               %scattered: memref<?xf32> {hpvm.access = #hpvm.access<out>},
               %n: index) {
  %i = hpvm.instance_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %first = memref.load %in[%c0] : memref<?xf32>
  %v = memref.load %in[%i] : memref<?xf32>
  %m3 = arith.remui %i, %c3 : index
  %every3 = arith.cmpi eq, %m3, %c0 : index
  %r = scf.if %every3 -> (f32) {
    // Gather through an index array.
    %k32 = memref.load %idx[%i] : memref<?xi32>
    %k = arith.index_cast %k32 : i32 to index
    %g = memref.load %in[%k] : memref<?xf32>
    %s = arith.addf %g, %first : f32
    scf.yield %s : f32
  } else {
    // A division whose divisor is 0 only in lanes that do not run it.
    %m5 = arith.remui %i, %c5 : index
    %isZero = arith.cmpi eq, %m5, %c0 : index
    %q = scf.if %isZero -> (index) {
      scf.yield %c7 : index
    } else {
      %d = arith.divui %n, %m5 : index
      scf.yield %d : index
    }
    %q32 = arith.index_cast %q : index to i32
    %qf = arith.sitofp %q32 : i32 to f32
    %t = arith.mulf %qf, %v : f32
    scf.yield %t : f32
  }
  // A loop carrying a per-instance value, with a uniform branch inside.
  %trips = arith.remui %n, %c7 : index
  %acc = scf.for %j = %c0 to %trips step %c1 iter_args(%a = %r) -> (f32) {
    %even = arith.remui %j, %c3 : index
    %isFirst = arith.cmpi eq, %even, %c0 : index
    %next = scf.if %isFirst -> (f32) {
      %h = arith.constant 0.5 : f32
      %x = arith.mulf %a, %h : f32
      scf.yield %x : f32
    } else {
      %x = arith.addf %a, %v : f32
      scf.yield %x : f32
    }
    scf.yield %next : f32
  }
  memref.store %acc, %out[%i] : memref<?xf32>
  // Scatter to a permutation of the elements (7 does not divide n).
  %p = arith.muli %i, %c7 : index
  %target = arith.remui %p, %n : index
  memref.store %v, %scattered[%target] : memref<?xf32>
  hpvm.return
}

hpvm.internal @mix_root(%in: memref<?xf32>, %idx: memref<?xi32>, %out: memref<?xf32>,
                        %scattered: memref<?xf32>, %n: index) {
  %node = hpvm.create_node @mix_leaf [%n] : !hpvm.node
  hpvm.bind_in %in -> %node[0] : memref<?xf32>
  hpvm.bind_in %idx -> %node[1] : memref<?xi32>
  hpvm.bind_in %out -> %node[2] : memref<?xf32>
  hpvm.bind_in %scattered -> %node[3] : memref<?xf32>
  hpvm.bind_in %n -> %node[4] : index
}

func.func @mix(%in: memref<?xf32>, %idx: memref<?xi32>, %out: memref<?xf32>,
               %scattered: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  %g = hpvm.launch @mix_root(%in, %idx, %out, %scattered, %n)
      : (memref<?xf32>, memref<?xi32>, memref<?xf32>, memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}
