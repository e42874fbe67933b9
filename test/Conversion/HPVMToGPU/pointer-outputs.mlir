// Pointer outputs of leaf kernels: a device cannot hand a host pointer back,
// so a kernel returns the index of the pointer input its output is (-1 for
// null), computed beside the pointer: constants, a code argument beside a
// block argument, a select of codes, a code slot beside a local slot. The host
// turns the code back into the host pointer it passed in.
// RUN: hpvm-opt %s --convert-hpvm-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda dump-dir=%t" -o /dev/null
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// RUN: hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl" --convert-hpvm-to-cpu | FileCheck %s --check-prefix=HOST

// A pointer output that is a pointer input passed on: code 1, its index.
hpvm.leaf @pass(%n: i64, %p: !llvm.ptr, %bytes: i64) -> (!llvm.ptr, i64) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  hpvm.return %p, %bytes : !llvm.ptr, i64
}
// CHECK-LABEL: gpu.func @pass(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: !llvm.ptr, %[[BYTES:.*]]: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[OUT:.*]]: !llvm.ptr) kernel
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: scf.if
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[OUT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i64)>
// CHECK: llvm.store %[[ONE]], %[[F0]] : i64, !llvm.ptr
// CHECK: llvm.store %[[BYTES]]

// An input or null, chosen by a branch: a code argument beside the pointer's.
hpvm.leaf @choose(%p: !llvm.ptr, %bytes: i64, %c: i32) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %zero = llvm.mlir.constant(0 : i32) : i32
  %null = llvm.mlir.zero : !llvm.ptr
  %is = llvm.icmp "ne" %c, %zero : i32
  llvm.cond_br %is, ^bb1(%p : !llvm.ptr), ^bb1(%null : !llvm.ptr)
^bb1(%r: !llvm.ptr):
  hpvm.return %r : !llvm.ptr
}
// CHECK-LABEL: gpu.func @choose(
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-DAG: %[[FIRST:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.cond_br %{{.*}}, ^[[JOIN:.*]](%arg0, %[[FIRST]] : !llvm.ptr, i64), ^[[JOIN]](%{{.*}}, %[[NULL]] : !llvm.ptr, i64)
// CHECK: ^[[JOIN]](%{{.*}}: !llvm.ptr, %[[CODE:.*]]: i64):
// CHECK: scf.if
// CHECK: llvm.store %[[CODE]], %{{.*}} : i64, !llvm.ptr

// ... by a select: a select of codes.
hpvm.leaf @pick(%p: !llvm.ptr, %bytes: i64, %q: !llvm.ptr, %qbytes: i64, %c: i32) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %zero = llvm.mlir.constant(0 : i32) : i32
  %is = llvm.icmp "ne" %c, %zero : i32
  %r = llvm.select %is, %p, %q : i1, !llvm.ptr
  hpvm.return %r : !llvm.ptr
}
// CHECK-LABEL: gpu.func @pick(
// CHECK-DAG: %[[THIRD:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[FIRST:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[IS:.*]] = llvm.icmp "ne"
// CHECK: llvm.select %[[IS]], %arg0, %arg2 : i1, !llvm.ptr
// CHECK: %[[CODE:.*]] = llvm.select %[[IS]], %[[FIRST]], %[[THIRD]] : i1, i64
// CHECK: scf.if
// CHECK: llvm.store %[[CODE]]

// ... through a local slot, as the frontend gathers several __hpvm__returns:
// a code slot beside it.
hpvm.leaf @slot(%p: !llvm.ptr, %bytes: i64, %c: i32) -> (!llvm.ptr) attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %s = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.store %null, %s : !llvm.ptr, !llvm.ptr
  %zero = llvm.mlir.constant(0 : i32) : i32
  %is = llvm.icmp "ne" %c, %zero : i32
  llvm.cond_br %is, ^bb1, ^bb2
^bb1:
  llvm.store %p, %s : !llvm.ptr, !llvm.ptr
  llvm.br ^bb2
^bb2:
  %r = llvm.load %s : !llvm.ptr -> !llvm.ptr
  hpvm.return %r : !llvm.ptr
}
// CHECK-LABEL: gpu.func @slot(
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-DAG: %[[FIRST:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK-NEXT: %[[CODES:.*]] = llvm.alloca %{{.*}} x i64
// CHECK: llvm.store %{{.*}}, %[[SLOT]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.store %[[NULL]], %[[CODES]] : i64, !llvm.ptr
// CHECK: llvm.store %arg0, %[[SLOT]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.store %[[FIRST]], %[[CODES]] : i64, !llvm.ptr
// CHECK: llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[CODE:.*]] = llvm.load %[[CODES]] : !llvm.ptr -> i64
// CHECK: scf.if
// CHECK: llvm.store %[[CODE]]

// The host reads the code where the pointer would be and picks the input it
// names (here @pass's input 1), null for any other code.
// HOST: llvm.call @hpvm_rt_kernel_run
// HOST: %[[STORED:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// HOST-NEXT: %[[CODE:.*]] = llvm.ptrtoint %[[STORED]] : !llvm.ptr to i64
// HOST-NEXT: %[[NULLPTR:.*]] = llvm.mlir.zero : !llvm.ptr
// HOST-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// HOST-NEXT: %[[IS:.*]] = llvm.icmp "eq" %[[CODE]], %[[ONE]] : i64
// HOST-NEXT: llvm.select %[[IS]], %{{.*}}, %[[NULLPTR]] : i1, !llvm.ptr
hpvm.internal @root(%n: i64, %p: !llvm.ptr, %bytes: i64, %c: i32) -> (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) {
  %a = hpvm.create_node @pass : !hpvm.node
  hpvm.bind_in %n -> %a[0] : i64
  hpvm.bind_in %p -> %a[1] : !llvm.ptr
  hpvm.bind_in %bytes -> %a[2] : i64
  hpvm.bind_out %a[0] -> 0
  %k = hpvm.create_node @choose : !hpvm.node
  hpvm.bind_in %p -> %k[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %k[1] : i64
  hpvm.bind_in %c -> %k[2] : i32
  hpvm.bind_out %k[0] -> 1
  %s = hpvm.create_node @pick : !hpvm.node
  hpvm.bind_in %p -> %s[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %s[1] : i64
  hpvm.bind_in %p -> %s[2] : !llvm.ptr
  hpvm.bind_in %bytes -> %s[3] : i64
  hpvm.bind_in %c -> %s[4] : i32
  hpvm.bind_out %s[0] -> 2
  %t = hpvm.create_node @slot : !hpvm.node
  hpvm.bind_in %p -> %t[0] : !llvm.ptr
  hpvm.bind_in %bytes -> %t[1] : i64
  hpvm.bind_in %c -> %t[2] : i32
  hpvm.bind_out %t[0] -> 3
}
