// sgemm C = A x B as one replicated leaf over the M x N grid of C, each
// instance one dot product: the untiled program that hpvm-tile-nodes turns
// into a grid of tiles (benchmarks/hpvm/run_cpu.sh measures both;
// examples/sgemm.mlir is the hand-tiled version).

hpvm.leaf @mm_element(%A: memref<?x?xf32> {hpvm.access = #hpvm.access<in>},
                      %B: memref<?x?xf32> {hpvm.access = #hpvm.access<in>},
                      %C: memref<?x?xf32> {hpvm.access = #hpvm.access<out>})
    attributes {hpvm.targets = [#hpvm.target<cpu>, #hpvm.target<gpu>]} {
  %col = hpvm.instance_id x : index
  %row = hpvm.instance_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = memref.dim %A, %c1 : memref<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f32) {
    %a = memref.load %A[%row, %i] : memref<?x?xf32>
    %b = memref.load %B[%i, %col] : memref<?x?xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    scf.yield %s : f32
  }
  memref.store %sum, %C[%row, %col] : memref<?x?xf32>
  hpvm.return
}

hpvm.internal @mm_root(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>,
                       %n: index, %m: index) {
  %elements = hpvm.create_node @mm_element [%n, %m] : !hpvm.node
  hpvm.bind_in %A -> %elements[0] : memref<?x?xf32>
  hpvm.bind_in %B -> %elements[1] : memref<?x?xf32>
  hpvm.bind_in %C -> %elements[2] : memref<?x?xf32>
}

func.func @sgemm(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %C, %c0 : memref<?x?xf32>
  %n = memref.dim %C, %c1 : memref<?x?xf32>
  hpvm.track %A : memref<?x?xf32>
  hpvm.track %B : memref<?x?xf32>
  hpvm.track %C : memref<?x?xf32>
  %g = hpvm.launch @mm_root(%A, %B, %C, %n, %m)
      : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> !hpvm.graph
  hpvm.wait %g
  hpvm.request %C : memref<?x?xf32>
  hpvm.untrack %A : memref<?x?xf32>
  hpvm.untrack %B : memref<?x?xf32>
  hpvm.untrack %C : memref<?x?xf32>
  return
}
