//===- KernelSerialization.h - Device binaries of kernel modules -*- C++ -*-===//
// The steps of hpvm-embed-kernels that turn a lowered gpu.module into bytes.
#ifndef HPVM_LIB_CONVERSION_HPVMTOGPU_KERNELSERIALIZATION_H
#define HPVM_LIB_CONVERSION_HPVMTOGPU_KERNELSERIALIZATION_H

#include "HPVM/Conversion/DeviceTools.h"
#include "hpvm/hpvm_rt.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

namespace llvm {
class Module;
} // namespace llvm

#include <optional>
#include <string>

namespace mlir::hpvm {

/// Gives the pointers of an OpenCL kernel module their address spaces: values
/// derived from `llvm.alloca` stay private (0); every other pointer
/// (parameters, loaded pointers, pointers made from integers) becomes global
/// (`!llvm.ptr<1>`, CrossWorkgroup), function signatures included. A value
/// that may be either fails with an error at it.
LogicalResult assignOpenCLAddressSpaces(gpu::GPUModuleOp kernels);

/// Compiles `kernels` (entirely in the llvm dialect, OpenCL address spaces)
/// to a SPIR-V 1.0 module for OpenCL (Kernel capability, Physical64) with
/// LLVM's SPIR-V backend, zero scalars written as constants rather than
/// OpConstantNull (which llvm-spirv 15 rejects). Errors are emitted at
/// `kernels`.
FailureOr<std::string> serializeToOpenCLSPIRV(gpu::GPUModuleOp kernels);

/// A CUDA fat binary of `ptx`: a cubin per architecture (`sm_80`, ...) by
/// `ptxas`, and the PTX itself, by `fatbinary`. std::nullopt when the tools
/// are not there (`error` empty) or fail (`error` says how).
std::optional<std::string> buildCudaFatbin(StringRef ptx,
                                           ArrayRef<std::string> architectures,
                                           std::string &error);

/// The SPIR 1.2 bitcode of an OpenCL SPIR-V module, by llvm-spirv 15
/// (`HPVM_LLVM_SPIRV`, `llvm-spirv-15`, `llvm-spirv`). std::nullopt when the
/// translator is not there (`error` empty) or fails (`error` says how).
std::optional<std::string> translateToSPIR12(StringRef spirv,
                                             std::string &error);

/// The suffix of the 32-bit variant of each CUDA kernel.
inline constexpr llvm::StringLiteral kNarrowKernelSuffix =
    HPVM_RT_NARROW_KERNEL_SUFFIX;

/// Adds to `module` (linked NVVM IR, not yet optimized) the 32-bit variant of
/// each kernel, `<kernel>__i32`, for launches whose grid and buffers fit 2^31
/// instances and bytes (NarrowIndices.cpp).
void addNarrowIndexKernels(llvm::Module &module);

/// Tests only (`HPVM_TEST_NARROW_OPENCL=1` at compile time): every OpenCL
/// kernel of `module` narrowed in place as the CUDA variants are, so that the
/// transformation runs on an OpenCL device (PoCL) where no GPU is.
void narrowOpenCLKernelsForTesting(llvm::Module &module);

} // namespace mlir::hpvm

#endif // HPVM_LIB_CONVERSION_HPVMTOGPU_KERNELSERIALIZATION_H
