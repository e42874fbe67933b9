// hpvm-describe-stream-items refusals, at the streaming root: items whose fields could not
// travel to another rank. A host pointer must be followed by its size in bytes (an integer
// input), and memrefs and tensors, pushed or popped, must hold whole bytes per element.
// RUN: hpvm-opt %s --split-input-file --hpvm-describe-stream-items --verify-diagnostics

// A pointer followed by a float.
// expected-error @+1 {{--distribute=mpi: input 0 of the streaming root @pointer_then_float is a host pointer not followed by its size in bytes (found f32); the items of a distributed stream carry buffers as a pointer and its size, which can travel to another rank}}
hpvm.leaf @pointer_then_float(%p: !llvm.ptr, %x: f32) {
  hpvm.return
}
func.func @host(%p: !llvm.ptr, %x: f32) {
  %s = hpvm.launch @pointer_then_float(%p, %x) streaming : (!llvm.ptr, f32) -> !hpvm.graph
  return
}

// -----

// A pointer last.
// expected-error @+1 {{--distribute=mpi: input 1 of the streaming root @pointer_last is a host pointer not followed by its size in bytes (found no further input)}}
hpvm.leaf @pointer_last(%n: i64, %p: !llvm.ptr) {
  hpvm.return
}
func.func @host(%p: !llvm.ptr, %n: i64) {
  %s = hpvm.launch @pointer_last(%n, %p) streaming : (i64, !llvm.ptr) -> !hpvm.graph
  return
}

// -----

// expected-error @+1 {{--distribute=mpi: input 0 of the streaming root @bits_in is a memref of 'i1', whose elements are not whole bytes of data; the items of a distributed stream carry buffers of integers or floats}}
hpvm.leaf @bits_in(%m: memref<8xi1>) {
  hpvm.return
}
func.func @host(%m: memref<8xi1>) {
  %s = hpvm.launch @bits_in(%m) streaming : (memref<8xi1>) -> !hpvm.graph
  return
}

// -----

// expected-error @+1 {{--distribute=mpi: input 0 of the streaming root @tensor_bits_in is a tensor of 'i1', whose elements are not whole bytes of data}}
hpvm.leaf @tensor_bits_in(%t: tensor<8xi1>) {
  hpvm.return
}
func.func @host(%t: tensor<8xi1>) {
  %s = hpvm.launch @tensor_bits_in(%t) streaming : (tensor<8xi1>) -> !hpvm.graph
  return
}

// -----

// expected-error @+1 {{--distribute=mpi: an output of the streaming root @bits_out is a memref of 'i1', whose elements are not whole bytes of data; the items of a distributed stream carry buffers of integers or floats}}
hpvm.leaf @bits_out(%m: memref<8xi1>, %n: i64) -> (memref<8xi1>) {
  hpvm.return %m : memref<8xi1>
}
func.func @host(%m: memref<8xi1>, %n: i64) {
  %s = hpvm.launch @bits_out(%m, %n) streaming : (memref<8xi1>, i64) -> !hpvm.graph
  return
}

// -----

// expected-error @+1 {{--distribute=mpi: an output of the streaming root @tensor_bits_out is a tensor of 'i1', whose elements are not whole bytes of data}}
hpvm.leaf @tensor_bits_out(%x: tensor<8xf32>) -> (tensor<8xi1>) {
  %c = arith.constant dense<true> : tensor<8xi1>
  hpvm.return %c : tensor<8xi1>
}
func.func @host(%x: tensor<8xf32>) {
  %s = hpvm.launch @tensor_bits_out(%x) streaming : (tensor<8xf32>) -> !hpvm.graph
  return
}

// -----

// Launches that do not stream are not described.
hpvm.leaf @not_streamed(%p: !llvm.ptr) {
  hpvm.return
}
func.func @host(%p: !llvm.ptr) {
  %g = hpvm.launch @not_streamed(%p) : (!llvm.ptr) -> !hpvm.graph
  return
}
