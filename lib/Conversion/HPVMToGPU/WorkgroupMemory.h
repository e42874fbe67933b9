//===- WorkgroupMemory.h - Work-group memory parameters of kernels -*- C++ -*-===//
// Kernels take their work-group memory as parameters: pointers in address
// space 3, OpenCL's __local arguments, which hpvm-embed-kernels rewrites into
// offsets in the launch's dynamic shared memory for CUDA; the runtime sizes
// them from the host's HPVM_RT_PARAM_WORKGROUP parameters. The same
// parameters on both devices keep one host side for both.
#ifndef HPVM_CONVERSION_HPVMTOGPU_WORKGROUPMEMORY_H
#define HPVM_CONVERSION_HPVMTOGPU_WORKGROUPMEMORY_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::hpvm {

/// The address space of work-group memory in kernels (NVVM's shared,
/// OpenCL's __local).
constexpr unsigned kWorkgroupAddressSpace = 3;

/// A memref of `type`'s shape and elements in address space 3 over the
/// work-group memory at `memory` (a kernel's `!llvm.ptr<3>` parameter):
/// row-major, offset 0, its dynamic sizes `dynamicSizes`.
Value viewWorkgroupMemory(OpBuilder &b, Location loc, MemRefType type,
                          Value memory, ValueRange dynamicSizes);

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_HPVMTOGPU_WORKGROUPMEMORY_H
