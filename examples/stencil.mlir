// A 3-D 7-point Jacobi stencil (Parboil's stencil): one instance per grid
// point, launched once per iteration from a host loop that swaps the buffers.
// Layout: index = i + nx * (j + ny * k), x fastest; boundary points are copied.

hpvm.leaf @stencil_point(%in: memref<?xf32> {hpvm.access = #hpvm.access<in>},
                         %out: memref<?xf32> {hpvm.access = #hpvm.access<out>},
                         %nx: index, %ny: index, %nz: index)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %j = hpvm.instance_id y : index
  %k = hpvm.instance_id z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sy = arith.muli %nx, %ny : index
  %jk = arith.muli %k, %ny : index
  %row = arith.addi %jk, %j : index
  %rowStart = arith.muli %row, %nx : index
  %c = arith.addi %rowStart, %i : index
  %v = memref.load %in[%c] : memref<?xf32>
  // Boundary: i, j or k is 0 or the last index.
  %lastI = arith.subi %nx, %c1 : index
  %lastJ = arith.subi %ny, %c1 : index
  %lastK = arith.subi %nz, %c1 : index
  %b0 = arith.cmpi eq, %i, %c0 : index
  %b1 = arith.cmpi eq, %j, %c0 : index
  %b2 = arith.cmpi eq, %k, %c0 : index
  %b3 = arith.cmpi eq, %i, %lastI : index
  %b4 = arith.cmpi eq, %j, %lastJ : index
  %b5 = arith.cmpi eq, %k, %lastK : index
  %o0 = arith.ori %b0, %b1 : i1
  %o1 = arith.ori %o0, %b2 : i1
  %o2 = arith.ori %o1, %b3 : i1
  %o3 = arith.ori %o2, %b4 : i1
  %boundary = arith.ori %o3, %b5 : i1
  %result = scf.if %boundary -> (f32) {
    scf.yield %v : f32
  } else {
    %cm1 = arith.subi %c, %c1 : index
    %cp1 = arith.addi %c, %c1 : index
    %cmy = arith.subi %c, %nx : index
    %cpy = arith.addi %c, %nx : index
    %cmz = arith.subi %c, %sy : index
    %cpz = arith.addi %c, %sy : index
    %w = memref.load %in[%cm1] : memref<?xf32>
    %e = memref.load %in[%cp1] : memref<?xf32>
    %s = memref.load %in[%cmy] : memref<?xf32>
    %n = memref.load %in[%cpy] : memref<?xf32>
    %d = memref.load %in[%cmz] : memref<?xf32>
    %u = memref.load %in[%cpz] : memref<?xf32>
    %s1 = arith.addf %w, %e : f32
    %s2 = arith.addf %s1, %s : f32
    %s3 = arith.addf %s2, %n : f32
    %s4 = arith.addf %s3, %d : f32
    %sum = arith.addf %s4, %u : f32
    // c0 = 1.0f / 6.0f and c1 = c0 / 6.0f, as f32 bit patterns.
    %k0 = arith.constant 0x3E2AAAAB : f32
    %k1 = arith.constant 0x3CE38E39 : f32
    %t1 = arith.mulf %k1, %sum : f32
    %t0 = arith.mulf %k0, %v : f32
    %r = arith.subf %t1, %t0 : f32
    scf.yield %r : f32
  }
  memref.store %result, %out[%c] : memref<?xf32>
  hpvm.return
}

hpvm.internal @stencil_step(%in: memref<?xf32>, %out: memref<?xf32>,
                            %nx: index, %ny: index, %nz: index) {
  %points = hpvm.create_node @stencil_point [%nx, %ny, %nz] : !hpvm.node
  hpvm.bind_in %in -> %points[0] : memref<?xf32>
  hpvm.bind_in %out -> %points[1] : memref<?xf32>
  hpvm.bind_in %nx -> %points[2] : index
  hpvm.bind_in %ny -> %points[3] : index
  hpvm.bind_in %nz -> %points[4] : index
}

// Runs `iterations` steps ping-ponging a and b: after an even number of
// iterations the result is in a, otherwise in b.
func.func @stencil(%a: memref<?xf32>, %b: memref<?xf32>, %nx: index, %ny: index,
                   %nz: index, %iterations: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  hpvm.track %a : memref<?xf32>
  hpvm.track %b : memref<?xf32>
  %last:2 = scf.for %it = %c0 to %iterations step %c1
      iter_args(%in = %a, %out = %b) -> (memref<?xf32>, memref<?xf32>) {
    %g = hpvm.launch @stencil_step(%in, %out, %nx, %ny, %nz)
        : (memref<?xf32>, memref<?xf32>, index, index, index) -> !hpvm.graph
    hpvm.wait %g
    scf.yield %out, %in : memref<?xf32>, memref<?xf32>
  }
  hpvm.request %a : memref<?xf32>
  hpvm.request %b : memref<?xf32>
  hpvm.untrack %a : memref<?xf32>
  hpvm.untrack %b : memref<?xf32>
  return
}
