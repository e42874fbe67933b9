// A streaming root whose popped items hold a memref of i1 (bits, not whole bytes): with
// --distribute=mpi its output is refused (outputs are described first).
hpvm.leaf @make_bits(%bits: memref<?xi1> {hpvm.access = #hpvm.access<in>}) -> (memref<?xi1>) {
  hpvm.return %bits : memref<?xi1>
}

hpvm.internal @bits_out(%bits: memref<?xi1>) -> (memref<?xi1>) {
  %n = hpvm.create_node @make_bits : !hpvm.node
  hpvm.bind_in %bits -> %n[0] streaming : memref<?xi1>
  hpvm.bind_out %n[0] -> 0 streaming
}

func.func @run_out(%bits: memref<?xi1>) -> memref<?xi1> {
  %s = hpvm.launch @bits_out(%bits) streaming : (memref<?xi1>) -> !hpvm.graph
  %r = hpvm.pop %s : memref<?xi1>
  hpvm.wait %s
  return %r : memref<?xi1>
}
