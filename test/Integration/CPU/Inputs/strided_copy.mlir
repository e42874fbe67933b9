// A leaf that copies a strided window (a column of a row-major matrix) into a row of
// another: the transpose, one memref.copy per instance (strided-copies.test).
hpvm.leaf @column(%a: memref<?x?xf32> {hpvm.access = #hpvm.access<in>},
                  %c: memref<?x?xf32> {hpvm.access = #hpvm.access<out>}) {
  %j = hpvm.instance_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %src = memref.subview %a[0, %j] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
  %dst = memref.subview %c[%j, 0] [1, %n] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %src, %dst : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  hpvm.return
}

hpvm.internal @root(%a: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index) {
  %leaf = hpvm.create_node @column [%m] : !hpvm.node
  hpvm.bind_in %a -> %leaf[0] : memref<?x?xf32>
  hpvm.bind_in %c -> %leaf[1] : memref<?x?xf32>
}

func.func @transpose(%a: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index) {
  %g = hpvm.launch @root(%a, %c, %m) : (memref<?x?xf32>, memref<?x?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}
