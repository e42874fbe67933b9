// A C++ node (a mangled symbol) is shown by the runtime as written ("scale",
// in HPVM_TRACE lines and warnings), while its kernel keeps the symbol the
// device module defines; a C node's two names are one string.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --implicit-check-not=__hpvm_kernel_plain

// CHECK-DAG: llvm.mlir.global internal constant @__hpvm_name__Z5scalePfm("scale\00")
// CHECK-DAG: llvm.mlir.global internal constant @__hpvm_kernel__Z5scalePfm("_Z5scalePfm\00")
// CHECK-DAG: llvm.mlir.global internal constant @__hpvm_name_plain("plain\00")
// The CPU version traces the same name.
// CHECK-DAG: llvm.mlir.global internal constant @__hpvm_node__Z5scalePfm("scale\00")

hpvm.leaf @_Z5scalePfm(%p: !llvm.ptr, %bytes: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.leaf @plain(%p: !llvm.ptr, %bytes: i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.return
}
hpvm.internal @root(%p: !llvm.ptr, %bytes: i64, %n: index) {
  %a = hpvm.create_node @_Z5scalePfm [%n] : !hpvm.node
  hpvm.bind_in %p -> %a[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %a[1] : i64
  %b = hpvm.create_node @plain [%n] : !hpvm.node
  hpvm.bind_in %p -> %b[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %b[1] : i64
}
