// A streaming pipeline: each pushed frame is scaled one pixel per instance,
// then reduced per tile with scratch memory and a barrier, then summed. Edges
// carry buffers and scalars; the root returns the frame sum of every item.
// Items in flight at the same time get their own intermediate buffers.

// Stage 1: out[i] = in[i] * gain, one instance per pixel.
hpvm.leaf @scale(%in: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                 %out: memref<?xf32> {hpvm.access = #hpvm.access<out>},
                 %gain: f32) -> (memref<?xf32>) {
  %i = hpvm.instance_id x : index
  %v = memref.load %in[%i] : memref<?xf32>
  %s = arith.mulf %v, %gain : f32
  memref.store %s, %out[%i] : memref<?xf32>
  hpvm.return %out : memref<?xf32>
}

// Scratch memory for one tile of 64 instances.
hpvm.leaf @tile_scratch() -> (memref<64xf32>) {
  %m = hpvm.alloc() : memref<64xf32>
  hpvm.return %m : memref<64xf32>
}

// Reduction of a 64-element tile; instance 0 writes the tile's sum. Every
// instance outputs the same buffer, which orders the consumer after the tile.
hpvm.leaf @tile_reduce(%in: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                       %partial: memref<?xf32> {hpvm.access = #hpvm.access<out>},
                       %scratch: memref<64xf32>) -> (memref<?xf32>) {
  %l = hpvm.instance_id x : index
  %t = hpvm.instance_id x level 1 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %t, %c64 : index
  %g = arith.addi %base, %l : index
  %v = memref.load %in[%g] : memref<?xf32>
  memref.store %v, %scratch[%l] : memref<64xf32>
  hpvm.barrier
  %c0 = arith.constant 0 : index
  %isFirst = arith.cmpi eq, %l, %c0 : index
  scf.if %isFirst {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %e = memref.load %scratch[%k] : memref<64xf32>
      %a = arith.addf %acc, %e : f32
      scf.yield %a : f32
    }
    memref.store %sum, %partial[%t] : memref<?xf32>
  }
  hpvm.return %partial : memref<?xf32>
}

hpvm.internal @reduce_tile(%in: memref<?xf32>, %partial: memref<?xf32>)
    -> (memref<?xf32>) {
  %c64 = arith.constant 64 : index
  %scratch = hpvm.create_node @tile_scratch : !hpvm.node
  %reduce = hpvm.create_node @tile_reduce [%c64] : !hpvm.node
  hpvm.bind_in %in -> %reduce[0] : memref<?xf32>
  hpvm.bind_in %partial -> %reduce[1] : memref<?xf32>
  hpvm.edge %scratch[0] -> %reduce[2] all_to_all
  hpvm.bind_out %reduce[0] -> 0
}

// Stage 3: the sum of the per-tile partial sums.
hpvm.leaf @total(%partial: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                 %tiles: index) -> (f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %k = %c0 to %tiles step %c1 iter_args(%acc = %zero) -> (f32) {
    %e = memref.load %partial[%k] : memref<?xf32>
    %a = arith.addf %acc, %e : f32
    scf.yield %a : f32
  }
  hpvm.return %sum : f32
}

hpvm.internal @frame_sum(%frame: memref<?xf32>, %scaled: memref<?xf32>,
                         %partial: memref<?xf32>, %gain: f32, %pixels: index,
                         %tiles: index) -> (f32) {
  %scale = hpvm.create_node @scale [%pixels] : !hpvm.node
  %reduce = hpvm.create_node @reduce_tile [%tiles] : !hpvm.node
  %total = hpvm.create_node @total : !hpvm.node
  hpvm.bind_in %frame -> %scale[0] streaming : memref<?xf32>
  hpvm.bind_in %scaled -> %scale[1] streaming : memref<?xf32>
  hpvm.bind_in %gain -> %scale[2] streaming : f32
  hpvm.edge %scale[0] -> %reduce[0] all_to_all streaming
  hpvm.bind_in %partial -> %reduce[1] streaming : memref<?xf32>
  hpvm.edge %reduce[0] -> %total[0] all_to_all streaming
  hpvm.bind_in %tiles -> %total[1] : index
  hpvm.bind_out %total[0] -> 0 streaming
}

func.func @run(%f0: memref<?xf32>, %f1: memref<?xf32>,
               %scaled0: memref<?xf32>, %scaled1: memref<?xf32>,
               %partial0: memref<?xf32>, %partial1: memref<?xf32>,
               %pixels: index, %tiles: index) -> (f32, f32) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %s = hpvm.launch @frame_sum(%f0, %scaled0, %partial0, %one, %pixels, %tiles) streaming
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>, f32, index, index) -> !hpvm.graph
  hpvm.push %s(%f1, %scaled1, %partial1, %two, %pixels, %tiles)
      : memref<?xf32>, memref<?xf32>, memref<?xf32>, f32, index, index
  %sum0 = hpvm.pop %s : f32
  %sum1 = hpvm.pop %s : f32
  hpvm.wait %s
  return %sum0, %sum1 : f32, f32
}
