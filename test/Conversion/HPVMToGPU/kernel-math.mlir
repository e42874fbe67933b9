// Math in kernels: what libdevice has a function for goes through it on CUDA
// (convert-gpu-to-nvvm); integer math it has none for (math.absi, math.ctlz:
// the edge pipeline's Sobel weights use |dy|) goes to LLVM's intrinsics,
// which the NVPTX backend lowers. Square roots and divisions of floats are
// correctly rounded, as in C and the CPU versions (libdevice's sqrtf is when
// __nvvm_reflect("__CUDA_PREC_SQRT") answers 1, as the serialization makes it;
// LLVM alone answers 0 and gives sqrt.approx). OpenCL lowers all
// of it with convert-math-to-llvm before the SPIR-V backend.
// RUN: rm -rf %t && mkdir %t && hpvm-opt %s --convert-hpvm-to-gpu --hpvm-embed-kernels="devices=opencl,cuda cubins= dump-dir=%t" -o /dev/null
// RUN: FileCheck %s < %t/hpvm_kernels.ptx
// RUN: spirv-val --target-env opencl2.1 %t/hpvm_kernels.spv
// Line directives from the ops' locations, without the ", debug" that
// ptxas refuses to optimize (as `nvcc -lineinfo`).
// RUN: FileCheck %s --check-prefix=LINES < %t/hpvm_kernels.ptx
// LINES: .target sm_80{{$}}
// LINES: .loc 1 {{[1-9][0-9]*}} 
// LINES: .file 1 "{{.*}}kernel-math.mlir"
// CHECK-LABEL: .visible .entry weights(
// CHECK-DAG: abs.s64
// CHECK-DAG: clz.b32
// CHECK-DAG: sqrt.rn.f32
// CHECK-DAG: div.rn.f32
// CHECK-NOT: .approx
hpvm.leaf @weights(%m: memref<?xi64>, %c: memref<?xi32>, %f: memref<?xf32>)
    attributes {hpvm.targets = [#hpvm.target<gpu>]} {
  %i = hpvm.instance_id x : index
  %v = memref.load %m[%i] : memref<?xi64>
  %a = math.absi %v : i64
  memref.store %a, %m[%i] : memref<?xi64>
  %w = memref.load %c[%i] : memref<?xi32>
  %z = math.ctlz %w : i32
  memref.store %z, %c[%i] : memref<?xi32>
  %x = memref.load %f[%i] : memref<?xf32>
  %s = math.sqrt %x : f32
  %q = arith.divf %s, %x : f32
  memref.store %q, %f[%i] : memref<?xf32>
  hpvm.return
}
