// Vector add: a 1-D leaf under a root, launched from host code with memory tracking.

hpvm.leaf @vadd_leaf(%a: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                     %b: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                     %c: memref<?xf32> {hpvm.access = #hpvm.access<out>})
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %x = memref.load %a[%i] : memref<?xf32>
  %y = memref.load %b[%i] : memref<?xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %c[%i] : memref<?xf32>
  hpvm.return
}

hpvm.internal @vadd_root(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>,
                         %n: index) {
  %leaf = hpvm.create_node @vadd_leaf [%n] : !hpvm.node
  hpvm.bind_in %a -> %leaf[0] : memref<?xf32>
  hpvm.bind_in %b -> %leaf[1] : memref<?xf32>
  hpvm.bind_in %c -> %leaf[2] : memref<?xf32>
}

func.func @vadd(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  hpvm.track %a : memref<?xf32>
  hpvm.track %b : memref<?xf32>
  hpvm.track %c : memref<?xf32>
  %g = hpvm.launch @vadd_root(%a, %b, %c, %n)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  hpvm.request %c : memref<?xf32>
  hpvm.untrack %a : memref<?xf32>
  hpvm.untrack %b : memref<?xf32>
  hpvm.untrack %c : memref<?xf32>
  return
}
