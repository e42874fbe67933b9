// sgemm C = A x B as a 2-level graph: a grid of tiles, each a grid of 64x4
// instances (64 columns of 4 rows); a leaf instance finds its element from its
// own and its parent tile's instance ids. Wide tiles keep each row of A in
// cache across many instances (docs/Performance.md measures the difference).

hpvm.leaf @mm_leaf(%A: memref<?x?xf32> {hpvm.access = #hpvm.access<in>},
                   %B: memref<?x?xf32> {hpvm.access = #hpvm.access<in>},
                   %C: memref<?x?xf32> {hpvm.access = #hpvm.access<out>})
    attributes {hpvm.targets = [#hpvm.target<gpu>, #hpvm.target<cpu>]} {
  %lx = hpvm.instance_id x : index
  %ly = hpvm.instance_id y : index
  %tx = hpvm.num_instances x : index
  %ty = hpvm.num_instances y : index
  %gx = hpvm.instance_id x level 1 : index
  %gy = hpvm.instance_id y level 1 : index
  // row = gy * ty + ly, in arith: an affine_map cannot say it (a product of
  // two dimensions is not affine).
  %rowBase = arith.muli %gy, %ty : index
  %row = arith.addi %rowBase, %ly : index
  %colBase = arith.muli %gx, %tx : index
  %col = arith.addi %colBase, %lx : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = memref.dim %A, %c1 : memref<?x?xf32>
  %m = memref.dim %C, %c0 : memref<?x?xf32>
  %n = memref.dim %C, %c1 : memref<?x?xf32>
  %inRows = arith.cmpi ult, %row, %m : index
  %inCols = arith.cmpi ult, %col, %n : index
  %inside = arith.andi %inRows, %inCols : i1
  scf.if %inside {
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%row, %i] : memref<?x?xf32>
      %b = memref.load %B[%i, %col] : memref<?x?xf32>
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      scf.yield %s : f32
    }
    memref.store %sum, %C[%row, %col] : memref<?x?xf32>
  }
  hpvm.return
}

hpvm.internal @mm_tile(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c64 = arith.constant 64 : index
  %c4 = arith.constant 4 : index
  %leaf = hpvm.create_node @mm_leaf [%c64, %c4] : !hpvm.node
  hpvm.bind_in %A -> %leaf[0] : memref<?x?xf32>
  hpvm.bind_in %B -> %leaf[1] : memref<?x?xf32>
  hpvm.bind_in %C -> %leaf[2] : memref<?x?xf32>
}

hpvm.internal @mm_root(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>,
                       %tilesX: index, %tilesY: index) {
  %tiles = hpvm.create_node @mm_tile [%tilesX, %tilesY] : !hpvm.node
  hpvm.bind_in %A -> %tiles[0] : memref<?x?xf32>
  hpvm.bind_in %B -> %tiles[1] : memref<?x?xf32>
  hpvm.bind_in %C -> %tiles[2] : memref<?x?xf32>
}

func.func @sgemm(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %m = memref.dim %C, %c0 : memref<?x?xf32>
  %n = memref.dim %C, %c1 : memref<?x?xf32>
  // ceil(n / 64) x ceil(m / 4) tiles.
  %n63 = arith.addi %n, %c63 : index
  %m3 = arith.addi %m, %c3 : index
  %tilesX = arith.divui %n63, %c64 : index
  %tilesY = arith.divui %m3, %c4 : index
  hpvm.track %A : memref<?x?xf32>
  hpvm.track %B : memref<?x?xf32>
  hpvm.track %C : memref<?x?xf32>
  %g = hpvm.launch @mm_root(%A, %B, %C, %tilesX, %tilesY)
      : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> !hpvm.graph
  hpvm.wait %g
  hpvm.request %C : memref<?x?xf32>
  hpvm.untrack %A : memref<?x?xf32>
  hpvm.untrack %B : memref<?x?xf32>
  hpvm.untrack %C : memref<?x?xf32>
  return
}
