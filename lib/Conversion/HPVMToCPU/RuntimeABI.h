//===- RuntimeABI.h - The runtime constants the CPU lowering emits ---------===//
//
// The generated code calls the C runtime (runtime/include/hpvm/hpvm_rt.h) with
// enum and sentinel values. They come from that header, not from copies, and
// the dialect's enums that travel to the runtime unchanged are pinned to it
// here, so that a change on either side breaks the build instead of the ABI.
//
//===----------------------------------------------------------------------===//
#ifndef HPVM_CONVERSION_HPVMTOCPU_RUNTIMEABI_H
#define HPVM_CONVERSION_HPVMTOCPU_RUNTIMEABI_H

#include "HPVM/Dialect/HPVM/IR/HPVMOps.h"

#include "hpvm/hpvm_rt.h"

#include <cstdint>

namespace mlir::hpvm::cpu {

/// hpvm_rt_device_kind_t of the CPU versions the backend emits.
inline constexpr int32_t kDeviceCPU = HPVM_RT_DEVICE_CPU;
/// HPVM_RT_PIPELINE_HOST (UINT32_MAX) as the i32 the generated calls pass.
inline constexpr int32_t kPipelineHost = static_cast<int32_t>(HPVM_RT_PIPELINE_HOST);
/// hpvm_rt_access_t after a request: the host may read and write.
inline constexpr int32_t kAccessInOut = HPVM_RT_ACCESS_INOUT;

/// hpvm_rt_kernel_param_kind_t of the kernel parameters of node versions.
inline constexpr int32_t kParamValue = HPVM_RT_PARAM_VALUE;
inline constexpr int32_t kParamBuffer = HPVM_RT_PARAM_BUFFER;
inline constexpr int32_t kParamWorkgroup = HPVM_RT_PARAM_WORKGROUP;

// #hpvm.access values are hpvm_rt_access_t values (and the C API's
// MlirHPVMAccess): an access mode crosses every layer as the same number.
static_assert(static_cast<int>(Access::in) == HPVM_RT_ACCESS_IN);
static_assert(static_cast<int>(Access::out) == HPVM_RT_ACCESS_OUT);
static_assert(static_cast<int>(Access::inout) == HPVM_RT_ACCESS_INOUT);

} // namespace mlir::hpvm::cpu

#endif // HPVM_CONVERSION_HPVMTOCPU_RUNTIMEABI_H
