// A streaming root whose items hold a memref of i1 (bits, not whole bytes): with
// --distribute=mpi its input is refused.
hpvm.leaf @pass_bits(%bits: memref<?xi1> {hpvm.access = #hpvm.access<in>}) -> (f32) {
  %zero = arith.constant 0.0 : f32
  hpvm.return %zero : f32
}

hpvm.internal @bits_in(%bits: memref<?xi1>) -> (f32) {
  %n = hpvm.create_node @pass_bits : !hpvm.node
  hpvm.bind_in %bits -> %n[0] streaming : memref<?xi1>
  hpvm.bind_out %n[0] -> 0 streaming
}

func.func @run_in(%bits: memref<?xi1>) -> f32 {
  %s = hpvm.launch @bits_in(%bits) streaming : (memref<?xi1>) -> !hpvm.graph
  %r = hpvm.pop %s : f32
  hpvm.wait %s
  return %r : f32
}
