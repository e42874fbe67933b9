//===- DeviceTools.h - The programs device builds run -----------*- C++ -*-===//
// hpvm-embed-kernels runs programs outside LLVM where they are installed:
// llvm-spirv 15 (an OpenCL image's SPIR 1.2 fallback) and the CUDA toolkit's
// ptxas and fatbinary (cubins). These find them as the builds do; the C API's
// hpvmDeviceTools reports them (the Python package keys its cache on them).
#ifndef HPVM_CONVERSION_DEVICETOOLS_H
#define HPVM_CONVERSION_DEVICETOOLS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::hpvm {

/// The CUDA toolkit's directory (CUDA_HOME, CUDA_PATH, /usr/local/cuda), or
/// "" (libdevice and the tools come from it).
std::string findCudaToolkit();

/// The CUDA tool `name` (ptxas, fatbinary) from the toolkit's bin/, else from
/// PATH; "" when neither has it.
std::string findCudaTool(llvm::StringRef name);

/// The SPIR-V to LLVM translator: HPVM_LLVM_SPIRV (as the runtime reads it),
/// else llvm-spirv-15, else llvm-spirv, from PATH; "" when there is none.
std::string findSPIRVTranslator();

} // namespace mlir::hpvm

#endif // HPVM_CONVERSION_DEVICETOOLS_H
