// The 6-stage edge-detection pipeline of the HPVM paper as a streaming graph:
// Gaussian smoothing -> Laplacian estimate -> zero crossings, gradient (Sobel)
// -> maximum gradient -> reject zero crossings with weak gradients. Every
// stage but the maximum runs one instance per pixel (x = column, y = row);
// frames stream through the stages, several in flight. The arithmetic follows
// benchmarks/edge (borders clamp, same summation order), bit for bit.
//
// Buffers are [frames or slots, height, width]: frame f reads input[f], writes
// edges[f], and uses the intermediate buffers of slot f mod slots; the host
// keeps at most `slots` frames in flight, so a slot is free when reused.
//
// The per-pixel stages are hinted for the GPU after the CPU: `hpvm-cc
// --target=gpu|opencl` makes kernels of them (each hands on the buffer it
// wrote), and the maximum, a sequential scan, stays on the CPU.

// S = 7x7 Gaussian of I (weights w, row-major over dy then dx).
hpvm.leaf @gaussian(%input: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                    %frame: index,
                    %smooth: memref<?x?x?xf32> {hpvm.access = #hpvm.access<out>},
                    %slot: index,
                    %w: memref<49xf32> {hpvm.access = #hpvm.access<in>})
    -> (memref<?x?x?xf32>, memref<?x?x?xf32>)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %width = hpvm.num_instances x : index
  %height = hpvm.num_instances y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %lastX = arith.subi %width, %c1 : index
  %lastY = arith.subi %height, %c1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %dy = %c0 to %c7 step %c1 iter_args(%accRow = %zero) -> (f32) {
    %yy0 = arith.addi %y, %dy : index
    %yy1 = arith.subi %yy0, %c3 : index
    %yy2 = arith.maxsi %yy1, %c0 : index
    %yy = arith.minsi %yy2, %lastY : index
    %row = scf.for %dx = %c0 to %c7 step %c1 iter_args(%acc = %accRow) -> (f32) {
      %xx0 = arith.addi %x, %dx : index
      %xx1 = arith.subi %xx0, %c3 : index
      %xx2 = arith.maxsi %xx1, %c0 : index
      %xx = arith.minsi %xx2, %lastX : index
      %tap0 = arith.muli %dy, %c7 : index
      %tap = arith.addi %tap0, %dx : index
      %weight = memref.load %w[%tap] : memref<49xf32>
      %v = memref.load %input[%frame, %yy, %xx] : memref<?x?x?xf32>
      %p = arith.mulf %weight, %v : f32
      %next = arith.addf %acc, %p : f32
      scf.yield %next : f32
    }
    scf.yield %row : f32
  }
  memref.store %sum, %smooth[%slot, %y, %x] : memref<?x?x?xf32>
  hpvm.return %smooth, %smooth : memref<?x?x?xf32>, memref<?x?x?xf32>
}

// L = (max3x3(S) + min3x3(S)) - 2 S.
hpvm.leaf @laplacian(%smooth: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                     %laplace: memref<?x?x?xf32> {hpvm.access = #hpvm.access<out>},
                     %slot: index) -> (memref<?x?x?xf32>)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %width = hpvm.num_instances x : index
  %height = hpvm.num_instances y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %lastX = arith.subi %width, %c1 : index
  %lastY = arith.subi %height, %c1 : index
  %center = memref.load %smooth[%slot, %y, %x] : memref<?x?x?xf32>
  %mx, %mn = scf.for %dy = %c0 to %c3 step %c1 iter_args(%mxRow = %center, %mnRow = %center)
      -> (f32, f32) {
    %yy0 = arith.addi %y, %dy : index
    %yy1 = arith.subi %yy0, %c1 : index
    %yy2 = arith.maxsi %yy1, %c0 : index
    %yy = arith.minsi %yy2, %lastY : index
    %rmx, %rmn = scf.for %dx = %c0 to %c3 step %c1 iter_args(%m = %mxRow, %n = %mnRow)
        -> (f32, f32) {
      %xx0 = arith.addi %x, %dx : index
      %xx1 = arith.subi %xx0, %c1 : index
      %xx2 = arith.maxsi %xx1, %c0 : index
      %xx = arith.minsi %xx2, %lastX : index
      %v = memref.load %smooth[%slot, %yy, %xx] : memref<?x?x?xf32>
      %greater = arith.cmpf ogt, %v, %m : f32
      %m2 = arith.select %greater, %v, %m : f32
      %less = arith.cmpf olt, %v, %n : f32
      %n2 = arith.select %less, %v, %n : f32
      scf.yield %m2, %n2 : f32, f32
    }
    scf.yield %rmx, %rmn : f32, f32
  }
  %two = arith.constant 2.0 : f32
  %sumMaxMin = arith.addf %mx, %mn : f32
  %twice = arith.mulf %two, %center : f32
  %l = arith.subf %sumMaxMin, %twice : f32
  memref.store %l, %laplace[%slot, %y, %x] : memref<?x?x?xf32>
  hpvm.return %laplace : memref<?x?x?xf32>
}

// Z = 1 where the 3x3 window of L holds both a value > 0 and a value <= 0.
hpvm.leaf @zero_crossings(%laplace: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                          %crossings: memref<?x?x?xf32> {hpvm.access = #hpvm.access<out>},
                          %slot: index) -> (memref<?x?x?xf32>)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %width = hpvm.num_instances x : index
  %height = hpvm.num_instances y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %lastX = arith.subi %width, %c1 : index
  %lastY = arith.subi %height, %c1 : index
  %zero = arith.constant 0.0 : f32
  %false = arith.constant false
  %true = arith.constant true
  %pos, %nonpos = scf.for %dy = %c0 to %c3 step %c1 iter_args(%p0 = %false, %n0 = %false)
      -> (i1, i1) {
    %yy0 = arith.addi %y, %dy : index
    %yy1 = arith.subi %yy0, %c1 : index
    %yy2 = arith.maxsi %yy1, %c0 : index
    %yy = arith.minsi %yy2, %lastY : index
    %rp, %rn = scf.for %dx = %c0 to %c3 step %c1 iter_args(%p = %p0, %n = %n0) -> (i1, i1) {
      %xx0 = arith.addi %x, %dx : index
      %xx1 = arith.subi %xx0, %c1 : index
      %xx2 = arith.maxsi %xx1, %c0 : index
      %xx = arith.minsi %xx2, %lastX : index
      %v = memref.load %laplace[%slot, %yy, %xx] : memref<?x?x?xf32>
      %isPos = arith.cmpf ogt, %v, %zero : f32
      %isNonPos = arith.xori %isPos, %true : i1
      %p2 = arith.ori %p, %isPos : i1
      %n2 = arith.ori %n, %isNonPos : i1
      scf.yield %p2, %n2 : i1, i1
    }
    scf.yield %rp, %rn : i1, i1
  }
  %both = arith.andi %pos, %nonpos : i1
  %one = arith.constant 1.0 : f32
  %z = arith.select %both, %one, %zero : f32
  memref.store %z, %crossings[%slot, %y, %x] : memref<?x?x?xf32>
  hpvm.return %crossings : memref<?x?x?xf32>
}

// G = |Sobel(S)|: gx and gy summed row-major over the 3x3 window, with the
// Sobel coefficients dx * (2 - |dy|) and dy * (2 - |dx|).
hpvm.leaf @gradient(%smooth: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                    %gradients: memref<?x?x?xf32> {hpvm.access = #hpvm.access<out>},
                    %slot: index) -> (memref<?x?x?xf32>, memref<?x?x?xf32>)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %width = hpvm.num_instances x : index
  %height = hpvm.num_instances y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %lastX = arith.subi %width, %c1 : index
  %lastY = arith.subi %height, %c1 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2 : i64
  %gx, %gy = scf.for %dy = %c0 to %c3 step %c1 iter_args(%gx0 = %zero, %gy0 = %zero)
      -> (f32, f32) {
    %yy0 = arith.addi %y, %dy : index
    %yy1 = arith.subi %yy0, %c1 : index
    %yy2 = arith.maxsi %yy1, %c0 : index
    %yy = arith.minsi %yy2, %lastY : index
    %ry, %rg = scf.for %dx = %c0 to %c3 step %c1 iter_args(%ax = %gx0, %ay = %gy0)
        -> (f32, f32) {
      %xx0 = arith.addi %x, %dx : index
      %xx1 = arith.subi %xx0, %c1 : index
      %xx2 = arith.maxsi %xx1, %c0 : index
      %xx = arith.minsi %xx2, %lastX : index
      %v = memref.load %smooth[%slot, %yy, %xx] : memref<?x?x?xf32>
      // Offsets -1, 0, 1 and their magnitudes.
      %ody0 = arith.index_cast %dy : index to i64
      %odx0 = arith.index_cast %dx : index to i64
      %one64 = arith.constant 1 : i64
      %ody = arith.subi %ody0, %one64 : i64
      %odx = arith.subi %odx0, %one64 : i64
      %ady = math.absi %ody : i64
      %adx = math.absi %odx : i64
      %wy = arith.subi %two, %ady : i64
      %wx = arith.subi %two, %adx : i64
      %cxi = arith.muli %odx, %wy : i64
      %cyi = arith.muli %ody, %wx : i64
      %cx = arith.sitofp %cxi : i64 to f32
      %cy = arith.sitofp %cyi : i64 to f32
      %px = arith.mulf %cx, %v : f32
      %py = arith.mulf %cy, %v : f32
      %nx = arith.addf %ax, %px : f32
      %ny = arith.addf %ay, %py : f32
      scf.yield %nx, %ny : f32, f32
    }
    scf.yield %ry, %rg : f32, f32
  }
  %gx2 = arith.mulf %gx, %gx : f32
  %gy2 = arith.mulf %gy, %gy : f32
  %g2 = arith.addf %gx2, %gy2 : f32
  %g = math.sqrt %g2 : f32
  memref.store %g, %gradients[%slot, %y, %x] : memref<?x?x?xf32>
  hpvm.return %gradients, %gradients : memref<?x?x?xf32>, memref<?x?x?xf32>
}

// The largest gradient of the frame (one instance: a sequential max from 0).
hpvm.leaf @max_gradient(%gradients: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                        %slot: index, %width: index, %height: index) -> (f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %max = scf.for %y = %c0 to %height step %c1 iter_args(%m0 = %zero) -> (f32) {
    %row = scf.for %x = %c0 to %width step %c1 iter_args(%m = %m0) -> (f32) {
      %g = memref.load %gradients[%slot, %y, %x] : memref<?x?x?xf32>
      %greater = arith.cmpf ogt, %g, %m : f32
      %m2 = arith.select %greater, %g, %m : f32
      scf.yield %m2 : f32
    }
    scf.yield %row : f32
  }
  hpvm.return %max : f32
}

// E = 1 at zero crossings whose gradient exceeds 0.1 of the frame's maximum.
hpvm.leaf @reject(%crossings: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                  %gradients: memref<?x?x?xf32> {hpvm.access = #hpvm.access<in>},
                  %maxGradient: f32,
                  %edges: memref<?x?x?xf32> {hpvm.access = #hpvm.access<out>},
                  %slot: index, %frame: index) -> (memref<?x?x?xf32>, f32)
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %x = hpvm.instance_id x : index
  %y = hpvm.instance_id y : index
  %z = memref.load %crossings[%slot, %y, %x] : memref<?x?x?xf32>
  %g = memref.load %gradients[%slot, %y, %x] : memref<?x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %theta = arith.constant 0.1 : f32
  %threshold = arith.mulf %theta, %maxGradient : f32
  %isCrossing = arith.cmpf ogt, %z, %zero : f32
  %isStrong = arith.cmpf ogt, %g, %threshold : f32
  %edge = arith.andi %isCrossing, %isStrong : i1
  %e = arith.select %edge, %one, %zero : f32
  memref.store %e, %edges[%frame, %y, %x] : memref<?x?x?xf32>
  hpvm.return %edges, %maxGradient : memref<?x?x?xf32>, f32
}

// The streaming root: one stage per node; every edge carries one item per frame.
hpvm.internal @edge_detection(%input: memref<?x?x?xf32>, %frame: index,
                              %smooth: memref<?x?x?xf32>, %laplace: memref<?x?x?xf32>,
                              %crossings: memref<?x?x?xf32>, %gradients: memref<?x?x?xf32>,
                              %edges: memref<?x?x?xf32>, %w: memref<49xf32>,
                              %slot: index, %width: index, %height: index)
    -> (memref<?x?x?xf32>, f32) {
  %gaussian = hpvm.create_node @gaussian [%width, %height] : !hpvm.node
  %laplacian = hpvm.create_node @laplacian [%width, %height] : !hpvm.node
  %zero_crossings = hpvm.create_node @zero_crossings [%width, %height] : !hpvm.node
  %gradient = hpvm.create_node @gradient [%width, %height] : !hpvm.node
  %max_gradient = hpvm.create_node @max_gradient : !hpvm.node
  %reject = hpvm.create_node @reject [%width, %height] : !hpvm.node
  hpvm.bind_in %input -> %gaussian[0] streaming : memref<?x?x?xf32>
  hpvm.bind_in %frame -> %gaussian[1] streaming : index
  hpvm.bind_in %smooth -> %gaussian[2] streaming : memref<?x?x?xf32>
  hpvm.bind_in %slot -> %gaussian[3] streaming : index
  hpvm.bind_in %w -> %gaussian[4] streaming : memref<49xf32>
  hpvm.edge %gaussian[0] -> %laplacian[0] all_to_all streaming
  hpvm.bind_in %laplace -> %laplacian[1] streaming : memref<?x?x?xf32>
  hpvm.bind_in %slot -> %laplacian[2] streaming : index
  hpvm.edge %laplacian[0] -> %zero_crossings[0] all_to_all streaming
  hpvm.bind_in %crossings -> %zero_crossings[1] streaming : memref<?x?x?xf32>
  hpvm.bind_in %slot -> %zero_crossings[2] streaming : index
  hpvm.edge %gaussian[1] -> %gradient[0] all_to_all streaming
  hpvm.bind_in %gradients -> %gradient[1] streaming : memref<?x?x?xf32>
  hpvm.bind_in %slot -> %gradient[2] streaming : index
  hpvm.edge %gradient[0] -> %max_gradient[0] all_to_all streaming
  hpvm.bind_in %slot -> %max_gradient[1] streaming : index
  hpvm.bind_in %width -> %max_gradient[2] streaming : index
  hpvm.bind_in %height -> %max_gradient[3] streaming : index
  hpvm.edge %zero_crossings[0] -> %reject[0] all_to_all streaming
  hpvm.edge %gradient[1] -> %reject[1] all_to_all streaming
  hpvm.edge %max_gradient[0] -> %reject[2] all_to_all streaming
  hpvm.bind_in %edges -> %reject[3] streaming : memref<?x?x?xf32>
  hpvm.bind_in %slot -> %reject[4] streaming : index
  hpvm.bind_in %frame -> %reject[5] streaming : index
  hpvm.bind_out %reject[0] -> 0 streaming
  hpvm.bind_out %reject[1] -> 1 streaming
}

// Streams `count` frames through the pipeline with at most `slots` in flight
// and stores each frame's maximum gradient.
func.func @detect_edges(%input: memref<?x?x?xf32>, %edges: memref<?x?x?xf32>,
                        %smooth: memref<?x?x?xf32>, %laplace: memref<?x?x?xf32>,
                        %crossings: memref<?x?x?xf32>, %gradients: memref<?x?x?xf32>,
                        %w: memref<49xf32>, %maxima: memref<?xf32>, %count: index,
                        %slots: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %height = memref.dim %input, %c1 : memref<?x?x?xf32>
  %width = memref.dim %input, %c2 : memref<?x?x?xf32>
  %s = hpvm.launch @edge_detection(%input, %c0, %smooth, %laplace, %crossings, %gradients,
                                   %edges, %w, %c0, %width, %height) streaming
      : (memref<?x?x?xf32>, index, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>,
         memref<?x?x?xf32>, memref<?x?x?xf32>, memref<49xf32>, index, index, index)
      -> !hpvm.graph
  scf.for %frame = %c1 to %count step %c1 {
    // Reusing a slot needs the frame that used it last to be out of the pipeline.
    %full = arith.cmpi uge, %frame, %slots : index
    scf.if %full {
      %done = arith.subi %frame, %slots : index
      %e, %m = hpvm.pop %s : memref<?x?x?xf32>, f32
      memref.store %m, %maxima[%done] : memref<?xf32>
    }
    %slot = arith.remui %frame, %slots : index
    hpvm.push %s(%input, %frame, %smooth, %laplace, %crossings, %gradients, %edges, %w,
                 %slot, %width, %height)
        : memref<?x?x?xf32>, index, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>,
          memref<?x?x?xf32>, memref<?x?x?xf32>, memref<49xf32>, index, index, index
  }
  %popped = arith.subi %count, %slots : index
  %positive = arith.cmpi sgt, %popped, %c0 : index
  %first = arith.select %positive, %popped, %c0 : index
  scf.for %frame = %first to %count step %c1 {
    %e, %m = hpvm.pop %s : memref<?x?x?xf32>, f32
    memref.store %m, %maxima[%frame] : memref<?xf32>
  }
  hpvm.wait %s
  return
}
