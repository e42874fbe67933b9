// Per-tile sums with scratch memory and a barrier: every tile of 64 instances
// gets scratch memory from an allocation node (once per tile), each instance
// copies its element into it, the barrier waits for the whole tile, and
// instance 0 adds the tile up. The last tile may be partial.

// Scratch memory for one tile; its parent frees it when the tile is done.
hpvm.leaf @tile_scratch() -> (memref<64xf32>) {
  %m = hpvm.alloc() : memref<64xf32>
  hpvm.return %m : memref<64xf32>
}

hpvm.leaf @tile_sum(%x: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                    %sums: memref<?xf32> {hpvm.access = #hpvm.access<out>},
                    %scratch: memref<64xf32>, %n: index)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %lane = hpvm.instance_id x : index
  %tile = hpvm.instance_id x level 1 : index
  %width = hpvm.num_instances x : index
  %base = arith.muli %tile, %width : index
  %g = arith.addi %base, %lane : index
  %inside = arith.cmpi ult, %g, %n : index
  %v = scf.if %inside -> (f32) {
    %e = memref.load %x[%g] : memref<?xf32>
    scf.yield %e : f32
  } else {
    %zero = arith.constant 0.0 : f32
    scf.yield %zero : f32
  }
  memref.store %v, %scratch[%lane] : memref<64xf32>
  hpvm.barrier
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %lane, %c0 : index
  scf.if %first {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %k = %c0 to %width step %c1 iter_args(%acc = %zero) -> (f32) {
      %e = memref.load %scratch[%k] : memref<64xf32>
      %a = arith.addf %acc, %e : f32
      scf.yield %a : f32
    }
    memref.store %sum, %sums[%tile] : memref<?xf32>
  }
  hpvm.return
}

hpvm.internal @tile(%x: memref<?xf32>, %sums: memref<?xf32>, %n: index) {
  %c64 = arith.constant 64 : index
  %scratch = hpvm.create_node @tile_scratch : !hpvm.node
  %lanes = hpvm.create_node @tile_sum [%c64] : !hpvm.node
  hpvm.bind_in %x -> %lanes[0] : memref<?xf32>
  hpvm.bind_in %sums -> %lanes[1] : memref<?xf32>
  hpvm.edge %scratch[0] -> %lanes[2] all_to_all
  hpvm.bind_in %n -> %lanes[3] : index
}

hpvm.internal @tile_sums_root(%x: memref<?xf32>, %sums: memref<?xf32>, %n: index,
                              %tiles: index) {
  %t = hpvm.create_node @tile [%tiles] : !hpvm.node
  hpvm.bind_in %x -> %t[0] : memref<?xf32>
  hpvm.bind_in %sums -> %t[1] : memref<?xf32>
  hpvm.bind_in %n -> %t[2] : index
}

// sums[t] = x[64 t] + ... + x[64 t + 63] (up to the end of x).
func.func @tile_sums(%x: memref<?xf32>, %sums: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %tiles = memref.dim %sums, %c0 : memref<?xf32>
  hpvm.track %x : memref<?xf32>
  hpvm.track %sums : memref<?xf32>
  %g = hpvm.launch @tile_sums_root(%x, %sums, %n, %tiles)
      : (memref<?xf32>, memref<?xf32>, index, index) -> !hpvm.graph
  hpvm.wait %g
  hpvm.request %sums : memref<?xf32>
  hpvm.untrack %x : memref<?xf32>
  hpvm.untrack %sums : memref<?xf32>
  return
}
