// hpvm-describe-stream-items alone: before each streaming launch, a call of
// hpvm_rt_mpi_describe_items with its root's item layout (inputs ';' outputs, each field
// <kind><size>.<align>, memrefs with :<rank>:<element bytes>), one global per distinct
// layout; launches that do not stream are left alone. Scalars are data (d); a host pointer
// and its size are a buffer (i, o, b by its hpvm.access) and its size (n); a pointer among
// the outputs is p; memrefs are I, O, B, P; a tensor input is an I of its shape, a tensor
// output bound from a port nothing else reads (through nested nodes) an F (the graph's own
// buffer, which travels by value), any other tensor output a P.
// RUN: hpvm-opt %s --hpvm-describe-stream-items | FileCheck %s

// CHECK-DAG: llvm.mlir.global private constant @[[SCALARS:__hpvm_mpi_items_[0-9]+]]("d4.4,d8.8;d4.4\00")
// CHECK-DAG: llvm.mlir.global private constant @[[BUFFERS:__hpvm_mpi_items_[0-9]+]]("i8.8,n8.4,o8.8,n8.4,b8.8,n4.4;p8.8\00")
// CHECK-DAG: llvm.mlir.global private constant @[[MEMREFS:__hpvm_mpi_items_[0-9]+]]("I56.8:2:4,O40.8:1:2,B72.8:3:8;P40.8:1:2\00")
// CHECK-DAG: llvm.mlir.global private constant @[[TENSORS:__hpvm_mpi_items_[0-9]+]]("I56.8:2:4,d8.4;P56.8:2:4,F56.8:2:4,F56.8:2:4\00")
// CHECK-DAG: llvm.mlir.global private constant @[[LEAF:__hpvm_mpi_items_[0-9]+]]("I56.8:2:4;F56.8:2:4\00")
// CHECK-DAG: llvm.func @hpvm_rt_mpi_describe_items(!llvm.ptr)
// CHECK-NOT: __hpvm_mpi_items_5

// CHECK-LABEL: func.func @host
// CHECK:      %[[A:.+]] = llvm.mlir.addressof @[[SCALARS]] : !llvm.ptr
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items(%[[A]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: hpvm.launch @scalars
// CHECK:      %[[B:.+]] = llvm.mlir.addressof @[[SCALARS]] : !llvm.ptr
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items(%[[B]])
// CHECK-NEXT: hpvm.launch @scalars
// CHECK:      llvm.mlir.addressof @[[BUFFERS]]
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items
// CHECK-NEXT: hpvm.launch @buffers
// CHECK:      llvm.mlir.addressof @[[MEMREFS]]
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items
// CHECK-NEXT: hpvm.launch @frames
// CHECK:      llvm.mlir.addressof @[[TENSORS]]
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items
// CHECK-NEXT: hpvm.launch @net
// CHECK:      llvm.mlir.addressof @[[LEAF]]
// CHECK-NEXT: llvm.call @hpvm_rt_mpi_describe_items
// CHECK-NEXT: hpvm.launch @scale
// The launch that does not stream.
// CHECK-NEXT: hpvm.launch @scalars
// CHECK-NOT:  llvm.call @hpvm_rt_mpi_describe_items
// CHECK:      return

hpvm.leaf @scalars(%a: i32, %b: f64) -> (f32) {
  %r = arith.constant 1.0 : f32
  hpvm.return %r : f32
}
hpvm.leaf @buffers(%in: !llvm.ptr {hpvm.access = #hpvm.access<in>}, %in_bytes: i64,
                   %out: !llvm.ptr {hpvm.access = #hpvm.access<out>}, %out_bytes: i64,
                   %both: !llvm.ptr, %both_bytes: i32) -> (!llvm.ptr) {
  hpvm.return %out : !llvm.ptr
}
hpvm.leaf @frames(%in: memref<?x4xf32> {hpvm.access = #hpvm.access<in>},
                  %out: memref<8xi16> {hpvm.access = #hpvm.access<out>},
                  %both: memref<2x3x4xf64>) -> (memref<8xi16>) {
  hpvm.return %out : memref<8xi16>
}
hpvm.leaf @scale(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>) {
  %r = hpvm.tensor.relu %x : tensor<2x8xf32>
  hpvm.return %r : tensor<2x8xf32>
}
hpvm.leaf @sum(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>) {
  %r = hpvm.tensor.add %x, %y : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  hpvm.return %r : tensor<2x8xf32>
}
hpvm.internal @nested(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>) {
  %a = hpvm.create_node @scale : !hpvm.node
  hpvm.bind_in %x -> %a[0] : tensor<2x8xf32>
  hpvm.bind_out %a[0] -> 0
}
// Output 0 also feeds @sum (P); output 1 is @sum's alone and output 2 @nested's (F).
hpvm.internal @net(%x: tensor<2x8xf32>, %n: i64)
    -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %a = hpvm.create_node @scale : !hpvm.node
  %b = hpvm.create_node @sum : !hpvm.node
  %c = hpvm.create_node @nested : !hpvm.node
  hpvm.bind_in %x -> %a[0] streaming : tensor<2x8xf32>
  hpvm.bind_in %x -> %b[1] streaming : tensor<2x8xf32>
  hpvm.bind_in %x -> %c[0] streaming : tensor<2x8xf32>
  hpvm.edge %a[0] -> %b[0] all_to_all streaming
  hpvm.bind_out %a[0] -> 0 streaming
  hpvm.bind_out %b[0] -> 1 streaming
  hpvm.bind_out %c[0] -> 2 streaming
}
func.func @host(%p: !llvm.ptr, %n: i64, %m: i32, %in: memref<?x4xf32>, %out: memref<8xi16>,
                %both: memref<2x3x4xf64>, %x: tensor<2x8xf32>) {
  %c = arith.constant 1 : i32
  %d = arith.constant 2.0 : f64
  %s = hpvm.launch @scalars(%c, %d) streaming : (i32, f64) -> !hpvm.graph
  %t = hpvm.launch @scalars(%c, %d) streaming : (i32, f64) -> !hpvm.graph
  %u = hpvm.launch @buffers(%p, %n, %p, %n, %p, %m) streaming
      : (!llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i32) -> !hpvm.graph
  %v = hpvm.launch @frames(%in, %out, %both) streaming
      : (memref<?x4xf32>, memref<8xi16>, memref<2x3x4xf64>) -> !hpvm.graph
  %w = hpvm.launch @net(%x, %n) streaming : (tensor<2x8xf32>, i64) -> !hpvm.graph
  %y = hpvm.launch @scale(%x) streaming : (tensor<2x8xf32>) -> !hpvm.graph
  %g = hpvm.launch @scalars(%c, %d) : (i32, f64) -> !hpvm.graph
  return
}
