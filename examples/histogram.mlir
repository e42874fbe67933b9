// A 256-bin histogram of bytes: one instance per byte, bins updated with
// atomics (memref.atomic_rmw is atomic across all instances of the leaf).

hpvm.leaf @count(%data: memref<?xi8> {hpvm.access = #hpvm.access<in>},
                 %bins: memref<256xi32> {hpvm.access = #hpvm.access<inout>}) {
  %i = hpvm.instance_id x : index
  %byte = memref.load %data[%i] : memref<?xi8>
  %wide = arith.extui %byte : i8 to i32
  %bin = arith.index_cast %wide : i32 to index
  %one = arith.constant 1 : i32
  %old = memref.atomic_rmw addi %one, %bins[%bin] : (i32, memref<256xi32>) -> i32
  hpvm.return
}

hpvm.internal @histogram_root(%data: memref<?xi8>, %bins: memref<256xi32>, %n: index) {
  %counts = hpvm.create_node @count [%n] : !hpvm.node
  hpvm.bind_in %data -> %counts[0] : memref<?xi8>
  hpvm.bind_in %bins -> %counts[1] : memref<256xi32>
}

func.func @histogram(%data: memref<?xi8>, %bins: memref<256xi32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %data, %c0 : memref<?xi8>
  hpvm.track %data : memref<?xi8>
  hpvm.track %bins : memref<256xi32>
  %g = hpvm.launch @histogram_root(%data, %bins, %n)
      : (memref<?xi8>, memref<256xi32>, index) -> !hpvm.graph
  hpvm.wait %g
  hpvm.request %bins : memref<256xi32>
  hpvm.untrack %data : memref<?xi8>
  hpvm.untrack %bins : memref<256xi32>
  return
}
